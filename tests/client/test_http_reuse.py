"""The HTTP client reuses its connections after answers that came on SSE streams.

A legacy server answers a tool that awaits on a request-scoped SSE stream, and closes it after
the answer (Streamable HTTP: the server SHOULD). The client used to stop reading at the answer
and leave the stream unread, so httpx closed the connection: one new connection per call (417
for 600 calls through the stdio bridge, issue #35). It now reads the stream to its end, for at
most a short bound, so that a server that never closes its stream costs one connection and
never stalls the call or the calls after it (docs/guides/http.md).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

from mcpio import Client, Context, Server
from tests.client.support import arun
from tests.support.http import ServerThread

CALLS = 50


def test_sequential_calls_answered_on_sse_reuse_their_connection():
    server = Server("reuse")
    ports: set[int] = set()
    streams = {"sse": 0}

    @server.tool
    async def add(a: int, b: int, ctx: Context) -> int:
        await asyncio.sleep(0.01)  # an awaiting tool, answered on an SSE stream (sse_after=0)
        assert ctx.http is not None and ctx.http.client is not None
        ports.add(ctx.http.client[1])
        return a + b

    app = server.http_app(sse_after=0.0)  # as servers that always stream (the official SDKs)

    async def counting(scope, receive, send):  # counts the SSE answers, to know what is tested
        async def sending(message):
            if message["type"] == "http.response.start" and (b"content-type", b"text/event-stream") in [
                (k.lower(), v.split(b";")[0]) for k, v in message.get("headers", [])
            ]:
                streams["sse"] += 1
            await send(message)

        await app(scope, receive, sending)

    async def go():
        with ServerThread(counting) as srv:
            async with Client(srv.url, era="legacy") as c:
                for i in range(CALLS):
                    assert (await c.call_tool("add", {"a": i, "b": 2})).data == i + 2

    arun(go(), timeout=120)
    assert streams["sse"] >= CALLS  # every answer came on an SSE stream
    assert len(ports) <= 3, f"{CALLS} calls took {len(ports)} connections"  # without reuse: ~CALLS


def _never_closing_server(closed: threading.Semaphore):
    """A legacy Streamable HTTP server whose tools/call answer comes on an SSE stream that it
    never closes (it holds it until the client goes); ``closed`` is released each time the
    client closes such a stream."""

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        if scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 405, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        msg = json.loads(body)
        if "id" not in msg:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if msg["method"] == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "never-closes", "version": "1"},
            }
        elif msg["method"] == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif msg["method"] == "tools/call":
            answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": "hi"}]}}
            headers = [(b"content-type", b"text/event-stream"), (b"mcp-session-id", b"s1")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            event = b"data: " + json.dumps(answer).encode() + b"\n\n"
            await send({"type": "http.response.body", "body": event, "more_body": True})
            while (await receive())["type"] != "http.disconnect":  # the stream stays open
                pass
            closed.release()
            return
        else:
            result = {}
        answer = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    return app


def test_a_server_that_never_closes_its_stream_does_not_stall_the_client():
    closed = threading.Semaphore(0)

    async def go():
        with ServerThread(_never_closing_server(closed)) as srv:
            async with Client(srv.url, era="legacy", timeout=10) as c:
                for _ in range(3):
                    started = time.monotonic()
                    result = await c.call_tool("echo", {})
                    assert result.content[0].text == "hi"
                    assert time.monotonic() - started < 1.0  # answered at once, not after the bound
                # the client closes each stream it was left with once the bound passes
                for _ in range(3):
                    assert await asyncio.to_thread(closed.acquire, True, 20)

    arun(go(), timeout=60)
