"""mcpio: the benchmark's two tools (plus BENCH_EXTRA_TOOLS=N extra ones) on ``Server.run()``."""

import os

from mcpio import Server

server = Server(
    "bench-mcpio", version="1.0.0", max_result_bytes=None
)  # echo measures transport, not the 1 MiB result cap


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
    server.add_tool(_extra(_i), name=f"tool_{_i}")

if __name__ == "__main__":
    server.run()
