"""Ready-made middleware: rate limits, a response cache, timing and structured request logs.

Register them like any middleware (the first registered is the outermost)::

    from mcpio import Server
    from mcpio.middleware import RateLimit, ResponseCache, StructuredLogging, Timing

    server = Server("demo")
    server.middleware(StructuredLogging())           # one JSON line per request
    server.middleware(Timing())                      # _meta["io.mcpio/durationMs"]
    server.middleware(RateLimit(rate="120/minute", burst=20))
    server.middleware(ResponseCache(ttl=30))         # last: it keeps what the inner ones answer

Each works on every transport and in both eras; see docs/guides/middleware.md. ``import mcpio``
does not load this module, and this module loads no Redis: the shared rate-limit buckets
(:mod:`mcpio._state._redis_buckets`) are imported when a server with a Redis state backend
takes its first token.
"""

from __future__ import annotations

from .._errors import RATE_LIMITED
from ._cache import ResponseCache
from ._logs import StructuredLogging
from ._ratelimit import RateLimit, RateLimited
from ._timing import Timing

__all__ = ["RATE_LIMITED", "RateLimit", "RateLimited", "ResponseCache", "StructuredLogging", "Timing"]
