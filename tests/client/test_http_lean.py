"""The lean HTTP/1.1 client behind ``Client("http://…")`` (issue #35): the same wire as httpx,
HTTP/1.1 framing and decoding, cookies, redirects, idle connections the server closed, broken
answers failing one request only; httpx still serves environment proxies (and https).

The servers are raw asyncio servers on 127.0.0.1 that record the bytes of each request head and
answer with bytes written here, so that the framing under test is exactly what is sent.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from mcpio import Client, MCPError, Server
from mcpio._transports._http_client import HTTPClientTransport
from tests.client.support import arun

INIT = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "1"}}


def _ok(body: bytes, *extra: str, ctype: str = "application/json") -> bytes:
    head = ["HTTP/1.1 200 OK", f"content-type: {ctype}", f"content-length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def _answer(id_: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}).encode()


class RawServer:
    """An MCP server (legacy era) written in raw HTTP/1.1; ``answers[method]`` returns the
    bytes of the answer to a request (default: a JSON body); each request's head is recorded."""

    def __init__(self, answers: dict[str, Callable[[dict[str, Any]], bytes]] | None = None) -> None:
        self.answers = answers or {}
        self.heads: list[bytes] = []
        self.connections = 0
        self.close_after: set[str] = set()  # methods after whose answer the server closes the connection
        self.closed = asyncio.Event()
        self.log: list[tuple[int, str]] = []  # (connection number, JSON-RPC method or HTTP method)

    async def start(self) -> str:
        self._srv = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._srv.sockets[0].getsockname()[1]}/mcp"

    async def stop(self) -> None:
        self._srv.close()

    async def _handle(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        try:
            while True:
                try:
                    head = await r.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                self.heads.append(head)
                lines = head.decode().split("\r\n")
                method, path, _ = lines[0].split(" ")
                fields = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
                body = await r.readexactly(int(fields.get("content-length", "0")))
                out, rpc = self._respond(method, path, body)
                self.log.append((number, rpc))
                w.write(out)
                await w.drain()
                if rpc in self.close_after:
                    w.close()
                    await w.wait_closed()
                    self.closed.set()
                    return
        finally:
            w.close()

    def _respond(self, method: str, path: str, body: bytes) -> tuple[bytes, str]:
        if method == "GET":
            return b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n", "GET"
        if method == "DELETE":
            return b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", "DELETE"
        msg = json.loads(body)
        rpc = msg.get("method", "")
        if "id" not in msg:
            return b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n", rpc
        if rpc in self.answers:
            return self.answers[rpc](msg), rpc
        if rpc == "initialize":
            return _ok(_answer(msg["id"], INIT), "mcp-session-id: s1", "set-cookie: lb=node7; Path=/"), rpc
        if rpc == "tools/list":
            return _ok(_answer(msg["id"], {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]})), rpc
        return _ok(_answer(msg["id"], {"content": [{"type": "text", "text": "3"}]})), rpc


def _chunked_gzip(msg: dict[str, Any]) -> bytes:
    data = gzip.compress(_answer(msg["id"], {"content": [{"type": "text", "text": "zipped"}]}))
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(data[i : i + 7]), data[i : i + 7]) for i in range(0, len(data), 7))
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n"
    return head + chunks + b"0\r\n\r\n"


def _client(target: Any, **options: Any) -> Client:
    if isinstance(target, str):
        return Client(target, era="legacy", **options)
    return Client(transport=target, era="legacy")


async def _session(target: Any) -> list[str]:
    async with _client(target, headers={"X-Api-Key": "k"}) as c:
        first = await c.call_tool("add", {"a": 1, "b": 2})
        second = await c.call_tool("zip", {})
        return [first.content[0].text, second.content[0].text]


