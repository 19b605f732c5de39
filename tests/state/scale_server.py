"""A server for the scale tests, served by ``mcpio run tests/state/scale_server.py -t http``.

Tools: ``pid`` (which process answered), ``hello``, and ``wait_for(path)``, which reports
progress once, then waits until the file ``path`` exists (the test creates it: an in-flight
request that ends when the test says so, no timing involved)."""

from __future__ import annotations

import asyncio
import os

from mcpio import Context, Server

server = Server("scale", version="1.0.0")


@server.tool
def pid() -> int:
    return os.getpid()


@server.tool
def hello(name: str) -> str:
    return f"Hello, {name}"


@server.tool
async def wait_for(path: str, ctx: Context) -> str:
    await ctx.report_progress(1, 2, "waiting")
    while not os.path.exists(path):
        await asyncio.sleep(0.02)
    await ctx.report_progress(2, 2, "done")
    return "released"
