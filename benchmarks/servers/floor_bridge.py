"""The floor of a bridge between stdio and Streamable HTTP in Python: what any bridge written with
asyncio costs a call at the least. ``benchmarks/proxy_bench.py`` measures both directions beside
``mcpio run URL`` and ``mcpio run "COMMAND" -t http``, so that their throughput, and the peers',
can be read against what a hop that does nothing but copy bodies reaches on the same machine.

    floor_bridge.py to-http HOST PORT PATH   # stdio in, each line POSTed to http://HOST:PORT/PATH
    floor_bridge.py from-http PORT COMMAND...  # HTTP in at 127.0.0.1:PORT, COMMAND's stdio out

No MCP beyond what moving bytes needs, and no validation: ``to-http`` POSTs each stdin line over
one of 8 kept-alive connections and writes each response's body (a JSON document, or the
``data:`` lines of an SSE one; Content-Length framing only) as a line, adding the session id and
protocol version headers once ``initialize`` answered with a session id. ``from-http`` writes each
POSTed body to COMMAND as a line and answers it with the line whose ``"id"`` matches (the one
``json.loads`` per message a hop needs to route answers), 202 for a notification; other methods
get 405. One client only."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import deque
from collections.abc import Iterator

ACCEPT = b"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"


def content_length(head: bytes) -> int:
    lower = head.lower()
    at = lower.find(b"content-length:")
    if at < 0:
        return 0
    end = lower.find(b"\r\n", at)
    return int(lower[at + 15 : end if end >= 0 else None])


class Messages:
    """A connection's bytes received (``buf``), cut into HTTP messages (Content-Length framing)."""

    buf = b""

    def messages(self) -> Iterator[tuple[bytes, bytes]]:
        """Each whole message in ``buf`` (its head and body), taken out of it."""
        while (end := self.buf.find(b"\r\n\r\n")) >= 0:
            size = end + 4 + content_length(self.buf[:end])
            if len(self.buf) < size:
                return
            head, body, self.buf = self.buf[:end], self.buf[end + 4 : size], self.buf[size:]
            yield head, body


def header(head: bytes, name: bytes) -> bytes | None:
    lower = head.lower()
    at = lower.find(b"\r\n" + name + b":")
    if at < 0:
        return None
    end = lower.find(b"\r\n", at + 2)
    return head[at + 3 + len(name) : end if end >= 0 else None].strip()


async def to_http(host: str, port: int, path: str) -> None:
    loop = asyncio.get_running_loop()
    stdout, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)
    waiting: deque[bytes] = deque()  # lines no connection is free for yet
    idle: list[Conn] = []
    start = b"POST %s HTTP/1.1\r\nHost: %s:%d\r\n%s" % (path.encode(), host.encode(), port, ACCEPT)
    session = [b""]  # the session's headers, once initialize answered with an id

    class Conn(Messages, asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport: asyncio.Transport = transport  # type: ignore[assignment]

        def post(self, line: bytes) -> None:
            self.transport.write(b"%s%sContent-Length: %d\r\n\r\n%s" % (start, session[0], len(line), line))

        def data_received(self, data: bytes) -> None:
            self.buf += data
            for head, body in self.messages():
                sid = header(head, b"mcp-session-id")
                if sid and not session[0]:
                    session[0] = b"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n" % sid
                if body.startswith(b"{"):
                    stdout.write(body + b"\n")
                else:
                    stdout.write(
                        b"".join(ln[5:].strip() + b"\n" for ln in body.split(b"\n") if ln.startswith(b"data:"))
                    )
                if waiting:
                    self.post(waiting.popleft())
                else:
                    idle.append(self)

    for _ in range(8):
        idle.append((await loop.create_connection(Conn, host, port))[1])
    done: asyncio.Future[None] = loop.create_future()

    class Down(asyncio.Protocol):
        buf = b""

        def data_received(self, data: bytes) -> None:
            *lines, self.buf = (self.buf + data).split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                if idle:
                    idle.pop().post(line)
                else:
                    waiting.append(line)

        def eof_received(self) -> None:
            done.set_result(None)

    await loop.connect_read_pipe(Down, sys.stdin.buffer)
    await done


async def from_http(port: int, argv: list[str]) -> None:
    loop = asyncio.get_running_loop()
    answer_to: dict[object, Conn] = {}  # request id -> the connection that POSTed it

    class Up(asyncio.SubprocessProtocol):
        buf = b""

        def pipe_data_received(self, fd: int, data: bytes) -> None:
            if fd != 1:
                return
            *lines, self.buf = (self.buf + data).split(b"\n")
            for line in lines:
                conn = answer_to.pop(json.loads(line).get("id"), None)
                if conn is not None:
                    conn.reply(b"200 OK", b"Content-Type: application/json\r\n", line)

    child, _ = await loop.subprocess_exec(Up, *argv, stderr=None)
    child_stdin = child.get_pipe_transport(0)
    assert isinstance(child_stdin, asyncio.WriteTransport)

    class Conn(Messages, asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport: asyncio.Transport = transport  # type: ignore[assignment]

        def reply(self, status: bytes, head: bytes, body: bytes) -> None:
            self.transport.write(b"HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n%s" % (status, head, len(body), body))

        def data_received(self, data: bytes) -> None:
            self.buf += data
            for head, body in self.messages():
                if not head.startswith(b"POST "):
                    self.reply(b"405 Method Not Allowed", b"", b"")
                    continue
                msg = json.loads(body)
                if "id" in msg:
                    answer_to[msg["id"]] = self
                else:
                    self.reply(b"202 Accepted", b"", b"")
                child_stdin.write(body + b"\n")

    server = await loop.create_server(Conn, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "to-http":
        asyncio.run(to_http(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
    else:
        asyncio.run(from_http(int(sys.argv[2]), sys.argv[3:]))
