"""A server written with the official ``mcp`` Python SDK (2.x, high-level ``MCPServer`` API).

It is a *peer* for mcpio's client tests (never imported by mcpio): run it as
``python tests/servers/sdk_server.py`` and it serves over stdio. It exercises tools (plain,
structured, progress + logging, sampling, elicitation, roots), a static resource, a resource
template and a prompt with arguments.
"""

from __future__ import annotations

import warnings

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import SamplingMessage, TextContent

warnings.simplefilter("ignore")  # sampling/roots/logging are deprecated in 2026-07-28; we test them anyway

mcp = MCPServer("sdk-peer", version="2.0.0", instructions="A server built with the official SDK.")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def shout(text: str, times: int = 1) -> str:
    """Upper-case the text, repeated."""
    return " ".join([text.upper()] * times)


@mcp.tool()
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress and logging each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
        await ctx.info(f"counted {i}")
    return f"counted to {n}"


@mcp.tool()
async def ask_llm(question: str, ctx: Context) -> str:
    """Ask the client's LLM (sampling/createMessage)."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=50
    )
    content = result.content
    return f"the model {result.model} said: {getattr(content, 'text', content)}"


class Preferences(BaseModel):
    name: str = Field(description="Your name")
    colour: str = Field(default="blue", description="Favourite colour")
    lucky: int = Field(default=7, description="Lucky number")


@mcp.tool()
async def ask_user(ctx: Context) -> str:
    """Ask the user for their preferences (elicitation/create)."""
    answer = await ctx.elicit("Tell me about yourself", Preferences)
    if answer.action != "accept":
        return f"the user chose {answer.action}"
    data = answer.data
    return f"{data.name} likes {data.colour} and {data.lucky}"


@mcp.tool()
async def roots(ctx: Context) -> str:
    """List the client's roots (roots/list)."""
    result = await ctx.session.list_roots()
    return ", ".join(str(r.uri) for r in result.roots) or "(none)"


@mcp.resource("config://app", mime_type="application/json")
def app_config() -> str:
    """The application configuration."""
    return '{"debug": false}'


@mcp.resource("users://{user_id}/profile")
def profile(user_id: str) -> str:
    """A user's profile."""
    return f"profile of user {user_id}"


@mcp.prompt()
def review(code: str, language: str = "python") -> str:
    """Review some code."""
    return f"Please review this {language} code:\n{code}"


if __name__ == "__main__":
    mcp.run()
