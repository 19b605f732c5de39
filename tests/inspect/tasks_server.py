"""A server for the inspector's Tasks and Skills panels: tools that run as tasks (one that
finishes, one that waits to be cancelled, one that asks a question inside the task) and a
folder of skills (``skills/``, with hostile HTML in a SKILL.md)."""

import asyncio
from pathlib import Path

from mcpio import Context, Server

server = Server("tasks-and-skills", version="0.1.0", task_poll_interval=0.05, skills=Path(__file__).parent / "skills")


@server.tool(task_support="optional")
async def build_report(ctx: Context, topic: str = "sales", pages: int = 3) -> str:
    """Write a report, one page at a time (a task that completes)."""
    for page in range(1, pages + 1):
        await asyncio.sleep(0.2)
        await ctx.report_progress(page, pages, f"wrote page {page} of {pages}")
    return f"Report on {topic}: {pages} pages"


@server.tool(task_support="optional")
async def wait_forever(ctx: Context) -> str:
    """A task that runs until it is cancelled."""
    await ctx.report_progress(0, None, "waiting to be cancelled")
    await asyncio.Event().wait()
    return "never"


@server.tool(task_support="optional")
async def publish(ctx: Context, draft: str = "notes") -> str:
    """Ask where to publish (the task goes input_required), then publish."""
    answer = await ctx.elicit(
        "Publish where?", {"type": "object", "properties": {"channel": {"type": "string"}}, "required": ["channel"]}
    )
    if answer.get("action") != "accept":
        return f"not published ({answer.get('action')})"
    return f"published {draft} to {answer['content']['channel']}"


@server.tool
def add(a: int, b: int) -> int:
    """An ordinary tool (no task support)."""
    return a + b


if __name__ == "__main__":
    server.run()
