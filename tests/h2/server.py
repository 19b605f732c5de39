"""The server of tests/h2: ``mcpio run tests/h2/server.py -t http --http2 …``.

``together(n)`` reports progress once it started, waits until ``n`` calls of it are in flight at
the same time (so ``n`` SSE streams are open at once: a client that cannot hold them together
never gets an answer), reports progress again and answers its ``n``.
"""

import asyncio

from mcpio import Context, Server

server = Server("h2-test", version="1.0.0")
_in_flight = {"n": 0}
_all_in = asyncio.Event()


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def together(n: int, ctx: Context) -> int:
    """Answer ``n`` once ``n`` calls of this tool are in flight together."""
    await ctx.report_progress(1, 2, "started")
    _in_flight["n"] += 1
    if _in_flight["n"] >= n:
        _all_in.set()
    await asyncio.wait_for(_all_in.wait(), 60)
    await ctx.report_progress(2, 2, "all in")
    return n
