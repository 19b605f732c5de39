"""The HTTP floor: a hand-written ASGI app that answers the benchmark's Streamable HTTP requests
with the least work that still answers them right, and no MCP library.

It is what ``benchmarks/http_load.py`` divides mcpio's figures by (served by
``benchmarks/http_server.py floor`` under the same uvicorn settings as every framework): the
cost of uvicorn, HTTP/1.1 and the JSON codec (msgspec, the fastest we have measured) for the
same requests. It implements only what the load sends:

* legacy: ``initialize`` mints a session id (kept in a set) and answers a fixed
  InitializeResult; ``notifications/initialized`` gets 202; a request must carry a known
  ``Mcp-Session-Id`` (404 otherwise); ``DELETE`` forgets the session;
* modern (``MCP-Protocol-Version: 2026-07-28``): each POST is answered alone, no session; a
  result carries what that era's schema requires of it, as mcpio's does: ``resultType`` (and
  ``ttlMs``/``cacheScope`` on tools/list) and ``_meta`` serverInfo (a SHOULD): the same answer
  bytes, so the same work for the codec and the server (before 2026-11-24 it answered the legacy
  shape, ~120 bytes shorter and invalid against the 2026-07-28 schema);
* ``tools/call`` of ``add`` (``a + b``, as text and ``structuredContent``, like the SDKs) and
  ``echo``; ``tools/list`` a fixed list; anything else -32601.

Answers are ``application/json``. No Origin/Host validation, no size caps, no schema checks:
a floor, not a server to deploy.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

SESSIONS: set[bytes] = set()
_encode = msgspec.json.encode
_decode = msgspec.json.decode
_JSON = [(b"content-type", b"application/json")]
_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "floor", "version": "1.0.0"},
}
_TOOLS = {
    "tools": [
        {
            "name": "add",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
        {
            "name": "echo",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        },
    ]
}

_META = {"io.modelcontextprotocol/serverInfo": {"name": "floor", "version": "1.0.0"}}
_TOOLS_MODERN = {**_TOOLS, "resultType": "complete", "ttlMs": 0, "cacheScope": "private", "_meta": _META}


async def _answer(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [*_JSON, (b"content-length", str(len(body)).encode())]
    if extra:
        headers += extra
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    headers = dict(scope["headers"])
    sid = headers.get(b"mcp-session-id")
    if scope["method"] == "DELETE":
        SESSIONS.discard(sid or b"")
        await _answer(send, 200, b"")
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    msg = _decode(body)
    method = msg.get("method")
    if method == "initialize":
        new = os.urandom(16).hex().encode()
        SESSIONS.add(new)
        await _answer(
            send, 200, _encode({"jsonrpc": "2.0", "id": msg["id"], "result": _INIT}), [(b"mcp-session-id", new)]
        )
        return
    if "id" not in msg:
        await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    modern = headers.get(b"mcp-protocol-version") == b"2026-07-28"
    if not modern and sid not in SESSIONS:
        await _answer(
            send,
            404,
            _encode({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32600, "message": "Session not found"}}),
        )
        return
    if method == "tools/call":
        params = msg["params"]
        args = params.get("arguments") or {}
        if params["name"] == "add":
            value = args["a"] + args["b"]
            result: Any = {"content": [{"type": "text", "text": str(value)}], "structuredContent": {"result": value}}
        else:
            text = args.get("text", "")
            result = {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}}
        if modern:
            result["resultType"] = "complete"
            result["_meta"] = _META
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
    elif method == "tools/list":
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": _TOOLS_MODERN if modern else _TOOLS}
    else:
        out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
    await _answer(send, 200, _encode(out))
