"""One CLIENT span per request a :class:`~mcpio.Client` sends, and per request an instrumented
server sends its client (``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots``: a child of the
span of the request being served). Imported only when enabled.

The span (OpenTelemetry semantic conventions for MCP, gen-ai/mcp.md) is named
``{mcp.method.name} {target}`` and carries ``mcp.method.name``, ``gen_ai.tool.name`` +
``gen_ai.operation.name`` (tools/call) or ``gen_ai.prompt.name``, and on failure ``error.type``
and ``rpc.response.status_code``. Its context is injected, with the configured propagators,
into the request's ``params._meta`` (``traceparent``/``tracestate``/``baggage``, unprefixed:
SEP-414), so the server's span becomes its child on any transport; keys the caller put in
``_meta`` itself win. The caller's ``params`` are never modified (a copy is sent). Metric:
``mcp.client.operation.duration`` (histogram, s).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind

from .._errors import MCPError
from .._version import __version__
from ._server import BUCKETS, SCOPE, end

Request = Callable[..., Awaitable[Any]]

_tracer = trace.get_tracer(SCOPE, __version__)
_duration = metrics.get_meter(SCOPE, __version__).create_histogram(
    "mcp.client.operation.duration",
    unit="s",
    description="MCP request duration as observed on the sender, from sending it until the response is received.",
    explicit_bucket_boundaries_advisory=list(BUCKETS),
)


def traced(request: Request) -> Request:
    """``request(session, method, params, **options)`` (an era's) inside a CLIENT span."""

    async def send(session: Any, method: str, params: dict[str, Any] | None, **options: Any) -> Any:
        attrs: dict[str, Any] = {"mcp.method.name": method}
        name = params.get("name") if isinstance(params, dict) else None
        if isinstance(name, str) and method == "tools/call":
            attrs["gen_ai.tool.name"] = name
            attrs["gen_ai.operation.name"] = "execute_tool"
        elif isinstance(name, str) and method == "prompts/get":
            attrs["gen_ai.prompt.name"] = name
        error: str | None = None
        code: str | None = None
        t0 = time.perf_counter()
        span_name = f"{method} {name}" if "gen_ai.tool.name" in attrs or "gen_ai.prompt.name" in attrs else method
        with _tracer.start_as_current_span(
            span_name, kind=SpanKind.CLIENT, attributes=attrs, record_exception=False, set_status_on_exception=False
        ) as span:
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            if carrier:
                params = dict(params or {})
                meta = params.get("_meta")
                params["_meta"] = {**carrier, **meta} if isinstance(meta, dict) else carrier
            try:
                result = await request(session, method, params, **options)
            except MCPError as exc:
                error = code = str(exc.code)
                raise
            except asyncio.CancelledError:
                error = "cancelled"
                raise
            except Exception as exc:
                error = type(exc).__qualname__
                raise
            else:
                if method == "tools/call" and isinstance(result, dict) and result.get("isError") is True:
                    error = "tool_error"
                return result
            finally:
                end(span, _duration, t0, attrs, error, code)

    return send
