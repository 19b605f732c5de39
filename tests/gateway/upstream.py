"""An upstream for the proxy tests: a tool that blocks until released, one that hangs until
cancelled, one that tells its pid, an echo, one that fails, one added at run time
(list_changed), progress and a log message."""

import asyncio
import os
import sys

from mcpio import Context, MCPError, ResourceNotFound, Server, ToolError

server = Server("upstream", version="1.0.0", title="The test upstream", instructions="Call pid to learn who serves.")
release = asyncio.Event()


@server.tool
def pid() -> int:
    """This process's id."""
    return os.getpid()


@server.tool
async def block(ctx: Context) -> str:
    """Wait until `unblock` is called (or forever)."""
    await ctx.report_progress(1, 2, "waiting")
    await release.wait()
    return "released"


@server.tool
def echo(text: str) -> str:
    """The text, unchanged."""
    return text


@server.tool
async def hang(ctx: Context) -> str:
    """Log "hanging", then wait until cancelled (said on stderr: the proxy logs it)."""
    await ctx.info("hanging")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        print("hang cancelled", file=sys.stderr, flush=True)
        raise
    return "never"


@server.tool
def fail(code: int) -> str:
    """Raise a JSON-RPC error with ``code`` (a non-positive one: a ToolError, an isError result)."""
    if code > 0:
        raise ToolError("failed on purpose")
    raise MCPError("refused on purpose", code, {"why": "asked"})


@server.tool
def header_text(tool: str) -> str:
    """From now on ``tool``'s ``text`` argument also goes in an ``Mcp-Param-Text`` header
    (2026-07-28 HTTP), and its listing says so, but no list_changed is sent: a client that
    listed it before gets -32020 until it lists the tools again."""
    from mcpio._protocol._http import param_headers

    served = server.registry.tools[tool]
    schema = {**served.input_schema, "properties": {"text": {"type": "string", "x-mcp-header": "Text"}}}
    served.input_schema, served.param_headers, served._definitions = schema, param_headers(schema), {}
    return "ok"


@server.tool
def unblock() -> str:
    release.set()
    return "ok"


@server.tool
def grow(name: str) -> str:
    """Register a tool named `name` now: clients get tools/list_changed."""
    server.add_tool(lambda: name, name=name)
    return name


@server.tool
def shrink(name: str) -> str:
    """Remove the tool named `name`: clients get tools/list_changed."""
    server.remove_tool(name)
    return name


@server.tool
async def chatty(ctx: Context) -> str:
    await ctx.info("hello from upstream")
    return "said"


pairs: list[asyncio.Event] = []  # calls of ask_name, two by two
calls = 0


@server.tool
async def ask_name(ctx: Context) -> str:
    """Wait until a second call of ask_name is in flight too, then ask this call's client its name."""
    global calls
    n, calls = calls, calls + 1
    if n % 2 == 0:
        pairs.append(asyncio.Event())
    pair = pairs[n // 2]
    if n % 2:
        pair.set()
    await pair.wait()
    who = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"hello {who['content']['name']}"


@server.tool
async def interview(ctx: Context) -> str:
    """Ask the user twice and the model once, then answer."""
    who = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    mood = await ctx.elicit("Your mood?", {"type": "object", "properties": {"mood": {"type": "string"}}})
    said = await ctx.sample("Say hello", max_tokens=10)
    return f"{who['content']['name']} is {mood['content']['mood']}; the model said {said['content']['text']}"


@server.tool(task_support="required")
async def slow_sum(a: int, b: int) -> int:
    """Run as a task only (execution.taskSupport: required)."""
    await asyncio.sleep(0.05)
    return a + b


@server.tool(task_support="required")
async def staged(ctx: Context) -> str:
    """Run as a task only, through three stages, each shown as the task's statusMessage."""
    for step in (1, 2, 3):
        await ctx.report_progress(step, 3, f"step {step}")
    return "staged"


@server.resource("note://{id}")
def note(id: str) -> str:
    return f"note {id}"


@server.resource("gone://{id}")
def gone(id: str) -> str:
    """Every one of them is gone: resources/read answers "not found"."""
    raise ResourceNotFound(f"gone://{id}")


@server.tool
async def touch(id: str) -> str:
    """Tell note://ID's subscribers it changed."""
    await server.notify_resource_updated(f"note://{id}")
    return "touched"


if __name__ == "__main__":
    server.run()
