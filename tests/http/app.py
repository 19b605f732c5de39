"""The server the HTTP tests drive: small tools that exercise each transport rule."""

from __future__ import annotations

import asyncio
from typing import Annotated

import msgspec

from mcpio import Context, Server

state: dict[str, object] = {}


def make_server() -> Server:
    server = Server("http-test", "1.0.0")
    events: dict[str, asyncio.Event] = {}
    state.clear()
    state["events"] = events

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    async def progress(steps: int, ctx: Context) -> str:
        """Reports progress, logs, then answers."""
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
            await ctx.info(f"step {i + 1}")
            await asyncio.sleep(0.01)
        return "done"

    @server.tool
    async def slow(seconds: float, ctx: Context) -> str:
        """Sleeps; records whether it was cancelled."""
        state["slow_started"] = True
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            state["slow_cancelled"] = True
            raise
        return "slept"

    @server.tool
    async def ask_llm(prompt: str, ctx: Context) -> str:
        """Asks the client to sample."""
        result = await ctx.sample(prompt, max_tokens=20)
        return f"LLM said: {result['content']['text']}"

    @server.tool
    async def poll_me(ctx: Context) -> str:
        """Closes its SSE stream, then answers (the client resumes with Last-Event-ID)."""
        await ctx.info("before the break")
        await ctx.close_sse_stream(retry_ms=50)
        await asyncio.sleep(0.2)
        await ctx.info("after the break")
        return "resumed"

    @server.tool
    def toggle() -> str:
        """Adds or removes the tool 'extra' (list_changed for listeners)."""
        if state.get("extra"):
            server.remove_tool("extra")
            state["extra"] = False
            return "removed"
        server.add_tool(lambda: "x", name="extra")
        state["extra"] = True
        return "added"

    @server.tool
    def regional(region: Annotated[str, msgspec.Meta(extra_json_schema={"x-mcp-header": "Region"})]) -> str:
        """A tool whose region travels in the Mcp-Param-Region header too."""
        return f"region {region}"

    @server.resource("test://doc")
    def doc() -> str:
        return "a document"

    return server
