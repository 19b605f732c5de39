"""A server for the edge cases of the tasks extension (tests/modern/test_tasks_edges.py)."""

from mcpio import Context, MCPError, Server

server = Server("task-edges", max_tasks=3)
Q = {"type": "object", "properties": {"x": {"type": "string"}}}


@server.tool
def plain() -> str:
    """Never a task."""
    return "plain answer"


@server.tool(task_support="optional", task_after=5.0)
async def quick() -> str:
    """Done long before task_after: answered directly."""
    return "quick answer"


@server.tool(task_support="optional", task_after=None)
async def maybe_task(go: bool, ctx: Context) -> str:
    """Becomes a task only when asked to."""
    became = await ctx.start_task() if go else False
    return f"task={became} id={'yes' if ctx.task_id else 'no'}"


@server.tool(task_support="optional")
async def same_key_twice(ctx: Context) -> str:
    """Asks twice under one explicit key: the second request gets a fresh key."""
    a = await ctx.elicit("first?", Q, key="q")
    b = await ctx.elicit("second?", Q, key="q")
    return f"{a['content']['x']} {b['content']['x']}"


@server.tool(task_support="optional")
async def impatient(ctx: Context) -> str:
    """Waits 0.2 s for an answer that never comes."""
    await ctx.elicit("anyone?", Q, timeout=0.2)
    return "answered"


@server.tool(task_support="optional")
async def kaput() -> str:
    """Fails with a JSON-RPC error on purpose."""
    raise MCPError("kaput", -32000, {"why": "on purpose"})


@server.tool(task_support="optional")
async def oops() -> str:
    """Raises a plain exception: an isError result, as for any tool."""
    raise RuntimeError("oops")


@server.tool(task_support="optional")
async def parked(ctx: Context) -> str:
    """Waits for an answer (keeps a task alive)."""
    await ctx.elicit("waiting", Q)
    return "unparked"


@server.tool(task_support="optional")
def two_steps(gate: str, ctx: Context) -> str:
    """A sync tool (a worker thread) that tells two statuses in a row once ``gate`` (a FIFO's
    path; "" for none) has a line to read."""
    if gate:
        with open(gate, encoding="utf-8") as g:
            g.readline()
    ctx.set_task_status("step 1")
    ctx.set_task_status("step 2")
    return "done"


if __name__ == "__main__":
    server.run()
