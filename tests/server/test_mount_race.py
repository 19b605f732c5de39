"""A parent starting on one event loop while another thread mounts and unmounts its children:
every child mounted when the start looks last is entered by it, and one mounted after is held as
a late mount, never neither (``LateMounts.enter``). Deterministic: the threads meet at events set
in the children's lifespans, and the other loop's client sees the unmount on the wire."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator

from mcpio import Client, Context, Server
from tests.client.support import arun, within


def test_a_child_after_one_unmounted_during_the_start_is_entered_all_the_same():
    """Loop B serves the parent and mounts ``x`` (whose lifespan fails on B, so ``x`` is
    unmounted) and then ``c``. Loop A starts the parent meanwhile: it is entering ``x`` when ``x``
    is unmounted; ``c``, mounted before A's start, is then entered by A all the same."""
    a_enters_x, unmounted, b_ready, done = (threading.Event() for _ in range(4))
    entered: list[str] = []

    @contextlib.asynccontextmanager
    async def x_life(server: Server) -> AsyncIterator[str]:
        if threading.current_thread() is threading.main_thread():  # loop A
            a_enters_x.set()
            await asyncio.to_thread(unmounted.wait)
            yield "x"
        else:  # loop B: fails once A is entering it
            await asyncio.to_thread(a_enters_x.wait)
            raise RuntimeError("x does not start on B")

    @contextlib.asynccontextmanager
    async def c_life(server: Server) -> AsyncIterator[str]:
        entered.append(threading.current_thread().name)
        yield f"c on {threading.current_thread().name}"

    parent, x, c = Server("main"), Server("x", lifespan=x_life), Server("c", lifespan=c_life)
    parent.tool(lambda: "hi", name="hello")
    x.tool(lambda: "x", name="ex")

    @c.tool
    def life(ctx: Context) -> str:
        return str(ctx.lifespan)

    async def on_b() -> None:
        async with Client(parent) as b:
            parent.mount(x, namespace="x")
            parent.mount(c, namespace="c")
            b_ready.set()
            while "x__ex" in {t.name for t in await within(b.list_tools(), 20)}:
                pass  # each a round trip: x's failed start on B unmounts it before long
            unmounted.set()
            await asyncio.to_thread(done.wait)

    thread = threading.Thread(target=lambda: arun(on_b(), 60), name="loop-b")
    thread.start()

    async def on_a() -> str:
        try:
            await asyncio.to_thread(b_ready.wait)
            async with Client(parent) as a:
                return (await within(a.call_tool("c__life", {}), 20)).text
        finally:
            done.set()

    try:
        got = arun(on_a(), 60)
    finally:
        done.set()
        thread.join(60)
    assert got == "c on MainThread"
    assert sorted(entered) == ["MainThread", "loop-b"]
