"""Issue 12, break 2, on the wire: a session that floods the worker pool with a batch of sync
calls and then DELETEs itself takes at most its fair share of the workers, its queued calls
never start once it is gone, the batch counts item by item against ``max_in_flight``, and
another session's sync tools answer throughout (counts, never timings)."""

from __future__ import annotations

import json
import threading

import httpx

from tests.faults.harden_support import call, headers, open_session, spawn, tool

OLD = "2025-03-26"  # the revision with JSON-RPC batches
BATCH = 2000
IN_FLIGHT = 100


def stats(http, url, sid):
    return json.loads(tool(http, url, sid, "stats", OLD, id="s")["result"]["content"][0]["text"])


def test_a_flooding_session_takes_a_fair_share_and_its_deleted_calls_never_start(tmp_path):
    with spawn(tmp_path, "--max-in-flight", str(IN_FLIGHT)) as srv, httpx.Client(timeout=30) as http:
        a = open_session(http, srv.url, OLD)
        b = open_session(http, srv.url, OLD)
        batch = [call("block", i) for i in range(BATCH)]
        posted: dict = {}

        def flood() -> None:
            with httpx.Client(timeout=60) as h:
                try:
                    posted["status"] = h.post(srv.url, json=batch, headers=headers(a, OLD)).status_code
                except httpx.HTTPError as exc:  # DELETE ends the response stream
                    posted["error"] = exc

        flooder = threading.Thread(target=flood)
        flooder.start()
        # The server-side counter says when the pool is as full as session a can make it.
        seen = stats(http, srv.url, b)
        while seen["block_started"] < seen["share"]:
            seen = stats(http, srv.url, b)
        # Session b's sync tools still answer while a's calls hold their share of the workers.
        for i in range(5):
            assert tool(http, srv.url, b, "quick", OLD, id=i)["result"]["content"][0]["text"] == "quick"
        seen = stats(http, srv.url, b)
        while seen["running"] > seen["share"]:  # a quick call answered frees its worker just after its answer
            seen = stats(http, srv.url, b)
        assert seen["block_started"] == seen["share"] == 16  # fair share: 32 workers // 2
        assert seen["running"] == seen["share"]
        # max_in_flight counts batch items: no more than IN_FLIGHT of a's calls exist at once.
        assert seen["queued"] + seen["running"] <= IN_FLIGHT
        assert http.delete(srv.url, headers=headers(a, OLD)).status_code == 200
        assert tool(http, srv.url, b, "release", OLD)["result"]["content"][0]["text"] == "ok"
        for i in range(5):
            assert tool(http, srv.url, b, "quick", OLD, id=i)["result"]["content"][0]["text"] == "quick"
        flooder.join(60)
        assert not flooder.is_alive()
        final = stats(http, srv.url, b)
        # Only the calls already running when a was deleted ever started; none queued after.
        assert final["block_started"] == 16, final
        assert final["queued"] == 0 and final["running"] == 0
        assert final["started"] < 16 + 50  # a's 16, b's quick/stats calls, nothing of a's batch


def test_cancelled_sync_calls_that_wait_for_a_worker_never_start():
    import asyncio
    import sys

    from mcpio import Client
    from tests.client.support import arun
    from tests.faults.harden_support import HERE

    async def stats(c):
        return json.loads((await c.call_tool("stats", {}))["content"][0]["text"])

    async def go() -> None:
        async with Client([sys.executable, str(HERE / "harden_server.py")], timeout=30) as c:
            calls = [asyncio.ensure_future(c.call_tool("block", {})) for _ in range(40)]
            seen = await stats(c)
            while seen["block_started"] < seen["share"]:
                seen = await stats(c)
            assert seen["block_started"] == 16 and seen["queued"] == 24  # one session: its fair share runs
            for call_ in calls:  # notifications/cancelled for every one
                call_.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
            await c.call_tool("release", {})
            while (seen := await stats(c))["queued"] or seen["running"]:
                pass
            assert seen["block_started"] == 16 and seen["skipped"] == 24  # the queued 24 never started

    arun(go(), timeout=120)
