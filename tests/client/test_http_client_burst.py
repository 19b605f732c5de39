"""A burst of concurrent calls through ``Client(url)``: the HTTP client POSTs at most 90
requests at once, all together (calls that wait for each other on the server still run), and
the rest wait their turn in order (docs/guides/http.md), so that httpx's pool never holds a
queue (it rescans its whole queue against every connection each time one frees up: a burst of
2,000 calls ran quadratically slower; benchmarks/PROFILE.md section 22)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from mcpio import Client, Server
from tests.client.support import arun
from tests.support.http import ServerThread

AT_ONCE = 90


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_burst_of_calls_is_posted_90_at_a_time_and_all_are_answered(era):
    server = Server("burst")
    seen = {"in": 0, "peak": 0, "calls": 0}
    over = asyncio.Event()  # more than AT_ONCE calls reached the server together
    release = asyncio.Event()  # the held calls go on

    @server.tool
    async def hold(i: int) -> int:
        seen["in"] += 1
        seen["calls"] += 1
        seen["peak"] = max(seen["peak"], seen["in"])
        if seen["in"] > AT_ONCE:
            over.set()
        if seen["in"] == AT_ONCE and not release.is_set():
            # AT_ONCE calls are held (calls that wait for each other still run together): the
            # client has POSTed all it may; a client without the limit has more arrive now
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(over.wait(), 0.5)  # under sse_after (1 s): JSON answers
            release.set()
        await release.wait()
        seen["in"] -= 1
        return i

    async def go():
        with ServerThread(server.http_app()) as srv:
            async with Client(srv.url, era=era) as c:
                results = await asyncio.gather(*(c.call_tool("hold", {"i": i}) for i in range(3 * AT_ONCE)))
        assert [r.data for r in results] == list(range(3 * AT_ONCE))
        assert seen["calls"] == 3 * AT_ONCE
        assert seen["peak"] == AT_ONCE  # the first AT_ONCE were in flight together, never more

    arun(go(), timeout=180)
