"""Where the OAuth proxy keeps what it remembers: registered clients, sign-ins in progress,
consents, codes, token families and the IdP's tokens. Every entry has a lifetime; every kind has
a cap, and a full store *refuses* (:class:`StoreFull`: the proxy answers 503 with Retry-After),
it never drops a live entry to make room. Entries that are not used yet are short-lived (an
unconfirmed registration: a day) so abandoned ones make room by expiring.

:class:`MemoryProxyStore` keeps them in this process (one process, the default);
``_proxy_redis.RedisProxyStore`` keeps them on Redis, so every worker and replica sharing the
database sees the same clients, sign-ins, codes and grants, and one revocation reaches all.

A record is a ``dict[str, str]`` (``v``: the JSON value; other fields per kind). The operations
that decide who wins a race are atomic in both stores: :meth:`take` (one use of a sign-in, a
consent), :meth:`claim` (an authorization code's redemption: the first one sets the marker,
later ones read it and revoke), :meth:`rotate` (a refresh token: compare and swap of its digest)
and :meth:`revoke` (a family: gone, and a tombstone so that a family created concurrently by a
replayed code can never appear afterwards).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

RETRY_AFTER = 60  # seconds a client is asked to wait when a store is full
TOMB_TTL = 3600.0  # a revoked family stays refused this long (longer than any code's life)


class StoreFull(Exception):
    """A cap was reached: nothing was stored and nothing was dropped. ``who``: ``"all"`` (the
    store) or the limit key that was exceeded (``src:ADDRESS`` / ``client:ID``)."""

    def __init__(self, kind: str, who: str) -> None:
        super().__init__(f"{kind}: {who}")
        self.kind = kind
        self.who = who


class ProxyStore(Protocol):
    async def put(
        self,
        kind: str,
        key: str,
        record: dict[str, str],
        *,
        ttl: float,
        cap: int,
        limits: tuple[tuple[str, int], ...] = (),
        window: float = 0.0,
        unless_revoked: bool = False,
    ) -> None:
        """Store a new record; :class:`StoreFull` when ``cap`` records of ``kind`` are alive or
        one of ``limits`` (``(counter key, max)``: at most ``max`` puts per ``window`` seconds)
        is exceeded. ``unless_revoked``: StoreFull("revoked") when ``key`` was revoked."""
        ...

    async def get(self, kind: str, key: str) -> dict[str, str] | None: ...

    async def take(self, kind: str, key: str) -> dict[str, str] | None:
        """The record, deleted in the same step (one caller gets it)."""
        ...

    async def touch(self, kind: str, key: str, fields: dict[str, str], ttl: float) -> bool:
        """Set ``fields`` and a new lifetime; False when the record is gone."""
        ...

    async def claim(self, kind: str, key: str, field: str, value: str) -> str | None:
        """Set ``field`` unless set: None when the record is gone, ``""`` when this call set
        it, else the value a previous call set."""
        ...

    async def rotate(self, kind: str, key: str, expect: str, fields: dict[str, str], ttl: float) -> str:
        """When field ``r`` equals ``expect``: set ``fields`` (``r`` among them) and the new
        lifetime, ``"ok"``; ``"reused"`` when ``r`` differs; ``"gone"`` without a record."""
        ...

    async def revoke(self, kind: str, key: str) -> dict[str, str] | None:
        """Delete the record and remember ``key`` as revoked (:data:`TOMB_TTL`); the record."""
        ...

    async def count(self, kind: str) -> int: ...

    async def aclose(self) -> None: ...


class MemoryProxyStore:
    """The :class:`ProxyStore` of one process (see the module docstring)."""

    def __init__(self) -> None:
        self._kinds: dict[str, dict[str, tuple[float, dict[str, str]]]] = {}
        self._counters: dict[str, tuple[float, int]] = {}
        self._tombs: dict[str, float] = {}

    def _live(self, kind: str, key: str) -> dict[str, str] | None:
        items = self._kinds.get(kind)
        item = items.get(key) if items is not None else None
        if item is None:
            return None
        if time.monotonic() >= item[0]:
            del self._kinds[kind][key]
            return None
        return item[1]

    async def put(
        self,
        kind: str,
        key: str,
        record: dict[str, str],
        *,
        ttl: float,
        cap: int,
        limits: tuple[tuple[str, int], ...] = (),
        window: float = 0.0,
        unless_revoked: bool = False,
    ) -> None:
        now = time.monotonic()
        items = self._kinds.setdefault(kind, {})
        if unless_revoked and self._tombs.get(kind + ":" + key, 0.0) > now:
            raise StoreFull(kind, "revoked")
        if len(items) >= cap:
            for k in [k for k, (deadline, _) in items.items() if now >= deadline]:
                del items[k]
            if len(items) >= cap:
                raise StoreFull(kind, "all")
        counts = {}
        for counter, most in limits:  # every limit is checked before any is counted
            end, n = self._counters.get(kind + ":" + counter, (0.0, 0))
            if now >= end:
                end, n = now + window, 0
            if n >= most:
                raise StoreFull(kind, counter)
            counts[kind + ":" + counter] = (end, n + 1)
        self._counters.update(counts)
        if len(self._counters) > 100_000:  # abandoned counters of many addresses
            self._counters = {k: v for k, v in self._counters.items() if v[0] > now}
        items[key] = (now + ttl, dict(record))

    async def get(self, kind: str, key: str) -> dict[str, str] | None:
        found = self._live(kind, key)
        return dict(found) if found is not None else None

    async def take(self, kind: str, key: str) -> dict[str, str] | None:
        found = self._live(kind, key)
        if found is not None:
            del self._kinds[kind][key]
        return found

    async def touch(self, kind: str, key: str, fields: dict[str, str], ttl: float) -> bool:
        found = self._live(kind, key)
        if found is None:
            return False
        self._kinds[kind][key] = (time.monotonic() + ttl, {**found, **fields})
        return True

    async def claim(self, kind: str, key: str, field: str, value: str) -> str | None:
        found = self._live(kind, key)
        if found is None:
            return None
        if field in found:
            return found[field]
        found[field] = value
        return ""

    async def rotate(self, kind: str, key: str, expect: str, fields: dict[str, str], ttl: float) -> str:
        found = self._live(kind, key)
        if found is None:
            return "gone"
        if found.get("r") != expect:
            return "reused"
        self._kinds[kind][key] = (time.monotonic() + ttl, {**found, **fields})
        return "ok"

    async def revoke(self, kind: str, key: str) -> dict[str, str] | None:
        now = time.monotonic()
        found = self._live(kind, key)
        self._kinds.get(kind, {}).pop(key, None)
        self._tombs[kind + ":" + key] = now + TOMB_TTL
        if len(self._tombs) > 100_000:
            self._tombs = {k: v for k, v in self._tombs.items() if v > now}
        return found

    async def count(self, kind: str) -> int:
        now = time.monotonic()
        return sum(1 for deadline, _ in self._kinds.get(kind, {}).values() if now < deadline)

    async def aclose(self) -> None:
        return None


def store_for(state: Any) -> ProxyStore | None:
    """The store a server's state backend implies: on Redis when the backend is shared by several
    processes (it has a session directory), else None (the proxy's own memory store)."""
    if state is None or getattr(state, "sessions", None) is None:
        return None
    from ._proxy_redis import RedisProxyStore

    return RedisProxyStore(state)
