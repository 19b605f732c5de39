"""Tools with time limits (``@server.tool(timeout=…)``, ``Server(tool_timeout=…)``); each writes
what happened to it to the file named by $DEPS_LOG, so a test sees the cancellation from outside."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

from mcpio import Context, Depends, Server


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


proceed_now = threading.Event()


def connection() -> Iterator[dict[str, Any]]:
    """A pooled connection: handed back to the pool after the call, for the next call to take."""
    conn = {"open": True}
    try:
        yield conn
    finally:
        conn["open"] = False
        note("connection returned")


@server.tool(timeout=0.2)
def query(ctx: Context, conn: dict[str, Any] = Depends(connection)) -> str:
    """A sync tool past its limit whose thread goes on with its connection a little longer (a
    statement that cannot be interrupted): until ``proceed`` is called."""
    while not ctx.cancelled:
        time.sleep(0.01)
    proceed_now.wait(10)
    note("query used " + ("its own connection" if conn["open"] else "a connection already returned to the pool"))
    return "late"


@server.tool
def proceed() -> str:
    proceed_now.set()
    return "proceeding"


if __name__ == "__main__":
    server.run()
