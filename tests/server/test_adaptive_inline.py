"""Adaptive inlining, in one process: which tools it may move onto the event loop, and the
worker pool's wake-up accounting. The end-to-end case (a tool that blocks after being fast) is in
tests/stdio/test_adaptive_inline.py."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading

import pytest

from mcpio import Context, Server
from mcpio._server._inline import PROMOTE_AFTER
from mcpio._server._threads import Workers
from tests.server.peer import Peer, arun, within

CALLS = 50 * PROMOTE_AFTER  # enough for a promotion even when a busy machine makes calls look slow


def threads_of(server: Server, name: str, calls: int = CALLS) -> list[str]:
    async def go() -> list[str]:
        async with Peer(server, version="2025-11-25") as peer:
            return [(await peer.call_tool(name))["content"][0]["text"] for _ in range(calls)]

    return arun(go(), timeout=60)


def test_a_default_def_tool_moves_to_the_loop_after_its_probation_and_inline_false_never_does():
    server = Server("adaptive")

    @server.tool
    def adaptive() -> str:
        return threading.current_thread().name

    @server.tool(inline=False)
    def pinned() -> str:
        return threading.current_thread().name

    seen = threads_of(server, "adaptive")
    first_inline = next(i for i, name in enumerate(seen) if not name.startswith("mcpio-worker-"))
    assert first_inline >= PROMOTE_AFTER  # at least PROMOTE_AFTER calls on worker threads first
    assert seen[first_inline] == threading.current_thread().name  # then the loop's own thread
    assert all(name.startswith("mcpio-worker-") for name in threads_of(server, "pinned"))


def test_a_tool_that_takes_a_context_is_never_inlined_by_the_policy():
    server = Server("adaptive")

    @server.tool
    def with_ctx(ctx: Context) -> str:
        return threading.current_thread().name

    assert all(name.startswith("mcpio-worker-") for name in threads_of(server, "with_ctx"))


def test_inline_takes_true_false_or_none():
    server = Server("adaptive")
    with pytest.raises(ValueError, match="inline must be True, False or None"):
        server.add_tool(lambda: 1, name="bad", inline="yes")


def test_two_jobs_queued_at_once_get_two_threads_even_when_one_blocks():
    """Regression: both jobs counted on the one idle thread; the second waited behind the first."""
    release = threading.Event()

    def block() -> str:
        release.wait(30)
        return "released"

    async def go() -> str:
        workers = Workers(max_workers=4)
        assert await workers.run(lambda: "warm", {}) == "warm"  # one thread
        while not workers.stats()["idle"]:  # until it waits for work
            await asyncio.sleep(0)
        blocked = asyncio.ensure_future(workers.run(block, {}))
        quick = asyncio.ensure_future(workers.run(lambda: "quick", {}))  # queued in the same turn
        try:
            return await within(quick)  # answered while the first still blocks
        finally:
            release.set()
            await within(blocked)

    assert arun(go()) == "quick"


FORK_CHECK = """
import os
from mcpio._server._inline import WATCHDOG
WATCHDOG.start()
pid = os.fork()
if pid == 0:
    ok = WATCHDOG._thread is None and not WATCHDOG.awake  # the parent's thread did not come along
    WATCHDOG.wake()  # the first inline call in the child starts its own
    os._exit(0 if ok and WATCHDOG._thread is not None and WATCHDOG._thread.is_alive() else 1)
raise SystemExit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
def test_a_forked_child_starts_its_own_watchdog():
    assert subprocess.run([sys.executable, "-c", FORK_CHECK], timeout=30).returncode == 0
