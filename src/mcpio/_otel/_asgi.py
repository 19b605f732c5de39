"""The HTTP side of the instrumentation: an ASGI wrapper around the server's Streamable HTTP app.

Two things only HTTP has, both handled here so that the app and the session engine know nothing
of OpenTelemetry:

* W3C trace context in the ``traceparent`` / ``tracestate`` (and ``baggage``) headers of a POST. The MCP span's
  parent comes from the request's ``params._meta`` (SEP-414; :mod:`._server`), because one HTTP
  request may carry several MCP messages and a legacy session's requests run in the task of the
  POST that opened it, not of the POST that carried them. So the header is copied into the
  ``_meta`` of each request in the body that has no ``traceparent`` of its own (``_meta`` wins):
  the handler then sees what a client that propagates through ``_meta`` would have sent.
  Nothing is rewritten without a ``traceparent`` header, and bodies past the app's size limit
  are passed on untouched (the app refuses them).
* ``mcpio.server.sse_streams``: SSE responses open now (an up-down counter: +1 when a response
  starts with ``text/event-stream``, -1 when it ends, however it ends).
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any

import msgspec
from opentelemetry import metrics

from .._version import __version__
from ._server import SCOPE

if TYPE_CHECKING:
    from .._transports._http_server import StreamableHTTPApp

# W3C Trace Context, version 00 (https://www.w3.org/TR/trace-context/#traceparent-header)
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")


class TracedApp:
    """``app`` with trace context read from headers and SSE streams counted.

    What ``Server.http_app`` returns with telemetry on, so the app's public attributes are read
    through it, each declared here: its options (``path``, ``allowed_hosts``, ``max_body_size`` …
    as passed to ``http_app``), its open legacy ``sessions``, ``draining``, ``lifespan`` (for
    frameworks that do not forward ASGI lifespan events to a mounted app) and ``aclose``. The
    app itself is ``__wrapped__`` (the attribute of a wrapper, ``inspect.unwrap``): what drains."""

    def __init__(self, app: StreamableHTTPApp) -> None:
        self.app = self.__wrapped__ = app
        meter = metrics.get_meter(SCOPE, __version__)
        self._streams = meter.create_up_down_counter(
            "mcpio.server.sse_streams", unit="{stream}", description="Server-Sent Events responses open now."
        )

    @property
    def path(self) -> str:
        return self.app.path

    @property
    def allowed_hosts(self) -> tuple[str, ...]:
        return self.app.allowed_hosts

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        return self.app.allowed_origins

    @property
    def max_body_size(self) -> int:
        return self.app.max_body_size

    @property
    def session_timeout(self) -> float:
        return self.app.session_timeout

    @property
    def max_sessions(self) -> int:
        return self.app.max_sessions

    @property
    def event_store(self) -> Any:
        return self.app.event_store

    @property
    def state(self) -> Any:
        return self.app.state

    @property
    def retry_ms(self) -> int:
        return self.app.retry_ms

    @property
    def keepalive(self) -> float:
        return self.app.keepalive

    @property
    def sse_after(self) -> float:
        return self.app.sse_after

    @property
    def sessions(self) -> dict[str, Any]:
        return self.app.sessions

    @property
    def draining(self) -> bool:
        return self.app.draining

    def lifespan(self, app: Any = None) -> contextlib.AbstractAsyncContextManager[None]:
        return self.app.lifespan(app)

    async def aclose(self) -> None:
        await self.app.aclose()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "POST":
            receive = _with_context(scope, receive, self.app.max_body_size)
        streaming = False
        counter = self._streams

        async def counting_send(message: dict[str, Any]) -> None:
            nonlocal streaming
            if message.get("type") == "http.response.start" and not streaming:
                for k, v in message.get("headers") or ():
                    if k.lower() == b"content-type" and v.startswith(b"text/event-stream"):
                        streaming = True
                        counter.add(1)
                        break
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            if streaming:
                counter.add(-1)


def _with_context(scope: dict[str, Any], receive: Any, limit: int) -> Any:
    """``receive`` whose body has the headers' trace context in each request's ``_meta``."""
    carrier: dict[str, str] = {}
    for k, v in scope.get("headers") or ():
        name = k.lower()
        if name in (b"traceparent", b"tracestate", b"baggage"):
            carrier[name.decode()] = v.decode("latin-1").strip()
    if not _TRACEPARENT.match(carrier.get("traceparent", "")):
        return receive
    pending: list[dict[str, Any]] = []

    async def read() -> dict[str, Any]:
        if pending:
            return pending.pop(0)
        chunks: list[bytes] = []
        size = 0
        while True:
            message: dict[str, Any] = await receive()
            if message.get("type") != "http.request":
                return message
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # too large: the app refuses it; hand it over as it came
                out = [{"type": "http.request", "body": c, "more_body": True} for c in chunks]
                out[-1]["more_body"] = message.get("more_body", False)
                pending.extend(out[1:])
                return out[0]
            if not message.get("more_body", False):
                return {"type": "http.request", "body": _inject(b"".join(chunks), carrier), "more_body": False}

    return read


def _inject(body: bytes, carrier: dict[str, str]) -> bytes:
    try:
        decoded = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return body  # the app answers the parse error
    changed = False
    for message in decoded if isinstance(decoded, list) else [decoded]:
        if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
            continue  # only requests are spanned
        params = message.setdefault("params", {})
        if not isinstance(params, dict):
            continue
        meta = params.setdefault("_meta", {})
        if isinstance(meta, dict) and "traceparent" not in meta:
            meta.update(carrier)
            changed = True
    return msgspec.json.encode(decoded) if changed else body
