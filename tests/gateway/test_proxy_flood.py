"""A flood of custom notifications from a proxy's client (``acme/ping`` of ``com.acme/push``,
which the real ``extended_upstream.py`` subprocess records: its tool ``pings``) goes upstream in
the order sent, through a bounded queue drained by one task at a time: the proxy's event loop
makes a handful of tasks for 5,000 notifications, not one each; past the bound the next ones are
dropped with one line in the log (a notification has no answer to fail)."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from mcpio import Server
from tests.client.support import arun
from tests.gateway.support import initialized_declaring
from tests.server.peer import Peer

HERE = Path(__file__).parent
FLOOD = 5000


def test_a_flood_of_custom_notifications_goes_upstream_in_order_through_few_tasks(caplog):
    proxy = Server.proxy([sys.executable, str(HERE / "extended_upstream.py")], era="legacy", name="up")
    made: list[Any] = []

    async def go() -> tuple[int, list[int]]:
        loop = asyncio.get_running_loop()

        def counted(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
            made.append(coro)
            return asyncio.Task(coro, loop=loop, **kwargs)

        async with Peer(proxy, initialize=False) as peer:
            await initialized_declaring(peer, "com.acme/push")
            assert (await peer.call_tool("pings"))["structuredContent"]["result"] == []
            loop.set_task_factory(counted)  # the tasks this process makes from here on
            try:
                for n in range(FLOOD):
                    await peer.send({"jsonrpc": "2.0", "method": "acme/ping", "params": {"n": n}}, check=False)
                pings: list[int] = []
                while FLOOD not in pings:  # queued after every ping the proxy kept: all of them sent once heard
                    await peer.send({"jsonrpc": "2.0", "method": "acme/ping", "params": {"n": FLOOD}}, check=False)
                    pings = (await peer.call_tool("pings"))["structuredContent"]["result"]
            finally:
                loop.set_task_factory(None)
            return len(made), pings

    with caplog.at_level(logging.WARNING, logger="mcpio.gateway"):
        tasks, pings = arun(go(), timeout=90)
    kept = pings[: pings.index(FLOOD)]
    assert tasks < 100, f"{tasks} tasks for {FLOOD} notifications"
    assert kept == sorted(set(kept)) and kept[:1000] == list(range(1000)), "out of order, or the first 1000 dropped"
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    if len(kept) < FLOOD:  # the proxy's reader outran the upstream's pipe: one line says so
        assert len(dropped) == 1 and dropped[0].startswith(
            "upstream 'up': 1 custom notification(s) of its clients dropped"
        )
    else:
        assert dropped == []
