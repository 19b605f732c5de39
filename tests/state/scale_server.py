"""A server for the scale tests, served by ``mcpio run tests/state/scale_server.py -t http``.

Tools: ``pid`` (which process answered), ``hello``, ``touch(uri)`` (a resource update; resource
``memo://a``), and ``wait_for(path)``, which reports
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


@server.resource("memo://a")
def memo_a() -> str:
    return "a"


@server.tool
async def touch(uri: str) -> str:
    """``notify_resource_updated(uri)`` on this process (the Redis bus carries it to the others)."""
    await server.notify_resource_updated(uri)
    return "touched"
