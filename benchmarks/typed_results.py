#!/usr/bin/env python3
"""What typed client results cost: the same requests, raw dicts vs typed results.

    python benchmarks/typed_results.py            # ~20 s; prints a Markdown table
    python benchmarks/typed_results.py --quick    # a second or two (the test suite's smoke run)

Client throughput is measured end to end in one process (``Client(server)``: the in-memory
transport, through the same serialisation as stdio), interleaving rounds of the raw request
(the dicts: ``tools/list`` page by page and ``tools/call`` with ``Client.request``, the
requests ``list_tools`` and ``call_tool`` send) and the typed method (``list_tools()`` /
``call_tool()``), median of the rounds. The wrapping alone is timed too, against the alternative
of converting into msgspec Structs (the generated wire types in tests/support/wire_types).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgspec

from mcpio import Client, Server
from mcpio.types import CallToolResult, Tool

N_TOOLS = 100


def make_server() -> Server:
    server = Server("bench-typed")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    for i in range(N_TOOLS - 1):

        def extra(x: int, y: str = "") -> str:
            return y * x

        server.add_tool(extra, name=f"tool_{i}", description=f"Extra tool number {i}.")
    return server


async def rates(rounds: int, per_round: int) -> dict[str, float]:
    """Requests per second, median of ``rounds``, for each (raw, typed) pair."""
    samples: dict[str, list[float]] = {k: [] for k in ("list raw", "list typed", "call raw", "call typed")}
    async with Client(make_server(), era="modern") as c:
        await c.list_tools()

        async def list_raw() -> Any:  # what list_tools returned before: the dicts of every page
            tools: list[dict[str, Any]] = []
            params: dict[str, Any] = {}
            while True:
                page = await c.request("tools/list", params)
                tools += page["tools"]
                if not page.get("nextCursor"):
                    return tools
                params = {"cursor": page["nextCursor"]}

        async def list_typed() -> Any:
            return await c.list_tools()

        async def call_raw() -> Any:  # what call_tool was before: the same request, the dict
            return await c.request(
                "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, max_timeout=c.max_timeout
            )

        async def call_typed() -> Any:
            return (await c.call_tool("add", {"a": 1, "b": 2})).data

        pairs = {"list raw": list_raw, "list typed": list_typed, "call raw": call_raw, "call typed": call_typed}
        for _ in range(rounds):
            for name, fn in pairs.items():
                t0 = time.perf_counter()
                for _ in range(per_round):
                    await fn()
                samples[name].append(per_round / (time.perf_counter() - t0))
    return {k: statistics.median(v) for k, v in samples.items()}


def wrap_costs(repeat: int) -> dict[str, float]:
    """Microseconds to turn one decoded tools/list page (100 tools) or call result into results."""

    async def grab() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with Client(make_server(), era="modern") as c:
            page = await c.request("tools/list")
            call = await c.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
            return page["tools"], call

    tools, call = asyncio.run(grab())
    out = {
        "wrap 100 tools (Tool views)": _time(lambda: [Tool(t) for t in tools], repeat),
        "wrap a call result (CallToolResult)": _time(lambda: CallToolResult(call).data, repeat),
    }
    try:
        from tests.support.wire_types import _v2026_07_28 as wire

        out["convert 100 tools to msgspec Structs"] = _time(
            lambda: msgspec.convert(tools, list[wire.Tool], strict=False), repeat
        )
    except ImportError:  # outside a checkout
        pass
    return out


def _time(fn: Any, repeat: int) -> float:
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rounds, per_round, repeat = (3, 20, 200) if args.quick else (15, 300, 5000)
    r = asyncio.run(rates(rounds, per_round))
    print("| request (in memory) | raw dict req/s | typed req/s | typed / raw |")
    print("|---|---|---|---|")
    for kind in ("list", "call"):
        raw, typed = r[f"{kind} raw"], r[f"{kind} typed"]
        label = "tools/list (100 tools)" if kind == "list" else "tools/call add"
        print(f"| {label} | {raw:,.0f} | {typed:,.0f} | {typed / raw:.3f} |")
    print()
    print("| conversion alone | µs |")
    print("|---|---|")
    for name, us in wrap_costs(repeat).items():
        print(f"| {name} | {us:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
