"""Interop: the official ``mcp`` Python SDK client (Streamable HTTP) against an mcpio HTTP server,
in its ``legacy`` mode (initialize, a session, SSE) and its default ``auto`` mode (it probes
``server/discover`` and, mcpio being dual-era, talks 2026-07-28 statelessly)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client, types

from tests.http.app import make_server
from tests.support.http import ServerThread


@pytest.fixture(scope="module")
def url():
    server = make_server()
    with ServerThread(server.http_app()) as srv:
        yield srv.url


async def _sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="bonjour"),
        model="test-model",
        stop_reason="endTurn",
    )


def _run(url: str, mode: str, body: Any) -> Any:
    async def main() -> Any:
        async with asyncio.timeout(30):
            async with Client(url, mode=mode, sampling_callback=_sampling) as client:
                return await body(client)

    return asyncio.run(main())


@pytest.mark.parametrize("mode,version", [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_sdk_client_lists_calls_and_reads(url, mode, version):
    async def body(client: Client) -> dict[str, Any]:
        return {
            "version": client.protocol_version,
            "tools": [t.name for t in (await client.list_tools()).tools],
            "add": await client.call_tool("add", {"a": 20, "b": 22}),
            "progress": await client.call_tool("progress", {"steps": 3}),
            "doc": await client.read_resource("test://doc"),
        }

    out = _run(url, mode, body)
    assert out["version"] == version
    assert {"add", "progress", "slow", "ask_llm"} <= set(out["tools"])
    assert out["add"].structured_content == {"result": 42}
    assert out["progress"].content[0].text == "done"
    assert out["doc"].contents[0].text == "a document"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_sdk_client_answers_sampling(url, mode):
    """legacy: a sampling/createMessage request on the call's SSE stream; auto (2026-07-28): an
    input_required round trip. The same tool code serves both."""

    async def body(client: Client) -> Any:
        return await client.call_tool("ask_llm", {"prompt": "hello?"})

    result = _run(url, mode, body)
    assert result.is_error is False, result
    assert result.content[0].text == "LLM said: bonjour"
