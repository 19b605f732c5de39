"""A server for the shared-session tests: ``python tests/state/shared_server.py PORT REDIS_URL
[SESSION_TIMEOUT [MAX_SESSIONS [TASK_LEASE [FRESH_FOR]]]]``. Every process started with the same Redis serves every
legacy session. Tools: ``where`` (this process's pid), ``chatty`` (one log message per level),
``touch(uri)`` (``notify_resource_updated``), ``grow(name)`` (adds a tool: list_changed), ``roots`` (asks the client for its roots: a
server-to-client request), ``slow(steps, wait)`` (progress, then waits; ``cancelled`` lists the
ids of those cancelled on this process);
``staged(gate)`` (progress in three stages, each opened by a file the test creates);
resource ``memo://a``."""

from __future__ import annotations

import asyncio
import os
import sys

from mcpio import Context, Server
from mcpio._state import RedisState

server = Server("shared", version="1.0.0")


@server.resource("memo://a")
def memo_a() -> str:
    return "a"


@server.tool
def where() -> int:
    return os.getpid()


@server.tool
async def tenant(ctx: Context) -> str:
    """This process and the X-Tenant header of the POST carrying the call (ctx.http)."""
    http = ctx.http
    return f"{os.getpid()} {http.headers.get('x-tenant') if http is not None else None}"


@server.tool
async def chatty(ctx: Context) -> str:
    for level in ("debug", "info", "warning", "error"):
        await ctx.log(level, level)
    return "said"


@server.tool
async def touch(uri: str) -> str:
    await server.notify_resource_updated(uri)
    return "touched"


@server.tool
async def roots(ctx: Context) -> str:
    found = await ctx.list_roots(timeout=20)
    return ",".join(r["uri"] for r in found)


CANCELLED: list[str] = []


@server.tool
async def slow(ctx: Context, steps: int, wait: float = 0.0) -> str:
    for i in range(steps):
        await ctx.report_progress(i + 1, steps)
    try:
        await asyncio.sleep(wait)  # cancelled by notifications/cancelled
    except asyncio.CancelledError:
        CANCELLED.append(str(ctx.request_id))
        raise
    return "done"


@server.tool
async def staged(ctx: Context, gate: str) -> str:
    """Progress 1 and 2; 3 and 4 once the file ``gate.1`` exists; 5 and 6 once ``gate.2`` does."""
    step = 0
    for stage in range(3):
        while stage and not os.path.exists(f"{gate}.{stage}"):
            await asyncio.sleep(0.02)  # the test opens each gate when its client is ready
        for _ in range(2):
            step += 1
            await ctx.report_progress(step, 6)
    return "staged"


@server.tool
def grow(name: str) -> str:
    """Register a tool on this process at run time (tools/list_changed, on every process)."""
    server.add_tool(lambda: name, name=name)
    return name


@server.tool
def cancelled() -> list[str]:
    """The ids of the slow calls cancelled on this process."""
    return CANCELLED


if __name__ == "__main__":
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 1800.0
    cap = int(sys.argv[4]) if len(sys.argv) > 4 else 10_000
    lease = float(sys.argv[5]) if len(sys.argv) > 5 else 10.0  # a process dead this long is seen dead
    fresh = float(sys.argv[6]) if len(sys.argv) > 6 else 1.0  # a local copy is trusted this long
    state = RedisState(sys.argv[2], task_lease=lease, fresh_for=fresh)
    server.run("http", port=int(sys.argv[1]), state=state, session_timeout=timeout, max_sessions=cap)
