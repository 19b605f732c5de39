"""The tools the differential tests of issue 17's fast paths register on both sides: a fast path
(the direct HTTP answer, the plain-function stdio answer) must answer each of them exactly as the
general path does."""

from __future__ import annotations

import sys

from mcpio import InvalidParams, Server, ToolError


def add_differential_tools(server: Server) -> None:
    """Register ``add``, ``echo``, ``big`` (over a 64-byte cap), ``fails`` (a ToolError, an
    MCPError, ``sys.exit`` or a bug, by ``kind``) and ``wrong_type`` (breaks its output schema),
    every one ``inline=True``."""

    @server.tool(inline=True)
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @server.tool(inline=True)
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool(inline=True, max_result_bytes=64)
    def big(n: int) -> str:
        """A long text, over the 64-byte cap."""
        return "x" * n

    @server.tool(inline=True)
    def fails(kind: str) -> str:
        """Raise what ``kind`` names."""
        if kind == "tool":
            raise ToolError("the tool refused: no such row")
        if kind == "protocol":
            raise InvalidParams("Invalid params: kind 'protocol' is refused on purpose")
        if kind == "exit":
            sys.exit(3)
        raise ValueError("secret detail of a bug")

    @server.tool(inline=True)
    def wrong_type() -> int:
        """Declares int, returns a list."""
        return [1, 2]  # type: ignore[return-value]
