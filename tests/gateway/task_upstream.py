"""An upstream whose tools may run as tasks, for the proxy's task tests. Spoken to in the
2026-07-28 era (mcpio's client's choice when the server offers it) it announces the tasks
extension and decides per call: its ``Tool`` lists no task support. With ``plain`` as its first
argument it serves the same tools with no task support at all (no extension announced)."""

import asyncio
import sys

from mcpio import Context, Server

TASKS = sys.argv[1:] != ["plain"]
server = Server("task-upstream", version="1.0.0", task_poll_interval=0.05)
support = "optional" if TASKS else "forbidden"
cancelled = asyncio.Event()


@server.tool(task_support=support)
async def long_sum(a: int, b: int, ctx: Context) -> int:
    """A long job: a task when the client declares the tasks extension."""
    for step in (1, 2):
        ctx.set_task_status(f"step {step}")
        await asyncio.sleep(0.05)
    return a + b


@server.tool(task_support=support)
async def hold(ctx: Context) -> str:
    """Run until cancelled; the cancellation is what ``was_cancelled`` tells. Its progress
    message (a task's statusMessage) says it runs."""
    await ctx.report_progress(1, None, "holding")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.set()
        raise
    return "never"


@server.tool
async def was_cancelled() -> bool:
    """Whether a ``hold`` call was cancelled (waiting up to 10 s for it)."""
    try:
        await asyncio.wait_for(cancelled.wait(), 10)
    except TimeoutError:
        return False
    return True


@server.tool(task_support=support)
async def confirm_sum(a: int, b: int, ctx: Context) -> str:
    """Ask the user to confirm during the task, then answer."""
    answer = await ctx.elicit("Add them?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    if not (answer.get("content") or {}).get("ok"):
        return "declined"
    return f"sum {a + b}"


@server.tool(task_support=support, task_after=None)
async def quick_or_long(long: bool, ctx: Context) -> str:
    """Answered directly, unless ``long``: then it becomes a task first (the server decides)."""
    if long:
        await ctx.start_task()
        await asyncio.sleep(0.05)
        return "long"
    return "quick"


@server.tool(task_support=support, task_after=None)
async def ask_then_sum(a: int, b: int, ctx: Context) -> str:
    """Ask the user first (an input_required round of the call), then go on as a task."""
    answer = await ctx.elicit("Add them?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    await ctx.start_task()
    ctx.set_task_status("adding")
    await asyncio.sleep(0.05)
    return f"sum {a + b}" if (answer.get("content") or {}).get("ok") else "declined"


if __name__ == "__main__":
    server.run()
