"""MCPIO_TRACE on the Streamable HTTP server: every session's messages, both eras, in one trace."""

from __future__ import annotations

import asyncio

from mcpio import Client
from tests.client.test_modern_client import _load
from tests.conftest import EXAMPLES
from tests.support.http import ServerThread


def test_mcpio_trace_covers_http_sessions(tmp_path, monkeypatch):
    trace = tmp_path / "server-wire.log"
    monkeypatch.setenv("MCPIO_TRACE", str(trace))

    async def go(url: str) -> None:
        for era in ("legacy", "modern"):
            async with Client(url, era=era) as c:
                await c.call_tool("build_report", {"topic": "t", "pages": 1}) if era == "legacy" else await c.list_tools()

    with ServerThread(_load(EXAMPLES / "tasks.py").http_app()) as srv:
        asyncio.run(go(srv.url))
    text = trace.read_text()
    assert ' in {"jsonrpc":"2.0","id":1,"method":"initialize"' in text  # what the server received
    assert ' out {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"' in text
    assert '"method":"tools/list"' in text and '"io.modelcontextprotocol/protocolVersion":"2026-07-28"' in text
