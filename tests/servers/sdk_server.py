"""A server written with the official ``mcp`` Python SDK (2.x, high-level ``MCPServer`` API).

It is a *peer* for mcpio's client tests (never imported by mcpio): run it as
``python tests/servers/sdk_server.py`` and it serves over stdio (``--http``: Streamable HTTP,
``--sse``: the deprecated HTTP+SSE transport; the port is printed first). It exercises tools (plain,
structured, progress + logging, sampling, elicitation, roots), a static resource, a resource
template and a prompt with arguments. The SDK serves both eras; ``ask_llm``, ``ask_user`` and
``roots`` use server→client requests (legacy era only), ``plan`` uses the SDK's resolvers,
which become input rounds (``input_required``) in 2026-07-28 and requests before it.
"""

from __future__ import annotations

import warnings
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

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


def ask_preferences() -> Elicit[Preferences]:
    return Elicit("Tell me about yourself", Preferences)


def ask_model(prefs: Annotated[Preferences, Resolve(ask_preferences)]) -> Sample:
    text = f"Plan a day for {prefs.name}, who likes {prefs.colour}"
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=text))], max_tokens=30)


def client_roots() -> ListRoots:
    return ListRoots()


@mcp.tool()
def plan(
    prefs: Annotated[Preferences, Resolve(ask_preferences)],
    draft: Annotated[CreateMessageResult, Resolve(ask_model)],
    roots: Annotated[ListRootsResult, Resolve(client_roots)],
) -> str:
    """Ask the user, then the model (which depends on the answer), and the roots: resolvers."""
    text = getattr(draft.content, "text", draft.content)
    return f"{prefs.name}/{prefs.lucky}: {text} in {', '.join(str(r.uri) for r in roots.roots)}"


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


def serve_http(kind: str) -> None:
    """``--http`` (Streamable HTTP at /mcp) or ``--sse`` (the 2024-11-05 HTTP+SSE transport at
    /sse): uvicorn on 127.0.0.1, on a port the OS picks; the port is printed on the first line."""
    import socket
    import sys

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    app = mcp.streamable_http_app() if kind == "--http" else mcp.sse_app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
    sys.exit(server.run(sockets=[sock]))


if __name__ == "__main__":
    import sys

    if sys.argv[1:] and sys.argv[1] in ("--http", "--sse"):
        serve_http(sys.argv[1])
    else:
        mcp.run()
