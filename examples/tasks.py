"""Long-running tools as tasks (the ``io.modelcontextprotocol/tasks`` extension of 2026-07-28).

A client that declares the extension in a request's ``_meta`` client capabilities gets a task
handle (``resultType: "task"``) for these tools at once, and polls ``tasks/get`` (or listens
with ``subscriptions/listen`` ``taskIds``) for the outcome; a client that does not gets a plain
result (``task_support="optional"``) or error -32021 (``"required"``). Legacy-era clients
(2025-11-25 and earlier) call the same tools as ordinary tools.

    python examples/tasks.py      # stdio
"""

import asyncio
import time

from mcpio import Context, Server, ToolError

server = Server("reports", version="1.0.0", task_ttl=600, task_poll_interval=0.5)

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


@server.tool(task_support="optional")
async def build_report(topic: str, ctx: Context, pages: int = 3) -> str:
    """Write a report of a few pages (about 0.1 s a page); its progress shows in the task's statusMessage."""
    for page in range(1, pages + 1):
        await asyncio.sleep(0.1)
        await ctx.report_progress(page, pages, f"wrote page {page} of {pages}")
    return f"Report on {topic}: {pages} pages"


@server.tool(task_support="required")
async def purge_table(table: str, ctx: Context) -> str:
    """Delete every row of a table, after the user confirms (the task waits in input_required)."""
    answer = await ctx.elicit(f"Delete every row of {table}?", CONFIRM)
    if answer.get("action") != "accept" or not (answer.get("content") or {}).get("confirm"):
        raise ToolError(f"Not confirmed: {table} was left as it was")
    return f"Purged {table}"


@server.tool(task_support="optional", task_after=None)
async def publish(draft: str, ctx: Context) -> str:
    """Ask where to publish (an input_required round trip), then publish as a task."""
    answer = await ctx.elicit(
        "Publish where?", {"type": "object", "properties": {"channel": {"type": "string"}}, "required": ["channel"]}
    )
    channel = (answer.get("content") or {}).get("channel", "nowhere")
    await ctx.start_task()  # from here on the client holds a task handle
    await asyncio.sleep(0.1)
    return f"Published {draft!r} to {channel}"


@server.tool(task_support="optional")
def crunch(seconds: float) -> str:
    """Busy for `seconds` seconds in a worker thread (cancel it with tasks/cancel)."""
    time.sleep(seconds)
    return f"Crunched for {seconds:g} s"


if __name__ == "__main__":
    server.run()
