"""What OpenTelemetry costs a ``tools/call`` (docs/guides/observability.md).

In one process, a Client drives a Server over the in-memory transport (the session engine,
the protocol layer and the framework, no I/O): N sequential ``tools/call`` of a trivial tool,
best of R rounds (CPU time of this process: steadier than wall time on a shared machine), for the server built with ``telemetry=False`` (the default: no wrapper on the
hot path) and, when opentelemetry-sdk is installed, ``telemetry=True`` with an SDK
TracerProvider and MeterProvider that drop what they record (the cost of making spans and
recording metrics, without an exporter's I/O).

Run: ``.venv/bin/python benchmarks/otel_overhead.py [N] [R]``.
"""

from __future__ import annotations

import asyncio
import sys
import time

from mcpio import Client, Server


def make(telemetry: bool) -> Server:
    server = Server("bench", telemetry=True) if telemetry else Server("bench")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


async def rate(server: Server, n: int, rounds: int) -> float:
    best = 0.0
    async with Client(server) as client:
        for _ in range(50):
            await client.call_tool("add", {"a": 1, "b": 2})
        for _ in range(rounds):
            t0 = time.process_time()
            for _ in range(n):
                await client.call_tool("add", {"a": 1, "b": 2})
            best = max(best, n / (time.process_time() - t0))
    return best


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    print(f"telemetry off: {asyncio.run(rate(make(False), n, rounds)):8.0f} tools/call per s")
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        print("telemetry on: skipped (pip install opentelemetry-sdk)")
        return
    trace.set_tracer_provider(TracerProvider())  # spans are made and ended, no processor
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    print(f"telemetry on:  {asyncio.run(rate(make(True), n, rounds)):8.0f} tools/call per s")


if __name__ == "__main__":
    main()
