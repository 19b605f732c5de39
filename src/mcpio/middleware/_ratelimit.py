"""``RateLimit``: token buckets per caller, shared through Redis when the server's state is there.

A bucket holds at most ``burst`` tokens and gains ``rate`` per second; each limited request takes
one. A request that finds the bucket empty is refused with :class:`RateLimited`, a JSON-RPC error
(code :data:`~mcpio._errors.RATE_LIMITED`, ``data.retryAfter`` in seconds) and nothing of the
request runs. Also for ``tools/call``: the refusal is the client's to act on (wait, then retry),
not a result of the tool for the model to read, and every client library surfaces a JSON-RPC
error as a failed request it can retry; over HTTP the answer is 200 with the error and its id
(an HTTP 429 is a transport failure to clients and loses the request's id).

Where buckets live: on the server's Redis state backend when it has one (``mcpio run --redis``,
``http_app(state=RedisState(...))``), one atomic script per take (:mod:`mcpio._state._redis_buckets`),
so every process sharing the database draws from the same buckets; else in this process
(bounded: the least recently used buckets are dropped past ``max_keys``). While Redis cannot be
reached, the buckets of this process stand in (a warning is logged), so the limit still holds
per process and nobody is refused for Redis's sake.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .. import _log
from .._errors import RATE_LIMITED, MCPError
from . import _identity

if TYPE_CHECKING:
    from .._server._middleware import CallNext, Request

log = _log.logger("mcpio.middleware", globals())

# Never limited unless named in methods=: the handshake and the liveness check.
EXEMPT = frozenset({"initialize", "ping"})
_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0, "h": 3600.0, "hour": 3600.0}


class RateLimited(MCPError):
    """A request refused by :class:`RateLimit`: the caller sent too many; ``retry_after`` seconds
    from now one more will be accepted (``data.retryAfter`` on the wire)."""

    code = RATE_LIMITED

    def __init__(self, message: str, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(message, RATE_LIMITED, {"retryAfter": retry_after})


class MemoryBuckets:
    """Token buckets in this process, at most ``max_keys`` (least recently used dropped first:
    a dropped bucket reads as full again)."""

    def __init__(self, max_keys: int = 100_000) -> None:
        self.max_keys = max_keys
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at), oldest use first

    def take(self, key: str, rate: float, burst: float, cost: float = 1.0) -> float:
        now = time.monotonic()
        tokens, at = self._buckets.pop(key, (burst, now))
        tokens = min(burst, tokens + max(0.0, now - at) * rate)
        wait = 0.0
        if tokens >= cost:
            tokens -= cost
        else:
            wait = (cost - tokens) / rate
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > self.max_keys:
            del self._buckets[next(iter(self._buckets))]
        return wait


def parse_rate(rate: float | str) -> float:
    """Requests per second from ``10`` (per second), ``0.5`` or ``"100/minute"`` (``s``, ``min``,
    ``h``, ``second``, ``minute``, ``hour``, optionally with a count: ``"5/10s"``)."""
    if isinstance(rate, str):
        count, sep, unit = rate.replace(" ", "").partition("/")
        digits = unit.rstrip("abcdefghijklmnopqrstuvwxyz")
        name = unit[len(digits) :]
        name = name if name in _UNITS or len(name) < 4 else name.removesuffix("s")  # "minutes"; not "ms"
        try:
            value = float(count) / (float(digits or 1) * _UNITS[name]) if sep else float(count)
        except (ValueError, KeyError):
            raise ValueError(f"rate must be a number per second or like '100/minute', not {rate!r}") from None
    else:
        value = float(rate)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"rate must be more than 0 requests per second, not {rate!r}")
    return value


class RateLimit:
    """Middleware: at most ``burst`` requests at once and ``rate`` per second on average, per
    caller (see the module docstring and docs/guides/middleware.md).

    ``per``: ``"principal"`` (the authenticated principal; without auth the HTTP client address,
    an IPv6 one by its /64; over stdio the connection), ``"address"`` (the HTTP client address,
    an IPv6 one by its /64: ``_identity.network``), or a function of the
    :class:`~mcpio.Request` returning the bucket's key (None: not limited). ``methods``: the
    methods limited (default: all but ``initialize`` and ``ping``). ``name``: the limit's name in
    the shared store (default: made of its settings, so processes with the same settings share
    buckets); two limits of one server need different names if their settings are the same.
    """

    def __init__(
        self,
        rate: float | str,
        burst: int | None = None,
        *,
        per: str | Callable[[Request], str | None] = "principal",
        methods: Iterable[str] | None = None,
        name: str | None = None,
        max_keys: int = 100_000,
    ) -> None:
        self.rate = parse_rate(rate)
        self.burst = float(burst if burst is not None else max(1, math.ceil(self.rate)))
        if self.burst < 1:
            raise ValueError(f"burst must be at least 1 request, not {burst!r}")
        if per not in ("principal", "address") and not callable(per):
            raise ValueError(f"per must be 'principal', 'address' or a function of the request, not {per!r}")
        self.per = per
        self.methods = frozenset(methods) if methods is not None else None
        if isinstance(methods, str):
            raise TypeError(f"methods must be a collection of method names, not the string {methods!r}")
        who = per if isinstance(per, str) else getattr(per, "__qualname__", "custom")
        self.name = name or _identity.digest(f"{self.rate!r}|{self.burst!r}|{who}|{sorted(self.methods or ())}", 16)
        self._memory = MemoryBuckets(max_keys)
        self._shared: tuple[Any, Any] | None = None  # (state backend, its RedisBuckets)
        self._warned = 0.0

    def __repr__(self) -> str:
        return f"RateLimit(rate={self.rate}/s, burst={self.burst:g}, per={self.per!r})"

    async def __call__(self, request: Request, call_next: CallNext) -> dict[str, Any]:
        method = request.method
        if (method not in self.methods) if self.methods is not None else (method in EXEMPT):
            return await call_next(request)
        key = self._key(request)
        if key is not None:
            wait = await self._take(request, _identity.digest(key, 32))
            if wait > 0:
                raise RateLimited(self._refusal(wait), math.ceil(wait * 1000) / 1000)
        return await call_next(request)

    def _key(self, request: Request) -> str | None:
        if self.per == "principal":
            return _identity.bucket(request.context)
        if self.per == "address":
            return _identity.network(request.context)
        assert callable(self.per)
        key = self.per(request)
        return None if key is None else str(key)

    def _refusal(self, wait: float) -> str:
        who = {"principal": "this caller", "address": "this client address"}.get(str(self.per), "this client")
        per_s = next(
            f"{self.rate * seconds:.3g} per {unit}"
            for seconds, unit in ((1, "second"), (60, "minute"), (3600, "hour"))
            if self.rate * seconds >= 1 or unit == "hour"
        )
        return (
            f"Rate limit exceeded: {who} sent more than {self.burst:g} requests at once or {per_s} "
            f"on average; retry in {math.ceil(wait * 10) / 10:.1f} s"
        )

    async def _take(self, request: Request, key: str) -> float:
        backend = request.context.server.state_backend  # http_app(state=...): None over stdio
        if backend is not None and getattr(backend, "client", None) is not None:  # RedisState
            shared = self._shared
            if shared is None or shared[0] is not backend:
                from .._state._redis_buckets import RedisBuckets

                shared = self._shared = (backend, RedisBuckets(backend))
            from .._state._base import StateUnavailable

            try:
                return float(await shared[1].take(self.name, key, self.rate, self.burst))
            except StateUnavailable as exc:
                now = time.monotonic()
                if now - self._warned > 60:
                    self._warned = now
                    log.warning("rate limit %s: %s; limiting in this process meanwhile", self.name, exc)
        return self._memory.take(key, self.rate, self.burst)
