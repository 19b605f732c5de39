"""Tools with time limits (``@server.tool(timeout=…)``, ``Server(tool_timeout=…)``); each writes
what happened to it to the file named by $DEPS_LOG, so a test sees the cancellation from outside."""

from __future__ import annotations

import asyncio
import os
import time

from mcpio import Context, Server


def note(line: str) -> None:
    path = os.environ.get("DEPS_LOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


server = Server("timeouts", tool_timeout=0.4, max_in_flight=2)


@server.tool(timeout=0.2)
async def wait_forever() -> str:
    """An async tool past its own limit: cancelled at its await."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        note("async cancelled")
        raise
    return "never"


@server.tool
def crunch(ctx: Context) -> str:
    """A sync tool past the server's default limit: its thread sees ctx.cancelled and stops."""
    while not ctx.cancelled:
        time.sleep(0.01)
    note("sync saw cancelled")
    return "stopped"


@server.tool(timeout=5)
async def own_timeout() -> str:
    """A TimeoutError of the tool's own is its failure, not the limit."""
    raise TimeoutError("the backend timed out")


@server.tool(timeout=None)
def quick(a: int) -> int:
    return a + 1


if __name__ == "__main__":
    server.run()
