"""The client's result cache: list results and ``resources/read``, kept for the server's hints.

Contract (2026-07-28 ``CacheableResult``, spec-notes §5: ``ttlMs`` int >= 0 and ``cacheScope``
"public" | "private" on tools/list, prompts/list, resources/list, resources/templates/list and
resources/read):

* **What is kept, and for how long.** A list (every page, as one entry) or a read result is kept
  ``ttlMs`` milliseconds; a list's lifetime is its shortest page's. ``ttlMs: 0`` is never kept. A
  result without a valid ``ttlMs`` (every legacy-era result; a modern server that omits it) is
  kept only for ``Client(cache_ttl=seconds)``, which the user sets explicitly; the default
  (None) keeps nothing the server did not date.
* **Who may see it.** A ``"private"`` answer is stored under a partition derived from the
  credentials this client sends (every HTTP header, the subprocess ``env``, the ``auth=``
  object: Clients given the same object share it, no other does), hashed: a token is never part of a key or a value. Clients with other credentials
  sharing the same store never read it. ``"public"`` answers are shared by every client of the
  server. A missing or unknown scope (and every result without hints) counts as private.
* **Whose answers.** Keys are namespaced by the server (the transport's identity: URL, command
  line and ``env``, in-memory object), the client extensions declared (they can change tools/list) and the
  negotiated protocol version (definitions are cut to it).
* **Invalidation.** ``notifications/{tools,prompts,resources}/list_changed`` drop the affected
  lists in every partition (``resources/list_changed`` drops resources and templates);
  ``notifications/resources/updated`` drops the reads of its URI. A fetch that was in flight when
  such a notification arrived is returned but not stored (it may predate the change).
* **Copies.** Values are stored as JSON bytes and decoded on every hit: a caller mutating what
  it got never changes the cache.
* **Per call**, ``cache_mode``: ``"use"`` (default) reads then stores; ``"refresh"`` skips the
  read, fetches and stores; ``"bypass"`` neither reads nor stores.
* **A store that fails** (Redis down) is logged as a warning and the request goes to the server:
  a cache never fails a call. It is then left alone for ``RETRY_AFTER`` seconds (invalidations
  excepted), so a store that hangs costs one timeout per outage.
"""

from __future__ import annotations

import logging
import os
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import msgspec

if TYPE_CHECKING:
    from ._client import Client

log = logging.getLogger("mcpio.client")

T = TypeVar("T")
MODES = ("use", "refresh", "bypass")
RETRY_AFTER = 5.0  # seconds without the store after it failed
_SALT = os.urandom(16).hex()  # identities that cannot outlive this process (an auth object)
# notification -> the methods whose entries it makes stale (resources/updated: per URI, below)
_STALE = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


@runtime_checkable
class ClientCache(Protocol):
    """Where a :class:`~mcpio.Client` keeps results: :class:`MemoryCache`, :class:`RedisCache`,
    or your own. Keys are ``str``; values are JSON ``bytes``; ``ttl`` is in seconds (> 0)."""

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, ttl: float) -> None: ...

    async def delete(self, key: str) -> None: ...

    async def clear(self, prefix: str = "") -> None:
        """Drop every entry whose key starts with ``prefix`` (all of them for "")."""


class MemoryCache:
    """A :class:`ClientCache` in this process: at most ``max_entries`` entries, the least
    recently used evicted first, each dropped when its TTL passes. One may serve many Clients."""

    def __init__(self, max_entries: int = 1024) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, not {max_entries!r}")
        self.max_entries = max_entries
        self._entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: str) -> bytes | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] <= time.monotonic():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry[1]

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        self._entries[key] = (time.monotonic() + ttl, bytes(value))
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    async def delete(self, key: str) -> None:
        self._entries.pop(key, None)

    async def clear(self, prefix: str = "") -> None:
        for key in [k for k in self._entries if k.startswith(prefix)]:
            del self._entries[key]


def _digest(*parts: str) -> str:
    import hashlib  # here and below: a client without a cache never needs it (a gateway's boot)

    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


_MARKS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _mark(auth: Any) -> str:
    """A random name of the ``auth`` object, the same for as long as it lives (Clients sharing it
    share its partition) and never given to another. Not ``id(auth)``: CPython hands a freed
    object's id to the next one made, so another user's auth object would read the entries of
    the one before it. An object that cannot be weakly referenced gets a name of its own."""
    try:
        found = _MARKS.get(auth)
        if found is None:
            found = _MARKS[auth] = os.urandom(16).hex()
        return found
    except TypeError:  # unhashable or not weakly referenceable: shared with no one
        return os.urandom(16).hex()


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"cache_mode must be one of {', '.join(MODES)}, not {mode!r}")


async def through(
    client: Client, method: str, arg: str | None, mode: str, fetch: Callable[[list[Any]], Awaitable[T]]
) -> T:
    """``fetch(pages)`` (it appends each page's raw result to ``pages``) through the client's
    cache (``arg``: what identifies the request beyond its method, the URI of a read)."""
    check_mode(mode)
    policy = client._cache
    if policy is None:
        return await fetch([])
    policy.bind(client)
    return await policy.through(client, method, arg, mode, fetch)


async def on_notification(client: Client, method: str, params: dict[str, Any]) -> None:
    """Drop from the client's cache what the server's notification ``method`` says is stale."""
    if client._cache is not None:
        client._cache.bind(client)
        await client._cache.on_notification(method, params)


