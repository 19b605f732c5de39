"""An upstream for the proxy tests: a tool that blocks until released, one that tells its pid,
one added at run time (list_changed), progress and a log message."""

import asyncio
import os

from mcpio import Context, Server

server = Server("upstream", version="1.0.0")
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
def unblock() -> str:
    release.set()
    return "ok"


@server.tool
def grow(name: str) -> str:
    """Register a tool named `name` now: clients get tools/list_changed."""
    server.add_tool(lambda: name, name=name)
    return name


@server.tool
async def chatty(ctx: Context) -> str:
    await ctx.info("hello from upstream")
    return "said"


@server.tool
async def interview(ctx: Context) -> str:
    """Ask the user twice and the model once, then answer."""
    who = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    mood = await ctx.elicit("Your mood?", {"type": "object", "properties": {"mood": {"type": "string"}}})
    said = await ctx.sample("Say hello", max_tokens=10)
    return f"{who['content']['name']} is {mood['content']['mood']}; the model said {said['content']['text']}"


if __name__ == "__main__":
    server.run()
