"""Optional OpenTelemetry instrumentation (``pip install 'mcpio[otel]'``).

This package's ``__init__`` is the one seam the rest of mcpio touches, and it imports nothing
of OpenTelemetry: a server decides once, when it is built, whether to instrument
(``Server(telemetry=True)``, or ``MCPIO_OTEL=1`` in the environment, which ``mcpio run --otel``
sets), and only then are :mod:`._server` and :mod:`._asgi` (and with them ``opentelemetry``)
imported; a client likewise (``Client(telemetry=True)``: :mod:`._client`). Disabled, the session
engine calls the server's own request handler and the HTTP app is served unwrapped: no wrapper
on the hot path, nothing to check per request.

Why opt-in rather than "on whenever an OpenTelemetry SDK is configured": finding out whether one
is configured means importing ``opentelemetry`` in every server (and ``import mcpio`` stays free
of it); and a host application that traces its own work should not start exporting a span per
MCP request without asking for it. With the API installed and no SDK configured, enabled
instrumentation costs little (the API's no-op tracer and meter).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._server._server import Server
    from .._session import RequestHandler

ENV = "MCPIO_OTEL"


def wanted(telemetry: bool | None) -> bool:
    """``telemetry`` as passed to ``Server(telemetry=...)``; None: the ``MCPIO_OTEL`` variable
    (``1``/``true``/``yes``/``on``)."""
    if telemetry is not None:
        return bool(telemetry)
    return os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes", "on")


def traced(server: Server, handle: RequestHandler) -> RequestHandler:
    """The ``on_request`` the sessions of an instrumented server run: ``handle`` (the server's own)
    wrapped in one span and one measurement per request.

    Raises RuntimeError (what to install) when opentelemetry-api is not installed."""
    try:
        from . import _server
    except ImportError:
        raise RuntimeError(
            "telemetry needs the OpenTelemetry API: pip install 'mcpio[otel]' "
            f"(or build the Server with telemetry=False and unset {ENV})"
        ) from None
    return _server.instrument(server, handle)


def client_requests(telemetry: bool | None) -> Callable[[Any], Any] | None:
    """For ``Client(telemetry=...)``: None when off, else the function that wraps an era's
    ``request`` in a CLIENT span whose context travels in ``params._meta`` (:mod:`._client`).
    Raises RuntimeError (what to install) when wanted and opentelemetry-api is missing."""
    if not wanted(telemetry):
        return None
    try:
        from ._client import traced
    except ImportError:
        raise RuntimeError(
            f"telemetry needs the OpenTelemetry API: pip install 'mcpio[otel]' (or pass telemetry=False, unset {ENV})"
        ) from None
    return traced


def http_app(server: Server, app: Any) -> Any:
    """``app`` (the server's ASGI app), wrapped to read W3C trace context from HTTP headers and
    count open SSE streams when the server is instrumented; else ``app`` itself."""
    if not server.telemetry:
        return app
    from ._asgi import TracedApp

    return TracedApp(app)