class Policy:
    """One Client's view of a :class:`ClientCache`: its keys, the hints' rules, invalidation."""

    def __init__(self, store: ClientCache, default_ttl: float | None, spawn: dict[str, Any]) -> None:
        import json

        self.store = store
        self.default_ttl = default_ttl
        headers = {str(k).lower(): str(v) for k, v in (spawn.get("headers") or {}).items()}
        auth = spawn.get("auth")
        credential = json.dumps(
            [sorted(headers.items()), sorted((spawn.get("env") or {}).items()), None if auth is None else _mark(auth)]
        )
        # The private partition: a digest of the credentials, never the credentials themselves;
        # an auth object's mark is valid in this process only (salted).
        self.partition = "p" + _digest("mcpio-client-cache", credential, _SALT if auth is not None else "")
        self.namespace = ""
        self._env = _digest(json.dumps(sorted((spawn.get("env") or {}).items())))  # a subprocess's configuration
        self._generation = 0  # counts invalidations: a fetch that saw one is not stored
        self._down_until = 0.0  # the store failed: not used before this time (monotonic)

    @classmethod
    def make(cls, cache: Any, default_ttl: float | None, spawn: dict[str, Any]) -> Policy | None:
        if default_ttl is not None and not default_ttl > 0:
            raise ValueError(f"cache_ttl must be a number of seconds > 0 or None, not {default_ttl!r}")
        if cache is None or cache is False:
            return None
        if cache is True:
            cache = MemoryCache()
        if not isinstance(cache, ClientCache):
            raise TypeError(f"cache must be True or a cache object (get/set/delete/clear), not {cache!r}")
        return cls(cache, default_ttl, spawn)

    def bind(self, client: Client) -> None:
        """Name the server, once connected: its transport's identity (none: this process only)
        and the extensions the client declares."""
        if not self.namespace:
            key = client._offers.key
            ident = key if isinstance(key, str) else f"anonymous:{id(client._transport)}:{_SALT}"
            import json

            ext = json.dumps(client.extensions, sort_keys=True, default=str)
            self.namespace = "mcpio:cc:" + _digest(ident, ext, self._env)[:24] + ":"

    def _prefix(self, method: str, arg: str | None) -> str:
        return f"{self.namespace}{method}:{'-' if arg is None else _digest(arg)}:"

    def _keys(self, method: str, arg: str | None, version: str | None) -> tuple[str, str]:
        base = f"{self._prefix(method, arg)}{version or '-'}:"
        return base + self.partition, base + "public"

    def lifetime(self, pages: list[Any]) -> tuple[float | None, str]:
        """(seconds to keep, scope) for a result made of ``pages`` (None: do not keep)."""
        ttl: float | None = None
        scope = "public"
        for page in pages:
            hint = page.get("ttlMs") if isinstance(page, dict) else None
            if isinstance(hint, int) and not isinstance(hint, bool) and hint >= 0:
                seconds: float | None = hint / 1000
            else:
                seconds = self.default_ttl
            if seconds is None or seconds <= 0:
                return None, "private"
            ttl = seconds if ttl is None else min(ttl, seconds)
            if not isinstance(page, dict) or page.get("cacheScope") != "public" or "ttlMs" not in page:
                scope = "private"  # no hints, a missing or unknown scope: this caller alone
        return ttl, scope

    async def through(
        self, client: Client, method: str, arg: str | None, mode: str, fetch: Callable[[list[Any]], Awaitable[T]]
    ) -> T:
        pages: list[Any] = []
        if mode == "bypass":
            return await fetch(pages)
        private, public = self._keys(method, arg, client.negotiated_version)
        if mode == "use":
            for key in (private, public):
                raw = await self._call("get", key)
                if isinstance(raw, (bytes, bytearray, memoryview)):
                    try:
                        return msgspec.json.decode(bytes(raw))  # type: ignore[no-any-return]
                    except msgspec.DecodeError:
                        log.warning("client cache: an undecodable entry under %s; fetching again", key)
        generation = self._generation
        value = await fetch(pages)
        ttl, scope = self.lifetime(pages)
        if ttl is not None and generation == self._generation:
            await self._call("set", public if scope == "public" else private, msgspec.json.encode(value), ttl)
        return value

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Drop what ``method`` (a server notification) says is stale, in every partition."""
        if method == "notifications/resources/updated":
            uri = params.get("uri")
            prefixes = [self._prefix("resources/read", uri)] if isinstance(uri, str) else []
        else:
            prefixes = [self._prefix(m, None) for m in _STALE.get(method, ())]
        if prefixes:
            self._generation += 1
            for prefix in prefixes:
                await self._call("clear", prefix)

    async def _call(self, op: str, *args: Any) -> Any:
        """``store.op(*args)``; a failure is logged and gives None. After one, reads and writes
        are skipped for :data:`RETRY_AFTER` seconds (a store that hangs costs one timeout per
        outage, not one per call, and one warning); invalidations are always attempted."""
        if op != "clear" and time.monotonic() < self._down_until:
            return None
        try:
            return await getattr(self.store, op)(*args)
        except Exception as exc:  # a cache never fails a request: the server answers instead
            self._down_until = time.monotonic() + RETRY_AFTER
            log.warning(
                "client cache: %s failed (%s: %s); served without the cache for %g s",
                op,
                type(exc).__name__,
                exc,
                RETRY_AFTER,
            )
            return None
