"""MCPIO_TRACE on the Streamable HTTP server: every session's messages, both eras, in one trace."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx

from mcpio import Client, Context, Server
from tests.client.test_modern_client import _load
from tests.conftest import EXAMPLES
from tests.support.http import ServerThread


def test_mcpio_trace_covers_http_sessions(tmp_path, monkeypatch):
    trace = tmp_path / "server-wire.log"
    monkeypatch.setenv("MCPIO_TRACE", str(trace))

    async def go(url: str) -> None:
        for era in ("legacy", "modern"):
            async with Client(url, era=era) as c:
                await c.call_tool(
                    "build_report", {"topic": "t", "pages": 1}
                ) if era == "legacy" else await c.list_tools()

    with ServerThread(_load(EXAMPLES / "tasks.py").http_app()) as srv:
        asyncio.run(go(srv.url))
    text = trace.read_text()
    assert ' in {"jsonrpc":"2.0","id":1,"method":"initialize"' in text  # what the server received
    assert ' out {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"' in text
    assert '"method":"tools/list"' in text and '"io.modelcontextprotocol/protocolVersion":"2026-07-28"' in text


def test_with_mcpio_trace_a_requests_messages_stay_on_its_own_stream(tmp_path, monkeypatch):
    """Issue 14 "fix on the way": the trace wrapper must not change routing. Progress, a log
    message and an elicitation of a call arrive on that call's POST stream, while a GET stream
    is open and receives none of them."""
    monkeypatch.setenv("MCPIO_TRACE", str(tmp_path / "trace.log"))
    server = Server("routing", version="1")

    @server.tool
    async def work(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "half")
        await ctx.info("halfway")
        answer = await ctx.elicit("go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return f"answer: {answer.get('action')}"

    version = "2025-06-18"
    accept = "application/json, text/event-stream"
    # keepalive > the read timeout: a message routed elsewhere fails the read instead of hanging
    with ServerThread(server.http_app(sse_after=0.05, keepalive=60)) as srv, httpx.Client(timeout=10) as c:
        r = c.post(
            srv.url,
            headers={"accept": accept},
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {"elicitation": {}},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
        )
        headers = {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": version}
        c.post(
            srv.url,
            headers={**headers, "accept": accept},
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        )
        on_get: list[str] = []
        get_open = threading.Event()

        def read_get() -> None:
            with (
                httpx.Client(timeout=20) as g,
                g.stream("GET", srv.url, headers={**headers, "accept": "text/event-stream"}) as resp,
            ):
                get_open.set()
                for line in resp.iter_lines():
                    if line.startswith("data:"):
                        on_get.append(line)

        reader = threading.Thread(target=read_get, daemon=True)
        reader.start()
        assert get_open.wait(10)
        seen: list[dict] = []
        with c.stream(
            "POST",
            srv.url,
            headers={**headers, "accept": accept},
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "work", "arguments": {}, "_meta": {"progressToken": "p"}},
            },
        ) as resp:
            for line in resp.iter_lines():
                if not line.startswith("data:") or not line[5:].strip():
                    continue
                msg = json.loads(line[5:])
                seen.append(msg)
                if msg.get("method") == "elicitation/create":
                    ok = c.post(
                        srv.url,
                        headers={**headers, "accept": accept},
                        json={
                            "jsonrpc": "2.0",
                            "id": msg["id"],
                            "result": {"action": "accept", "content": {"ok": True}},
                        },
                    )
                    assert ok.status_code == 202
        assert [m.get("method") for m in seen] == [
            "notifications/progress",
            "notifications/message",
            "elicitation/create",
            None,
        ]
        assert seen[-1]["result"]["content"][0]["text"] == "answer: accept"
        assert on_get == []
        c.delete(srv.url, headers=headers)
        reader.join(10)
    assert '"method":"notifications/progress"' in (tmp_path / "trace.log").read_text()
