"""The server the route matrix runs on every route: ``python matrix_server.py KIND`` serves it on
stdio; :func:`build` makes it for HTTP. KIND: ``sync`` (plain ``def`` tools that run on the event
loop), ``async`` (``async def`` tools) or ``middleware`` (sync tools behind a middleware that edits
results in place)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcpio import Server, ToolError, ToolResult


def build(kind: str) -> Server:
    # Unexpected exceptions carry their type only, on every route (stdio would show their text).
    server = Server("matrix", expose_errors=False)
    inline = kind != "async"

    def tool(fn: Any) -> Any:
        return server.tool(inline=True)(fn) if inline else server.tool(fn)

    if inline:

        def add(a: int, b: int) -> int:
            """Add."""
            return a + b

        def fails(kind: str) -> str:
            """Raise what ``kind`` names: a ToolError, or a bug."""
            if kind == "tool":
                raise ToolError("the tool refused: no such row")
            raise ValueError("secret detail of a bug")

        def odd() -> ToolResult:
            """A result whose _meta holds an object JSON cannot carry."""
            return ToolResult(content="x", meta={"k": object()})

    else:

        async def add(a: int, b: int) -> int:
            """Add."""
            return a + b

        async def fails(kind: str) -> str:
            """Raise what ``kind`` names: a ToolError, or a bug."""
            if kind == "tool":
                raise ToolError("the tool refused: no such row")
            raise ValueError("secret detail of a bug")

        async def odd() -> ToolResult:
            """A result whose _meta holds an object JSON cannot carry."""
            return ToolResult(content="x", meta={"k": object()})

    for fn in (add, fails, odd):
        tool(fn)

    @server.tool
    async def wait() -> str:
        """Wait until cancelled."""
        await asyncio.Event().wait()
        return "never"

    if kind == "middleware":

        @server.middleware
        async def edit(request: Any, call_next: Any) -> dict[str, Any]:
            result: dict[str, Any] = await call_next(request)
            if request.method == "tools/list":
                if (request.params.get("_meta") or {}).get("matrix/edit"):  # this request's list, in place
                    result["tools"][0]["description"] += " (edited)"
            elif request.method == "tools/call":
                result["content"].append({"type": "text", "text": "seen by middleware"})
            return result

    return server


if __name__ == "__main__":
    build(sys.argv[1]).run()
