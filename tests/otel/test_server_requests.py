"""A server's own requests to its client (elicitation, sampling, roots) are CLIENT spans, children
of the span of the request that made them, their context sent in ``_meta``."""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry.trace import SpanKind

from mcpio import Client, Context, Server
from tests.otel.conftest import Telemetry


def test_an_elicitation_is_a_client_span_under_the_tool_call(otel: Telemetry) -> None:
    server = Server("asker", telemetry=True)
    seen: list[dict[str, Any]] = []

    @server.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return str(answer)

    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"name": "Ada"}

    async def main() -> None:
        async with Client(server, era="legacy", elicitation=elicitation) as client:
            await client.call_tool("ask", {})

    asyncio.run(main())
    call = otel.span("tools/call ask")
    asked = otel.span("elicitation/create")
    assert asked.kind is SpanKind.CLIENT and call.kind is SpanKind.SERVER
    assert asked.parent is not None and asked.parent.span_id == call.context.span_id
    # the client was sent the context of the server's CLIENT span (SEP-414)
    trace_id, span_id = seen[0]["_meta"]["traceparent"].split("-")[1:3]
    assert int(trace_id, 16) == asked.context.trace_id and int(span_id, 16) == asked.context.span_id
    assert "Ada" not in otel.exported_text()