def test_request_heads_are_httpx_s_and_chunked_gzip_answers_and_cookies_work():
    """The same calls through the lean client and through httpx put the same bytes on the wire
    (the Cookie of the initialize answer sent back; a chunked gzip answer decoded)."""

    async def run(via_httpx: bool) -> tuple[list[str], list[bytes]]:
        srv = RawServer(
            {
                "tools/call": lambda m: (
                    _chunked_gzip(m)
                    if m["params"]["name"] == "zip"
                    else _ok(_answer(m["id"], {"content": [{"type": "text", "text": "3"}]}))
                )
            }
        )
        url = await srv.start()
        try:
            if via_httpx:
                http = httpx.AsyncClient(headers={"X-Api-Key": "k"}, follow_redirects=True)
                target: Any = HTTPClientTransport(url, client=http)
            else:
                target = url
            texts = await _session(target)
            if via_httpx:
                await http.aclose()
        finally:
            await srv.stop()
        port = url.split(":")[2].split("/")[0]
        return texts, [h.replace(port.encode(), b"PORT") for h in srv.heads]

    lean_texts, lean = arun(run(False), timeout=60)
    httpx_texts, reference = arun(run(True), timeout=60)
    assert lean_texts == httpx_texts == ["3", "zipped"]
    # (sorted: the standalone GET and the first call go on two connections, in either order)
    assert sorted(lean) == sorted(reference)
    assert any(b"\r\nCookie: lb=node7\r\n" in h for h in lean)
    assert b"User-Agent: python-httpx/" in lean[0] and b"Accept-Encoding: gzip, deflate\r\n" in lean[0]


def test_a_forwarded_call_puts_on_the_wire_the_head_of_a_direct_one():
    """A proxy forwards calls on kept-alive connections without a task, each head's fields
    encoded once (``send_nowait``): the bytes are those of the same call made directly (httpx's,
    the test above), with the Content-Length of each body."""

    async def go() -> tuple[list[bytes], list[bytes]]:
        srv = RawServer({"initialize": lambda m: _ok(_answer(m["id"], INIT), "mcp-session-id: s1")})  # no cookie
        url = await srv.start()
        try:
            async with _client(url, headers={"X-Api-Key": "k"}) as c:
                assert (await c.call_tool("add", {"a": 1})).content[0].text == "3"
            direct = [h for h, (_, rpc) in zip(srv.heads, srv.log, strict=True) if rpc == "tools/call"]
            del srv.heads[:], srv.log[:]
            proxy = Server.proxy(url, era="legacy", headers={"X-Api-Key": "k"})
            async with Client(proxy) as c:
                for args in ({"a": 1}, {"a": 1, "b": 22222}, {"a": 1}):
                    assert (await c.call_tool("add", args)).content[0].text == "3"
            return direct, [h for h, (_, rpc) in zip(srv.heads, srv.log, strict=True) if rpc == "tools/call"]
        finally:
            await srv.stop()

    direct, forwarded = arun(go(), timeout=60)
    assert len(direct) == 1 and len(forwarded) == 3
    assert forwarded[0] == forwarded[2] == direct[0] != forwarded[1]  # the same body, the same bytes
    assert forwarded[1].rsplit(b"\r\nContent-Length: ", 1)[0] == direct[0].rsplit(b"\r\nContent-Length: ", 1)[0]


