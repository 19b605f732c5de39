"""A hostile Streamable HTTP server (issue 12, break 5): raw asyncio on 127.0.0.1, no framework.

    python tests/faults/hostile_http_server.py --port N --mode MODE [--mib N]

It answers ``initialize`` (JSON, with a session id), notifications (202), GET (405) and DELETE
(200) like a real server; every other request gets the hostile answer of ``--mode``:

* ``sse-flood``: an SSE stream of ``--mib`` MiB in one ``data:`` line that never ends;
* ``json-flood``: a JSON body of ``--mib`` MiB without Content-Length (ends when the client
  stops reading);
* ``json-declared``: ``Content-Length`` 600 MiB, then a few bytes and silence;
* ``trickle``: an SSE stream of ``--mib`` MiB without a newline, then one byte every 50 ms.

It prints ``sent N`` to stderr when a hostile answer stops (the client hung up).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

CHUNK = b"x" * 65536


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, mode: str, mib: int) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method = lines[0].split(" ")[0]
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
            body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
            if method == "GET":
                writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nallow: POST\r\n\r\n")
                continue
            if method == "DELETE":
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                continue
            msg = json.loads(body)
            if "id" not in msg or "method" not in msg:
                writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
                continue
            if msg["method"] == "initialize":
                answer = json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": msg["id"],
                        "result": {
                            "protocolVersion": msg["params"]["protocolVersion"],
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "hostile", "version": "1"},
                        },
                    }
                ).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: hostile-1\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(answer), answer)
                )
                await writer.drain()
                continue
            await hostile(writer, mode, mib)
            return
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def hostile(writer: asyncio.StreamWriter, mode: str, mib: int) -> None:
    sent = 0
    try:
        if mode == "json-declared":
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n{"
                % (600 * 1024 * 1024)
            )
            await writer.drain()
            await asyncio.sleep(3600)
        ctype = b"application/json" if mode == "json-flood" else b"text/event-stream"
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: " + ctype + b"\r\nconnection: close\r\n\r\n")
        writer.write(b'{"jsonrpc":"2.0","id":1,"result":{"x":"' if mode == "json-flood" else b"data: ")
        for _ in range(mib * 16):
            writer.write(CHUNK)
            sent += len(CHUNK)
            await writer.drain()
        while mode == "trickle":
            writer.write(b"x")
            sent += 1
            await writer.drain()
            await asyncio.sleep(0.05)
        await asyncio.sleep(3600)
    except ConnectionError:
        pass
    finally:
        print(f"sent {sent}", file=sys.stderr, flush=True)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--mode", required=True, choices=["sse-flood", "json-flood", "json-declared", "trickle"])
    ap.add_argument("--mib", type=int, default=64)
    a = ap.parse_args()
    server = await asyncio.start_server(lambda r, w: handle(r, w, a.mode, a.mib), "127.0.0.1", a.port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
