"""``Timing``: how long each request took, where it can be read.

The duration is measured around the rest of the chain (the middleware registered after it and
the handler), in milliseconds, and shown three ways:

* in the result's ``_meta`` as ``"io.mcpio/durationMs"`` (``meta=True``, the default; a refused
  request has no result, so errors carry none): the client sees it, in both eras;
* one log line on the ``mcpio.timing`` logger at DEBUG (``logger=``, ``level=``), ``tools/call
  add 1.234 ms``, for a request that failed too;
* when the server is instrumented with OpenTelemetry (``Server(telemetry=True)``, ``mcpio run
  --otel``), the attribute ``mcpio.duration_ms`` on the request's span (only if OpenTelemetry is
  already loaded: Timing imports nothing of it).
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TYPE_CHECKING, Any

from ._logs import shown_name

if TYPE_CHECKING:
    from .._server._middleware import CallNext, Request

META_KEY = "io.mcpio/durationMs"
SPAN_ATTRIBUTE = "mcpio.duration_ms"


class Timing:
    """Middleware: measure each request (see the module docstring). Register it first (the
    outermost) to measure everything the other middleware does too."""

    def __init__(self, *, meta: bool = True, logger: str | logging.Logger = "mcpio.timing", level: int = logging.DEBUG):
        self.meta = meta
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level

    def __repr__(self) -> str:
        return f"Timing(meta={self.meta}, logger={self.logger.name!r})"

    async def __call__(self, request: Request, call_next: CallNext) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            result = await call_next(request)
        finally:
            ms = round((time.perf_counter() - started) * 1000, 3)
            self._report(request, ms)
        if self.meta and isinstance(result, dict):
            meta = result.get("_meta")
            result["_meta"] = {**meta, META_KEY: ms} if isinstance(meta, dict) else {META_KEY: ms}
        return result

    def _report(self, request: Request, ms: float) -> None:
        if self.logger.isEnabledFor(self.level):
            name = shown_name(request)
            self.logger.log(self.level, "%s%s %.3f ms", request.method, f" {name}" if name else "", ms)
        trace = sys.modules.get("opentelemetry.trace")
        if trace is not None:
            span = trace.get_current_span()
            if span.is_recording():
                span.set_attribute(SPAN_ATTRIBUTE, ms)
