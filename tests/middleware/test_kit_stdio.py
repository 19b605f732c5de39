"""The middleware kit over stdio: a real ``mcpio run`` subprocess per test, both eras. Over
stdio the caller is the one connection (no auth, no address)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from mcpio import Client, MCPError
from mcpio.middleware import RATE_LIMITED

KIT = str(Path(__file__).with_name("kit_server.py"))
ERAS = ["legacy", "modern"]


def kit_client(era: str, stderr: list[str] | None = None, **env: str) -> Client:
    return Client(
        [sys.executable, "-m", "mcpio", "run", KIT],
        era=era,
        env={**os.environ, **env},
        on_stderr=stderr.append if stderr is not None else None,
        timeout=30,
    )


def text(result: dict) -> str:
    return result["content"][0]["text"]


def log_lines(stderr: list[str]) -> list[dict]:
    return [json.loads(line) for line in stderr if line.startswith('{"event":"mcp.request"')]


@pytest.mark.parametrize("era", ERAS)
def test_rate_limit_refuses_past_the_burst_with_a_json_rpc_error_saying_when_to_retry(era):
    async def main():
        async with kit_client(era, KIT_RATE="1/minute", KIT_BURST="3") as c:
            answers = [text(await c.call_tool("echo", {"text": str(i)})) for i in range(3)]
            with pytest.raises(MCPError) as refused:
                await c.call_tool("echo", {"text": "one too many"})
            tools = await c.list_tools()  # methods=["tools/call"]: the rest is not limited
            return answers, refused.value, tools

    answers, refused, tools = asyncio.run(main())
    assert answers == ["0", "1", "2"]
    assert refused.code == RATE_LIMITED == -31429
    assert 55 < refused.data["retryAfter"] <= 60  # one token a minute: about a minute from now
    assert refused.message.startswith("Rate limit exceeded: this caller sent more than 3 requests at once")
    assert "retry in" in refused.message
    assert {t["name"] for t in tools} >= {"echo", "counter"}


@pytest.mark.parametrize("era", ERAS)
def test_cache_serves_read_only_tools_and_reads_until_the_server_changes(era):
    async def main():
        async with kit_client(era) as c:
            first, again = text(await c.call_tool("counter", {})), text(await c.call_tool("counter", {}))
            echo = [text(await c.call_tool("echo", {"text": "x"})) for _ in range(2)]
            public = [(await c.read_resource("memo://public"))[0]["text"] for _ in range(2)]
            fresh = [(await c.read_resource("memo://fresh"))[0]["text"] for _ in range(2)]
            before = {t["name"] for t in await c.list_tools()}
            await c.call_tool("grow", {"name": "sprout"})  # tools/list_changed: cached tool answers dropped
            after = {t["name"] for t in await c.list_tools()}
            recount = text(await c.call_tool("counter", {}))
            await c.call_tool("touch", {"uri": "memo://public"})  # resources/updated: that read dropped
            reread = (await c.read_resource("memo://public"))[0]["text"]
            return first, again, echo, public, fresh, before, after, recount, reread

    first, again, echo, public, fresh, before, after, recount, reread = asyncio.run(main())
    assert first == again == "1"  # computed once
    assert echo == ["x", "x"]
    assert public == ["public #2", "public #2"]
    assert fresh == ["fresh #3", "fresh #4"]  # ttl_ms=0: the server says stale at once, never kept
    assert "sprout" not in before and "sprout" in after
    assert recount == "5"
    assert reread == "public #6"


@pytest.mark.parametrize("era", ERAS)
def test_timing_in_meta_and_one_json_log_line_per_request(era):
    stderr: list[str] = []

    async def main():
        async with kit_client(era, stderr) as c:
            result = await c.call_tool(
                "echo", {"text": "hello", "api_key": "sk-live-SECRET-0123456789", "key": "SECRET-k", "sig": "SECRET-s"}
            )
            with pytest.raises(MCPError):
                await c.call_tool("nope", {})
            return result

    result = asyncio.run(main())
    took = result["_meta"]["io.mcpio/durationMs"]
    assert isinstance(took, float) and 0 <= took < 10_000
    lines = log_lines(stderr)
    calls = [line for line in lines if line["method"] == "tools/call"]
    assert [(line["name"], line["outcome"]) for line in calls] == [("echo", "ok"), ("nope", "error")]
    assert calls[0]["arguments"] == {"text": "hello", "api_key": "[redacted]", "key": "[redacted]", "sig": "[redacted]"}
    assert calls[1]["errorCode"] == -32602
    assert all(isinstance(line["durationMs"], float) for line in lines)
    assert "SECRET" not in "\n".join(stderr)
