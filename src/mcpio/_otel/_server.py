"""One span and one measurement per MCP request a server handles (imported only when enabled).

Names and attributes follow the OpenTelemetry semantic conventions for MCP (gen-ai/mcp.md,
status Development): a SERVER span named ``{mcp.method.name} {target}`` (target: the tool or
prompt name), with ``mcp.method.name``, ``jsonrpc.request.id``, ``mcp.protocol.version``,
``mcp.session.id`` (hashed, see :func:`_session_facts`), ``network.transport``,
``gen_ai.tool.name`` + ``gen_ai.operation.name`` (tools/call), ``gen_ai.prompt.name``,
``mcp.resource.uri`` (static resources only), and on failure ``error.type`` and
``rpc.response.status_code``. Its parent is the W3C trace context in the request's
``params._meta`` (``traceparent``/``tracestate``/``baggage``, unprefixed: SEP-414), extracted
with the globally configured propagators; over HTTP the ``traceparent`` header stands in when
``_meta`` has none (:mod:`._asgi`). No attribute ever holds an argument value, a result, a
header, a token or a raw session id; error messages are left out too (they may quote input).

Metrics: ``mcp.server.operation.duration`` (histogram, s, the convention's buckets), whose count
is the number of requests by method and outcome (``error.type``: absent when it succeeded, else
the JSON-RPC code, ``tool_error``, ``cancelled`` or the exception's type; a separate counter
would cost a second measurement per request for the same numbers), and ``mcpio.server.sessions``
(sessions open now, read when the metrics are collected).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import weakref
from typing import TYPE_CHECKING, Any

from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from .._errors import INTERNAL_ERROR, MCPError
from .._transports._base import abilities, routing_key
from .._version import __version__

if TYPE_CHECKING:
    from .._protocol._events import RequestReceived
    from .._server._server import Server
    from .._session import RequestHandler, Session

SCOPE = "mcpio"
# gen-ai/mcp.md, mcp.server.operation.duration: ExplicitBucketBoundaries
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_STATE_KEY = "mcpio.otel"  # in Session.state: (mcp.session.id or None, network.transport or None)
_PROPAGATION_KEYS = ("traceparent", "tracestate", "baggage")

_servers: weakref.WeakSet[Server] = weakref.WeakSet()  # whose sessions the gauge counts


def instrument(server: Server, handle: RequestHandler) -> RequestHandler:
    """``handle`` (``server``'s own request handler) inside a span and a duration measurement."""
    tracer = trace.get_tracer(SCOPE, __version__)
    meter = metrics.get_meter(SCOPE, __version__)
    duration = meter.create_histogram(
        "mcp.server.operation.duration",
        unit="s",
        description="MCP request duration as observed on the receiver from the time it was received "
        "until the result or error is sent.",
        explicit_bucket_boundaries_advisory=list(BUCKETS),
    )
    _sessions_gauge(meter)
    _servers.add(server)

    async def on_request(session: Session, ev: RequestReceived) -> Any:
        attrs = _attributes(server, session, ev)
        name = ev.method
        target = attrs.get("gen_ai.tool.name", attrs.get("gen_ai.prompt.name"))
        if target is not None:
            name = f"{name} {target}"
        error: str | None = None
        code: str | None = None
        t0 = time.perf_counter()
        with tracer.start_as_current_span(
            name,
            context=_parent(ev.params),
            kind=SpanKind.SERVER,
            attributes=attrs,
            record_exception=False,  # exception texts may quote arguments: never on a span
            set_status_on_exception=False,
        ) as span:
            try:
                result = await handle(session, ev)
            except asyncio.CancelledError:
                error = "cancelled"
                raise
            except MCPError as exc:
                error = code = str(exc.code)
                raise
            except Exception as exc:
                code, error = str(INTERNAL_ERROR), type(exc).__qualname__
                raise
            else:
                if ev.method == "tools/call" and isinstance(result, dict) and result.get("isError") is True:
                    error = "tool_error"
                return result
            finally:
                end(span, duration, t0, _metric_attributes(attrs), error, code)

    return on_request


def end(span: Any, duration: Any, t0: float, metric_attrs: dict[str, Any], error: str | None, code: Any) -> None:
    """Close the books of one request, server or client side: the outcome on its span (no
    description: messages may quote input) and its duration with the same outcome."""
    if error is not None:
        span.set_attribute("error.type", error)
        span.set_status(Status(StatusCode.ERROR))
        metric_attrs["error.type"] = error
    if code is not None:
        span.set_attribute("rpc.response.status_code", code)
        metric_attrs["rpc.response.status_code"] = code
    duration.record(time.perf_counter() - t0, metric_attrs)


def _parent(params: dict[str, Any] | None) -> Any:
    """The context ``params._meta`` carries (SEP-414's unprefixed keys), or None: the current one."""
    meta = params.get("_meta") if params else None
    if not isinstance(meta, dict) or "traceparent" not in meta:
        return None
    carrier = {k: v for k in _PROPAGATION_KEYS if isinstance(v := meta.get(k), str)}
    return propagate.extract(carrier)


def _attributes(server: Server, session: Session, ev: RequestReceived) -> dict[str, Any]:
    attrs: dict[str, Any] = {"mcp.method.name": ev.method}
    if ev.id is not None:
        attrs["jsonrpc.request.id"] = str(ev.id)
    if ev.version is not None:
        attrs["mcp.protocol.version"] = ev.version
    facts = session.state.get(_STATE_KEY)
    if facts is None:
        facts = session.state[_STATE_KEY] = _session_facts(session)
    sid, transport = facts
    if sid is not None:
        attrs["mcp.session.id"] = sid
    if transport is not None:
        attrs["network.transport"] = transport
    params = ev.params or {}
    name = params.get("name")
    registry = server.registry
    # Only names this server knows: a client cannot mint attribute values (cardinality) at will.
    if ev.method == "tools/call" and isinstance(name, str) and name in registry.tools:
        attrs["gen_ai.tool.name"] = name
        attrs["gen_ai.operation.name"] = "execute_tool"
    elif ev.method == "prompts/get" and isinstance(name, str) and name in registry.prompts:
        attrs["gen_ai.prompt.name"] = name
    elif ev.method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        uri = params.get("uri")
        # A static resource's URI names it; a template's URI carries the client's values, so
        # the template stands in for it.
        if isinstance(uri, str) and uri in registry.resources:
            attrs["mcp.resource.uri"] = uri
        elif isinstance(uri, str) and (found := registry.find_resource(uri)) is not None:
            attrs["mcpio.resource.template"] = found[0].uri
    return attrs


_METRIC_KEYS = (
    "mcp.method.name",
    "mcp.protocol.version",
    "network.transport",
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "gen_ai.operation.name",
)


def _metric_attributes(attrs: dict[str, Any]) -> dict[str, Any]:
    """The low-cardinality part of a span's attributes (no request or session ids, no URIs)."""
    return {k: attrs[k] for k in _METRIC_KEYS if k in attrs}


def _session_facts(session: Session) -> tuple[str | None, str | None]:
    """``mcp.session.id`` and ``network.transport`` of a session.

    The Streamable HTTP session id is a bearer capability (who knows it may post to the session),
    so it never reaches a trace as such: its SHA-256, first 16 hex digits, correlates a session's
    spans without revealing it. stdio is ``pipe``, HTTP ``tcp``; in-memory has no value."""
    key = routing_key(session.transport)
    module = type(key).__module__
    if module.startswith("mcpio._transports._http"):
        sid = abilities(session.transport).session_id
        digest = hashlib.sha256(sid.encode()).hexdigest()[:16] if sid else None
        return digest, "tcp"
    if module.startswith(("mcpio._transports._stdio", "mcpio._transports._threadpipes")):
        return None, "pipe"
    return None, None


_gauge_made = False


def _sessions_gauge(meter: Any) -> None:
    """``mcpio.server.sessions``: the sessions open now (stdio connections and legacy HTTP
    sessions; a 2026-07-28 request is not a session), counted when metrics are collected."""
    global _gauge_made
    if _gauge_made:
        return
    _gauge_made = True

    def observe(options: Any) -> list[metrics.Observation]:
        out = []
        for server in _snapshot(_servers):
            n = len(server.open_sessions())
            out.append(metrics.Observation(n, {"mcpio.server.name": server.name}))
        return out

    meter.create_observable_up_down_counter(
        "mcpio.server.sessions", [observe], unit="{session}", description="MCP sessions open now."
    )


def _snapshot(items: weakref.WeakSet[Any]) -> list[Any]:
    """The members of a set the event loop changes while an exporter's thread reads it (a copy
    fails when it changes size meanwhile: try again; the count is read again next collection)."""
    for _ in range(10):
        try:
            return list(items)
        except RuntimeError:
            continue
    return []
