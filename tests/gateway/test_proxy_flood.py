"""Floods of custom notifications through a proxy of the real ``extended_upstream.py``
subprocess (its extension ``com.acme/push``): a client's ``acme/ping`` (the upstream records
them: its tool ``pings``) and the upstream's ``acme/pushed`` (its tool ``push_many``) each go in
the order sent, through a bounded queue drained by one task at a time: the proxy's event loop makes
a handful of tasks for 5,000 notifications, not one each; past the bound the next ones are
dropped with one line in the log (a notification has no answer to fail)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mcpio import Server
from tests.client.support import arun
from tests.gateway.support import initialized_declaring
from tests.server.peer import Peer

HERE = Path(__file__).parent
FLOOD = 5000


def flooded(caplog: pytest.LogCaptureFixture, flood: Callable[[Peer], Awaitable[list[int]]]) -> tuple[int, list[int]]:
    """How many tasks this process (the proxy's) made during ``flood(peer)`` (a task factory
    counts them), and the numbers ``flood`` returns: those that arrived, in arrival order."""
    proxy = Server.proxy(
        [sys.executable, str(HERE / "extended_upstream.py")], era="legacy", name="up", extensions={"com.acme/push": {}}
    )
    made: list[Any] = []

    async def go() -> tuple[int, list[int]]:
        loop = asyncio.get_running_loop()

        def counted(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
            made.append(coro)
            return asyncio.Task(coro, loop=loop, **kwargs)

        async with Peer(proxy, initialize=False) as peer:
            await initialized_declaring(peer, "com.acme/push")
            await peer.call_tool("pings")  # connected, both ways
            loop.set_task_factory(counted)  # the tasks this process makes from here on
            try:
                arrived = await flood(peer)
            finally:
                loop.set_task_factory(None)
            return len(made), arrived

    with caplog.at_level(logging.WARNING, logger="mcpio.gateway"):
        return arun(go(), timeout=90)


def check(caplog: pytest.LogCaptureFixture, tasks: int, arrived: list[int], way: str) -> None:
    """Few tasks; the numbers sent (0, 1, … FLOOD - 1, then the marker FLOOD) arrived in order, the
    first 1,000 all (they fit in the queue); one line in the log when some were dropped."""
    kept = arrived[: arrived.index(FLOOD)]
    assert tasks < FLOOD // 10, f"{tasks} tasks for {FLOOD} notifications"
    assert kept == sorted(set(kept)) and kept[:1000] == list(range(1000)), "out of order, or the first 1000 dropped"
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    if len(kept) < FLOOD:  # the proxy's reader outran the way out: one line says so
        assert len(dropped) == 1 and dropped[0].startswith(f"upstream 'up': 1 custom notification(s) {way} dropped")
    else:
        assert dropped == []


def test_a_clients_flood_of_custom_notifications_goes_upstream_in_order_through_few_tasks(caplog):
    async def flood(peer: Peer) -> list[int]:
        for n in range(FLOOD):
            await peer.send({"jsonrpc": "2.0", "method": "acme/ping", "params": {"n": n}}, check=False)
        pings: list[int] = []
        while FLOOD not in pings:  # queued after every ping the proxy kept: all of them sent once heard
            await peer.send({"jsonrpc": "2.0", "method": "acme/ping", "params": {"n": FLOOD}}, check=False)
            pings = (await peer.call_tool("pings"))["structuredContent"]["result"]
        return pings

    tasks, pings = flooded(caplog, flood)
    check(caplog, tasks, pings, "from its clients")


def test_an_upstreams_flood_of_custom_notifications_reaches_a_client_in_order_through_few_tasks(caplog):
    async def flood(peer: Peer) -> list[int]:
        await peer.call_tool("push_many", {"n": FLOOD})
        while not any(p["x"] == FLOOD for p in peer.notifications("acme/pushed")):  # queued after the rest
            await peer.call_tool("push_many", {"n": 1, "start": FLOOD})
        return [p["x"] for p in peer.notifications("acme/pushed")]

    tasks, pushed = flooded(caplog, flood)
    check(caplog, tasks, pushed, "to its clients")


def test_an_upstreams_flood_of_progress_reaches_the_caller_in_order_through_few_tasks(caplog):
    """Progress goes to the caller through a few sends at once, the newest of those that came
    meanwhile next (progress only grows): 5,000 make a handful of tasks, not one each."""

    async def flood(peer: Peer) -> list[int]:
        answer = await peer.call_tool("progress_many", {"n": FLOOD}, _meta={"progressToken": "p"})
        assert answer["content"][0]["text"] == str(FLOOD)
        return [p["progress"] for p in peer.notifications("notifications/progress") if p["progressToken"] == "p"]

    tasks, progress = flooded(caplog, flood)
    assert tasks < FLOOD // 10, f"{tasks} tasks for {FLOOD} notifications"
    assert progress and progress == sorted(set(progress)), "out of order"


def test_an_upstreams_flood_of_list_changed_is_listed_again_one_at_a_time_the_last_change_included(caplog):
    """10,000 tools/list_changed make a handful of listings (each kind's one at a time, once more
    after one that a change came during), not a task and a round trip each; the tool added last
    is served."""

    async def flood(peer: Peer) -> list[int]:
        await peer.call_tool("churn", {"n": FLOOD, "name": "late"})
        start = 0
        while "late" not in [t["name"] for t in await peer.list_all("tools/list", "tools")]:
            await peer.notification("notifications/tools/list_changed", start=start)
            start = len(peer.received)
        return []

    tasks, _ = flooded(caplog, flood)
    assert tasks < FLOOD // 10, f"{tasks} tasks for {2 * FLOOD} notifications"
