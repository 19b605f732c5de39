"""Per-tool time limits (``@server.tool(timeout=…)``, ``Server(tool_timeout=…)``)."""

from __future__ import annotations

from typing import Any

from ._tools import ToolError


class ToolTimeout(ToolError):
    """A tool call that outlived its ``timeout``: an isError result naming the tool and the limit."""


async def within(call: Any, seconds: float, name: str) -> Any:
    """Await ``call`` for at most ``seconds``: past that it is cancelled (an async tool at its
    ``await``; a sync one's worker thread is left to finish, ``ctx.cancelled`` set, as for a
    cancelled request) and the call fails with :class:`ToolTimeout`."""
    import asyncio

    try:
        async with asyncio.timeout(seconds) as limit:
            return await call
    except TimeoutError:
        if not limit.expired():  # the tool's own TimeoutError: its failure, reported as such
            raise
        raise ToolTimeout(
            f"Error executing tool {name}: it did not finish within its time limit of {seconds:g} s and was "
            "stopped; try again with a smaller request, or ask the server's operator to raise the tool's timeout"
        ) from None
