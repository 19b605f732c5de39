"""``mcpio.middleware.Timing`` on an instrumented server: the duration it measured is an attribute
of the request's span too."""

from __future__ import annotations

import asyncio

from mcpio import Client, Server
from mcpio.middleware import Timing
from tests.otel.conftest import Telemetry


def test_timing_sets_the_duration_on_the_request_span(otel: Telemetry) -> None:
    server = Server("timed", telemetry=True)
    server.middleware(Timing())

    @server.tool
    async def nap() -> str:
        await asyncio.sleep(0.01)
        return "rested"

    async def main() -> dict:
        async with Client(server, era="legacy") as client:
            return await client.call_tool("nap", {})

    result = asyncio.run(main())
    span = otel.span("tools/call nap")
    took = span.attributes["mcpio.duration_ms"]
    assert took == result["_meta"]["io.mcpio/durationMs"] and took >= 10
