"""``fastmcp`` (standalone, 4.x): the benchmark's tools on ``FastMCP``, served with
``run(show_banner=False)`` (stdio; the banner and its update check are off, as a host-launched
server would have them)."""

import os

from fastmcp import FastMCP

server = FastMCP("bench-fastmcp", version="1.0.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def _extra(i: int):
    def tool(query: str, limit: int = 10) -> str:
        return f"{i}: {query} ({limit})"

    tool.__doc__ = f"Extra tool number {i}: look something up.\n\nReturns what was found."
    return tool


for _i in range(int(os.environ.get("BENCH_EXTRA_TOOLS") or 0)):
    server.tool(_extra(_i), name=f"tool_{_i}")

if __name__ == "__main__":
    server.run(show_banner=False)
