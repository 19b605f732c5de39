"""A server whose lists change at run time, for subscription and list_changed tests."""

from __future__ import annotations

from mcpio import Context, Server

server = Server(
    "dynamic",
    version="2.0.0",
    title="Dynamic",
    description="Changes while you watch.",
    instructions="Lists that change.",
    cache_ttl_ms=5000,
    cache_scope="public",
)
memos: dict[str, str] = {"a": "first"}


@server.tool
async def add_tool(name: str) -> str:
    """Register a new tool called ``name`` (sends tools list_changed)."""

    def extra() -> str:
        return f"I am {name}"

    extra.__name__ = name
    server.add_tool(extra)
    return f"added {name}"


@server.tool
async def write_memo(key: str, text: str) -> str:
    """Change memo://key (sends resources/updated to its subscribers)."""
    memos[key] = text
    await server.notify_resource_updated(f"memo://{key}")
    return "ok"


@server.tool
async def chatty(ctx: Context) -> str:
    """Log at every level."""
    for level in ("debug", "info", "warning", "error"):
        await ctx.log(level, f"{level} message")
    return "done"


@server.tool
async def my_roots(ctx: Context) -> list[str]:
    """The client's root URIs."""
    return [r["uri"] for r in await ctx.list_roots()]


@server.resource("memo://{key}", ttl_ms=60000, cache_scope="private")
def memo(key: str) -> str:
    """A memo."""
    return memos.get(key, "")


@server.prompt
def greet(name: str) -> str:
    return f"Say hello to {name}."


if __name__ == "__main__":
    server.run()
