#!/usr/bin/env python3
"""What a dependency costs a tool call: the same tool with its value passed in by the client
against the same tool with the value injected by ``Depends`` (a sync function, an async function,
an async context manager), and a tool with no such parameter at all.

    python benchmarks/deps_cost.py            # ~20 s; prints a Markdown table
    python benchmarks/deps_cost.py --quick    # a second or two (the test suite's smoke run)

Measured end to end in one process (``Client(server)``: the in-memory transport, through the
same serialisation as stdio), interleaving rounds of each variant, median calls per second of
CPU time (the process's: less disturbed by a busy machine than the wall clock) over the rounds; the ratio column is the variant's time per call over "value passed in" (target of
docs/guides/dependencies.md: at most 1.10 for one dependency). ``entered_in_body`` enters the
same async context manager in the tool's body: the fair baseline of ``context_manager``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcpio import Client, Depends, Server

DB = "postgres://bench"


def sync_db() -> str:
    return DB


async def async_db() -> str:
    return DB


@contextlib.asynccontextmanager
async def managed_db() -> AsyncIterator[str]:
    yield DB


def make_server() -> Server:
    server = Server("bench-deps")

    @server.tool
    async def no_parameter(item: str) -> str:
        return item

    @server.tool
    async def passed_in(item: str, db: str) -> str:
        return item + db

    @server.tool
    async def entered_in_body(item: str) -> str:  # what a context-manager provider does, by hand
        async with managed_db() as db:
            return item + db

    @server.tool
    async def sync_provider(item: str, db: str = Depends(sync_db)) -> str:
        return item + db

    @server.tool
    async def async_provider(item: str, db: str = Depends(async_db)) -> str:
        return item + db

    @server.tool
    async def context_manager(item: str, db: str = Depends(managed_db)) -> str:
        return item + db

    return server


VARIANTS: dict[str, dict[str, str]] = {
    "passed_in": {"item": "x", "db": DB},  # the baseline: the client sends the value
    "no_parameter": {"item": "x"},
    "entered_in_body": {"item": "x"},
    "sync_provider": {"item": "x"},
    "async_provider": {"item": "x"},
    "context_manager": {"item": "x"},
}


async def rates(rounds: int, per_round: int) -> dict[str, float]:
    """Calls per second of each variant, median of ``rounds`` interleaved rounds."""
    samples: dict[str, list[float]] = {name: [] for name in VARIANTS}
    async with Client(make_server(), era="modern") as client:
        calls: dict[str, Callable[[], Awaitable[object]]] = {}
        for name, arguments in VARIANTS.items():
            result = await client.call_tool(name, arguments)
            assert not result.is_error and result.text.startswith("x"), (name, result)

            def call(name: str = name, arguments: dict[str, str] = arguments) -> Awaitable[object]:
                return client.call_tool(name, arguments)

            calls[name] = call
        for _ in range(rounds):
            for name, call in calls.items():
                t0 = time.process_time()
                for _ in range(per_round):
                    await call()
                samples[name].append(per_round / (time.process_time() - t0))
    return {name: statistics.median(v) for name, v in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rounds, per_round = (3, 30) if args.quick else (21, 400)
    r = asyncio.run(rates(rounds, per_round))
    base = r["passed_in"]
    print("| tool (in memory, modern era) | calls/s | time per call / value passed in |")
    print("|---|---|---|")
    for name, rate in r.items():
        print(f"| {name} | {rate:,.0f} | {base / rate:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
