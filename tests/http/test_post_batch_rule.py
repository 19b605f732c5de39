"""One rule says what a batch is (``_http_checks.read_post``): a JSON array, even of one message.
A 2026-07-28 POST carrying one is refused as a batch; the same request as an object is served."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpio import Server

from .test_http_cost import Client, scope

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"add"),
]


def _server() -> Server:
    server = Server("batch")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    return server


async def _post(app: Any, body: Any) -> tuple[int, Any]:
    c = Client(body)
    await app(scope(HEADERS), c.receive, c.send)
    return c.status(), c.json()


def test_a_modern_array_of_one_request_is_a_batch_and_refused() -> None:
    params = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": META}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}

    async def go() -> None:
        app = _server().http_app()
        status, body = await _post(app, call)
        assert status == 200 and body["result"]["structuredContent"] == {"result": 3}, body
        status, body = await _post(app, [call])
        assert status == 400 and "batches are not part of protocol 2026-07-28" in body["error"]["message"], body
        await app.aclose()

    asyncio.run(go())
