"""Heartbeat progress: a long tool call tells the client it is still working (so a client that
resets its timeout on progress keeps waiting), until the tool reports progress of its own."""

from __future__ import annotations

import asyncio
import threading

import pytest

from mcpio import Context, Server
from tests.server.peer import Peer, arun, within


def test_a_long_sync_tool_sends_heartbeats_until_it_ends():
    server = Server("hb", heartbeat=0.05)
    release = threading.Event()

    @server.tool
    def slow() -> str:
        release.wait(10)
        return "finished"

    async def go():
        async with Peer(server) as peer:
            id_, fut = await peer.start(
                "tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": "t"}}
            )
            await within(peer.wait_for(lambda m: len(peer.notifications("notifications/progress")) >= 2))
            release.set()
            assert (await within(fut))["result"]["content"][0]["text"] == "finished"
            beats = peer.notifications("notifications/progress")
            assert all(b["progressToken"] == "t" and b["message"].startswith("still working") for b in beats)
            assert [b["progress"] for b in beats] == sorted({b["progress"] for b in beats})  # increasing
            count = len(beats)
            await asyncio.sleep(0.15)  # absence over three intervals (no event to await): no beat after the answer
            assert len(peer.notifications("notifications/progress")) == count

    arun(go())


def test_no_heartbeat_without_a_progress_token_or_once_the_tool_reports_its_own():
    server = Server("hb")
    own = asyncio.Event()

    @server.tool(heartbeat=0.02)
    async def reporting(ctx: Context) -> str:
        await asyncio.sleep(0.05)  # two beats
        await ctx.report_progress(1000, 2000, "half way")
        await asyncio.sleep(0.1)  # five more intervals: the tool reports, so no beats
        return "done"

    async def go():
        async with Peer(server) as peer:
            await peer.call_tool("reporting")
            assert peer.notifications("notifications/progress") == []  # no token: nothing at all
            await peer.call_tool("reporting", _meta={"progressToken": 7})
            progress = peer.notifications("notifications/progress")
            assert progress[-1]["message"] == "half way" and progress[-1]["progress"] == 1000
            assert all(p["message"].startswith("still working") for p in progress[:-1])

    arun(go())


def test_heartbeat_must_be_positive():
    with pytest.raises(ValueError, match="heartbeat"):
        Server("x", heartbeat=0)
