"""Tools that run as tasks, defined once for the tests that drive them: the client's task
handles (tests/client/test_task_handles.py, in process) and the inspector's Tasks panel
(tests/inspect/tasks_server.py, over stdio):

* ``build_report(topic, pages)``: completes after ``pages`` steps of ``page_delay`` seconds, with
  a progress notification per page: ``"Report on {topic}: {pages} pages"``;
* ``wait_forever()``: runs until it is cancelled;
* ``publish(draft)``: asks where to publish (an elicitation: the task goes ``input_required``
  in 2026-07-28), then ``"published {draft} to {channel}"``;
* ``add(a, b)``: an ordinary tool (no task support).
"""

import asyncio

from mcpio import Context, Server


def add_task_tools(server: Server, *, page_delay: float) -> Server:
    """Register the four tools on ``server`` (``page_delay``: seconds per report page)."""

    @server.tool(task_support="optional")
    async def build_report(ctx: Context, topic: str = "sales", pages: int = 3) -> str:
        """Write a report, one page at a time (a task that completes)."""
        for page in range(1, pages + 1):
            await asyncio.sleep(page_delay)
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

    return server