def _imports_after_a_call(url: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one call in a fresh process; which HTTP machinery it loaded."""
    code = textwrap.dedent(
        f"""
        import asyncio, json, sys
        from mcpio import Client, MCPError, Server
        async def main():
            async with Client({url!r}, era="legacy") as c:
                text = (await c.call_tool("add", {{}})).content[0].text
            print(json.dumps({{"text": text, "h11": "h11" in sys.modules, "httpcore": "httpcore" in sys.modules}}))
        asyncio.run(main())
        """
    )
    clean = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={**clean, **(env or {})}
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_plain_http_url_takes_the_lean_path_and_an_environment_proxy_takes_httpx():
    async def go() -> None:
        srv = RawServer()
        proxy = RawServer()  # a forward proxy sees absolute-form request lines
        url = await srv.start()
        proxy_url = (await proxy.start()).removesuffix("/mcp")
        try:
            direct = await asyncio.to_thread(_imports_after_a_call, url)
            assert direct == {"text": "3", "h11": False, "httpcore": False}  # httpx's machinery never loaded
            assert proxy.heads == []
            via = await asyncio.to_thread(_imports_after_a_call, url, {"HTTP_PROXY": proxy_url})
            assert via["text"] == "3" and via["httpcore"] is True
            assert proxy.heads and proxy.heads[0].startswith(b"POST " + url.encode() + b" HTTP/1.1")
            seen = len(proxy.heads)
            bypass = await asyncio.to_thread(
                _imports_after_a_call, url, {"HTTP_PROXY": proxy_url, "NO_PROXY": "127.0.0.1"}
            )
            assert bypass == {"text": "3", "h11": False, "httpcore": False}
            assert len(proxy.heads) == seen
        finally:
            await srv.stop()
            await proxy.stop()

    arun(go(), timeout=120)


@pytest.mark.parametrize(("status", "method"), [(307, "POST"), (308, "POST"), (303, "GET")])
def test_redirects_keep_or_change_the_method_as_httpx_does(status, method):
    async def go() -> None:
        srv = RawServer()
        url = await srv.start()
        moved = url.replace("/mcp", "/moved")
        seen: list[bytes] = []
        plain = srv._respond
        last = {"id": None}

        def respond(m: str, path: str, body: bytes) -> tuple[bytes, str]:
            if path == "/mcp" and body and json.loads(body).get("method") == "tools/call":
                last["id"] = json.loads(body)["id"]
                return f"HTTP/1.1 {status} Moved\r\nlocation: /moved\r\ncontent-length: 0\r\n\r\n".encode(), "x"
            if path == "/moved":
                seen.append(m.encode() + b" " + body)
                answer = _answer(last["id"], {"content": [{"type": "text", "text": "moved"}]}) if m == "GET" else None
                if answer is not None:
                    return _ok(answer), "x"
            return plain(m, path, body)

        srv._respond = respond  # type: ignore[method-assign]
        try:
            async with Client(url, era="legacy") as c:
                if method == "POST":
                    assert (await c.call_tool("add", {})).content[0].text == "3"
                    assert seen and seen[0].startswith(b'POST {"')
                else:  # 303: a GET without the body, whose answer is the answer
                    assert (await c.call_tool("add", {})).content[0].text == "moved"
                    assert seen == [b"GET "]
            assert moved.endswith("/moved")
        finally:
            await srv.stop()

    arun(go(), timeout=60)


def test_a_kept_alive_connection_the_server_closed_is_not_reused():
    """The server closes the connection after each answer (its keep-alive timeout passed): the
    next call opens a new one instead of failing on the dead one."""

    async def go() -> None:
        srv = RawServer()
        srv.close_after = {"tools/call"}
        url = await srv.start()
        try:
            async with Client(url, era="legacy") as c:
                for _ in range(3):
                    srv.closed.clear()
                    assert (await c.call_tool("add", {})).content[0].text == "3"
                    await srv.closed.wait()  # closed: the next call must not take that connection
            assert srv.connections >= 3
        finally:
            await srv.stop()

    arun(go(), timeout=60)


def test_a_connection_closed_before_the_loop_saw_it_is_not_reused():
    """The server (another thread) closes the connection right after its answer, and the client's
    loop has had no turn to see the FIN when the next request is sent: the connection is taken
    as dropped from its readable socket, and the request goes out on a new one."""
    import socket
    import threading

    from mcpio._transports._http1_client import LeanClient

    listener = socket.create_server(("127.0.0.1", 0))
    closed = threading.Event()
    answered: list[int] = []

    def serve() -> None:
        for number in (1, 2):
            conn, _ = listener.accept()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(
                    next(h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
                )
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(_ok(b'{"jsonrpc":"2.0","id":1,"result":{}}'))
                answered.append(number)
            closed.set()  # closed (the with block), kept alive as far as the answer said

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"

    async def go() -> list[int]:
        client = LeanClient(timeout=5)
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        statuses = []
        try:
            for _ in range(2):
                resp = await client.send("POST", url, body, {"content-type": "application/json"})
                await resp.aread()
                statuses.append(resp.status_code)
                assert closed.wait(5)  # blocks the loop on purpose: it must not see the FIN first
                closed.clear()
        finally:
            await client.aclose()
        return statuses

    try:
        assert arun(go(), timeout=30) == [200, 200]
    finally:
        listener.close()
    thread.join(5)
    assert answered == [1, 2]


@pytest.mark.parametrize(
    ("broken", "says"),
    [
        (b"HTTX/1.1 200 OK\r\n\r\n", "illegal status line"),
        (
            b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc"',
            "peer closed connection",
        ),
        # a digit, but not ASCII (RFC 9110 §8.6: 1*DIGIT)
        ("HTTP/1.1 200 OK\r\ncontent-length: \u00b2\r\n\r\n{}".encode("latin-1"), "invalid Content-Length"),
    ],
)
def test_a_broken_answer_fails_that_request_only(broken, says):
    async def go() -> None:
        srv = RawServer(
            {
                "tools/call": lambda m: (
                    broken
                    if m["params"]["name"] == "bad"
                    else _ok(_answer(m["id"], {"content": [{"type": "text", "text": "3"}]}))
                )
            }
        )
        srv.close_after = {"tools/call"}  # a broken answer ends its connection
        url = await srv.start()
        try:
            async with Client(url, era="legacy") as c:
                with pytest.raises(Exception) as err:
                    await c.call_tool("bad", {})
                assert says in str(err.value)
                assert (await c.call_tool("add", {})).content[0].text == "3"
        finally:
            await srv.stop()

    arun(go(), timeout=60)


def test_an_answer_only_a_lenient_json_parser_reads_fails_its_request_at_once():
    """A body with NaN in it is not JSON to the session: the request gets an error answer at
    once (it was delivered, skipped as not JSON by the session, and waited for to the timeout)."""

    def nan(m: dict[str, Any]) -> bytes:
        return _ok(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[],"x":NaN}}' % json.dumps(m["id"]).encode())

    async def go() -> None:
        srv = RawServer({"tools/call": nan})
        url = await srv.start()
        try:
            async with Client(url, era="legacy", timeout=120) as c:
                with pytest.raises(MCPError, match="the server sent no answer to the request"):
                    await c.call_tool("add", {})
                assert (await c.list_tools())[0].name == "add"  # the connection serves on
        finally:
            await srv.stop()

    arun(go(), timeout=60)


def test_a_body_over_max_message_size_is_refused():
    async def go() -> None:
        big = _answer(2, {"content": [{"type": "text", "text": "x" * 5000}]})
        srv = RawServer({"tools/call": lambda m: _ok(big)})
        url = await srv.start()
        try:
            async with _client(HTTPClientTransport(url, max_message_size=2000)) as c:
                with pytest.raises(Exception) as err:
                    await c.call_tool("add", {})
                assert "max_message_size" in str(err.value)
        finally:
            await srv.stop()

    arun(go(), timeout=60)


def test_answered_streams_the_server_never_closes_are_drained_ten_at_a_time():
    """30 calls answered on SSE streams the server keeps open: the client reads on at most 10
    of them (for up to 1 s, to reuse their connections) and closes the other 20 at once, so
    they never hold connections new requests need."""
    delays: list[float] = []

    async def go() -> None:
        loop = asyncio.get_running_loop()

        def open_stream(msg: dict[str, Any]) -> bytes:
            event = b"data: " + _answer(msg["id"], {"content": [{"type": "text", "text": "hi"}]}) + b"\n\n"
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            return head + b"%x\r\n%s\r\n" % (len(event), event)

        srv = RawServer({"tools/call": open_stream})
        all_closed = asyncio.Event()

        async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            # like RawServer, but after an open stream: wait for the client to close it
            head = await r.readuntil(b"\r\n\r\n")
            length = int(
                next((x.split(b":")[1] for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")), b"0")
            )
            body = await r.readexactly(length)
            if b'"tools/call"' not in body:
                out, _ = srv._respond(head.split(b" ")[0].decode(), "/mcp", body)
                w.write(out)
                await w.drain()
                w.close()
                return
            w.write(open_stream(json.loads(body)))
            await w.drain()
            sent = loop.time()
            await r.read()  # until the client closes the stream
            delays.append(loop.time() - sent)
            if len(delays) == 30:
                all_closed.set()
            w.close()

        srv._handle = handle  # type: ignore[method-assign]
        url = await srv.start()
        try:
            async with Client(url, era="legacy") as c:
                results = await asyncio.gather(*(c.call_tool("add", {}) for _ in range(30)))
                assert all(r.content[0].text == "hi" for r in results)
                await all_closed.wait()
        finally:
            await srv.stop()

    arun(go(), timeout=60)
    assert sum(d < 0.5 for d in delays) >= 20, sorted(delays)  # without the cap: every one after 1 s


def test_an_unreachable_server_reads_as_with_httpx():
    from tests.support.http import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp"

    async def reason(target: Any) -> str:
        with pytest.raises(Exception) as err:
            async with _client(target):
                pass
        return str(err.value)

    async def go() -> None:
        lean = await reason(url)
        async with httpx.AsyncClient() as http:
            reference = await reason(HTTPClientTransport(url, client=http))
        assert lean == reference and f"cannot reach the MCP server at {url}: All connection attempts failed" in lean

    arun(go(), timeout=60)


def test_the_answer_to_a_reinitialize_is_read_to_its_end_and_its_connection_reused():
    """A legacy session ends (404); the client initializes again and the server answers on an
    SSE stream it then ends: the client reads that stream to its end, so the connection goes
    back to the pool and carries a later request (it used to stop at the answer and lose it)."""

    async def go() -> None:
        state = {"inits": 0, "calls": 0}

        def initialize(msg: dict[str, Any]) -> bytes:
            state["inits"] += 1
            if state["inits"] == 1:
                return _ok(_answer(msg["id"], INIT), "mcp-session-id: s1")
            event = b"data: " + _answer(msg["id"], INIT) + b"\n\n"
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s2\r\ntransfer-encoding: chunked\r\n\r\n"
            return head + b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event)

        def call(msg: dict[str, Any]) -> bytes:
            state["calls"] += 1
            if state["calls"] == 1:  # the session ended
                return b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
            return _ok(_answer(msg["id"], {"content": [{"type": "text", "text": "3"}]}))

        srv = RawServer({"initialize": initialize, "tools/call": call})
        url = await srv.start()
        try:
            async with Client(url, era="legacy") as c:
                assert (await c.call_tool("add", {})).content[0].text == "3"
                assert (await c.call_tool("add", {})).content[0].text == "3"
        finally:
            await srv.stop()
        inits = [n for n, rpc in srv.log if rpc == "initialize"]
        assert len(inits) == 2
        reinit = srv.log.index((inits[1], "initialize"))
        assert any(n == inits[1] for n, _ in srv.log[reinit + 1 :]), srv.log

    arun(go(), timeout=60)


def test_a_failed_authorization_gives_its_connection_back():
    """An auth flow that fails on a 401 (a login refused) must not keep that answer's connection:
    with one connection allowed, the next request would wait for the pool until its timeout."""
    from mcpio._transports._http1_client import LeanClient

    class Refused(httpx.HTTPError):
        pass

    class FailingAuth(httpx.Auth):
        async def async_auth_flow(self, request: httpx.Request) -> Any:
            response = yield request
            if response.status_code == 401:
                raise Refused("the login was refused")

    unauthorized = b"HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\ncontent-length: 2\r\n\r\n{}"
    server = RawServer({"tools/call": lambda msg: unauthorized})

    async def go() -> list[str]:
        url = await server.start()
        client = LeanClient(auth=FailingAuth(), max_connections=1, timeout=3)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}}).encode()
        errors = []
        try:
            for _ in range(2):
                with pytest.raises(httpx.HTTPError) as err:
                    await client.send("POST", url, body, {"content-type": "application/json"})
                errors.append(type(err.value).__name__)
        finally:
            await client.aclose()
            await server.stop()
        return errors

    assert arun(go(), timeout=30) == ["Refused", "Refused"]


def test_a_401_the_auth_flow_answers_keeps_its_connection():
    """A 401 the auth flow goes past (it sends the request again, authorized) is read to its end
    first, as httpx does: the authorized request goes out on the same connection."""
    from mcpio._transports._http1_client import LeanClient

    class RetryAuth(httpx.Auth):
        async def async_auth_flow(self, request: httpx.Request) -> Any:
            response = yield request
            if response.status_code == 401:
                request.headers["authorization"] = "Bearer fresh"
                yield request

    unauthorized = b"HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\ncontent-length: 2\r\n\r\n{}"
    server = RawServer()
    plain = server._respond

    def respond(method: str, path: str, body: bytes) -> tuple[bytes, str]:
        authorized = any(h.lower().startswith(b"authorization: bearer fresh") for h in server.heads[-1].split(b"\r\n"))
        return (unauthorized, "401") if not authorized else plain(method, path, body)

    server._respond = respond  # type: ignore[method-assign]

    async def go() -> tuple[list[int], int]:
        url = await server.start()
        client = LeanClient(auth=RetryAuth(), timeout=3)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}}).encode()
        statuses = []
        try:
            for _ in range(2):
                resp = await client.send("POST", url, body, {"content-type": "application/json"})
                await resp.aread()
                statuses.append(resp.status_code)
        finally:
            await client.aclose()
            await server.stop()
        return statuses, server.connections

    assert arun(go(), timeout=30) == ([200, 200], 1)


def test_a_call_given_up_while_its_redirect_is_followed_closes_the_redirected_request():
    """A call whose POST (sent at once, on a kept-alive connection) was redirected (307), then
    given up while the redirected POST waits for its answer: that POST's connection is closed
    then, not left waiting for the client's end."""

    class Watched(RawServer):
        ended: set[int]

        async def _handle(self, r: Any, w: Any) -> None:
            number = self.connections + 1  # (super() counts it before its first await)
            try:
                await super()._handle(r, w)
            finally:
                self.ended.add(number)
                self.closed.set()

    async def go() -> None:
        srv = Watched()
        srv.ended = set()
        plain = srv._respond

        def respond(m: str, path: str, body: bytes) -> tuple[bytes, str]:
            if path == "/mcp" and body and json.loads(body).get("params", {}).get("name") == "moving":
                return b"HTTP/1.1 307 Moved\r\nlocation: /moved\r\ncontent-length: 0\r\n\r\n", "tools/call"
            if path == "/moved":
                return b"", "moved"  # no answer, ever
            return plain(m, path, body)

        srv._respond = respond  # type: ignore[method-assign]
        url = await srv.start()
        try:
            async with Client(url, era="legacy") as c:
                assert (await c.call_tool("add", {})).content[0].text == "3"  # a connection kept alive
                with pytest.raises(MCPError):
                    await c.request("tools/call", {"name": "moving", "arguments": {}}, timeout=0.5)
                held = next(n for n, rpc in srv.log if rpc == "moved")
                while held not in srv.ended:
                    srv.closed.clear()
                    await asyncio.wait_for(srv.closed.wait(), 10)
        finally:
            await srv.stop()

    arun(go(), timeout=60)
