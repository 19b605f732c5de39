"""How the app reads a POST's body (``_http_server_streams.body_part``/``read_body``): whole in
its first ASGI message (a plain call, issue 17) or in several, with the same limits either way —
``max_body_size`` over the bytes received and over a declared ``Content-Length`` (413), and a
client that goes away mid-body (no answer)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpio import Server

from .test_http_cost import BOTH, HOST, MODERN_META, scope

MODERN = [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"), (b"mcp-name", b"add")]
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 40}, "_meta": MODERN_META},
    }
).encode()


def post(
    messages: list[dict[str, Any]], limit: int, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> list[dict[str, Any]]:
    """What the app sends for a POST whose body arrives as ``messages`` (then a disconnect)."""
    server = Server("body")

    @server.tool(inline=True)
    def add(a: int, b: int) -> int:
        return a + b

    app = server.http_app("/mcp", max_body_size=limit)
    queue = list(messages)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if queue:
            return queue.pop(0)
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def go() -> None:
        try:
            await asyncio.wait_for(app(scope(HOST + BOTH + MODERN + list(extra)), receive, send), 10)
        finally:
            await app.aclose()

    asyncio.run(go())
    return sent


def chunks(body: bytes, *sizes: int) -> list[dict[str, Any]]:
    out, at = [], 0
    for size in sizes:
        out.append({"type": "http.request", "body": body[at : at + size], "more_body": True})
        at += size
    out.append({"type": "http.request", "body": body[at:], "more_body": False})
    return out


def answer(sent: list[dict[str, Any]]) -> tuple[int, Any]:
    return sent[0]["status"], json.loads(b"".join(m.get("body", b"") for m in sent[1:]))


@pytest.mark.parametrize("split", [(), (10,), (1, 50, 7)], ids=["whole", "two", "four"])
def test_a_body_in_one_message_or_several_is_the_same_request(split: tuple[int, ...]) -> None:
    status, doc = answer(post(chunks(BODY, *split), limit=len(BODY)))
    assert status == 200 and doc["id"] == 3 and doc["result"]["structuredContent"] == {"result": 42}


@pytest.mark.parametrize("split", [(), (10,), (1, 50, 7)], ids=["whole", "two", "four"])
def test_a_body_over_the_limit_is_413_however_it_arrives(split: tuple[int, ...]) -> None:
    status, doc = answer(post(chunks(BODY, *split), limit=len(BODY) - 1))
    assert status == 413 and doc["id"] is None and "limit of" in doc["error"]["message"]


def test_a_declared_length_over_the_limit_is_413_before_the_bytes() -> None:
    # The rest of the body is not read: the first message (more to come) and a disconnect after
    # it are all the client sends, and it is refused all the same.
    declared = ((b"content-length", str(len(BODY) + 1).encode()),)
    status, _ = answer(post(chunks(BODY, 10)[:1], limit=len(BODY), extra=declared))
    assert status == 413
    status, _ = answer(post(chunks(BODY, 10), limit=len(BODY) + 1, extra=declared))
    assert status == 200
    # A body that came whole is judged by its bytes (the server framed it by Content-Length).
    status, _ = answer(post(chunks(BODY), limit=len(BODY), extra=declared))
    assert status == 200


@pytest.mark.parametrize("first", [True, False], ids=["at-once", "mid-body"])
def test_a_client_gone_before_the_body_ends_gets_no_answer(first: bool) -> None:
    gone = {"type": "http.disconnect"}
    messages = [gone] if first else [chunks(BODY, 10)[0], gone]
    assert post(messages, limit=len(BODY)) == []
