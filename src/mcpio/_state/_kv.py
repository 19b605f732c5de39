"""The session-state store: what ``ctx.session_state`` keeps between requests.

One store holds many *scopes* (``s:…`` a legacy session, ``p:…`` an authenticated principal,
``h:…`` a state handle; the framework names them, ``mcpio._server._session_state``). A scope
holds string keys with JSON values (bytes here: the framework encodes them) and, for a handle's
scope, the *owner* the handle was minted for. Every value has its own expiry; the owner record
expires ``ttl`` seconds after the handle was last used.

Bounds, checked on every ``set`` (the same in memory and on Redis): one value at most
``max_value_bytes`` (checked by the framework before it reaches the store), one scope at most
``max_scope_bytes`` (each key costs its key, its value and :data:`ENTRY_OVERHEAD` bytes; a
handle's owner record, while it lives, its owner and as many), the scopes of one *owner*
together at most ``max_owner_bytes`` (a per-call argument, as ``max_handles`` is:
``Server(max_state_bytes_per_caller=)``, by default :func:`owner_share` of the total), all
scopes together at most ``max_total_bytes`` (in memory: this process's; on Redis: the
database's, ``RedisState(max_state_bytes=)``). A scope's bytes count against the owner given
with the first ``set`` or ``bind`` that wrote into it while it held nothing (a handle's: the
owner it was bound for), until it holds nothing again; the framework gives each call's owner
(a principal, or a client network). A ``set`` over a bound raises :class:`StateLimitError` and
changes nothing. Each ``bind`` (a new handle) is checked against the live handles of its owner:
``max_handles`` at most per owner (``Server(max_state_handles=)``), in memory and on Redis
alike, and its owner record against ``max_owner_bytes`` and ``max_total_bytes`` (owners are
many: principals, client networks); over any ``bind`` raises :class:`StateLimitError`.

:class:`MemoryKV` keeps it in this process (the default); ``RedisState.kv``
(:mod:`._redis_kv`) keeps it on Redis, shared by every process of the database.
"""

from __future__ import annotations

import heapq
import time
from typing import Protocol

DEFAULT_TTL = 3600.0  # seconds a value lives when set without ttl=, and a handle after its last use
MAX_TTL = 30 * 24 * 3600.0  # the longest ttl= accepted (30 days)
DEFAULT_MAX_VALUE_BYTES = 256 * 1024
DEFAULT_MAX_SCOPE_BYTES = 1024 * 1024
DEFAULT_MAX_TOTAL_BYTES = 256 * 1024 * 1024
ENTRY_OVERHEAD = 64  # what a key costs its scope beyond its key and value bytes
OWNER_SHARE = 16  # the default max_owner_bytes is this fraction of max_total_bytes (owner_share)


class StateLimitError(ValueError):
    """A ``set`` over a size bound (the message names the bound, its value and what was asked)."""


class KVStore(Protocol):
    """What a session-state store does (see the module docstring). Every method may raise
    :class:`~._base.StateUnavailable` (a backend that is down)."""

    max_scope_bytes: int
    max_total_bytes: int

    async def get(self, scope: str, key: str) -> bytes | None:
        """The value of ``key`` in ``scope``, None if it is absent or expired."""
        ...

    async def set(self, scope: str, key: str, value: bytes, ttl: float, owner: str, max_owner_bytes: int) -> None:
        """Set ``key`` to ``value`` for ``ttl`` seconds (replacing it), for ``owner`` (the scope's
        when it holds nothing yet); StateLimitError over a bound."""
        ...

    async def delete(self, scope: str, key: str) -> bool:
        """Remove ``key``; whether it was there."""
        ...

    async def bind(self, scope: str, owner: str, ttl: float, max_handles: int, max_owner_bytes: int) -> bool:
        """Record ``owner`` for ``scope`` for ``ttl`` seconds unless it has a live owner; whether it
        was recorded. StateLimitError when ``owner`` already has ``max_handles`` live scopes, or
        the record is over ``max_owner_bytes`` or the total."""
        ...

    async def owner(self, scope: str, ttl: float) -> str | None:
        """The live owner of ``scope`` (its life renewed to ``ttl`` seconds from now), or None."""
        ...


def owner_cost(owner: str) -> int:
    """What a handle's owner record costs its scope and the total, while it lives."""
    return len(owner.encode()) + ENTRY_OVERHEAD


def owner_share(configured: int | None, max_total_bytes: int) -> int:
    """``max_owner_bytes``: ``configured`` (``Server(max_state_bytes_per_caller=)``), else
    1/:data:`OWNER_SHARE` of the store's total, so that one owner cannot fill the total alone."""
    return configured if configured is not None else max(1, max_total_bytes // OWNER_SHARE)


def owner_limit(used: int, cost: int, limit: int) -> StateLimitError:
    return StateLimitError(
        f"session state is full for this caller: its sessions, handles and own state hold {used} bytes and "
        f"this needs {cost} more, over the limit of {limit} bytes per caller (Server(max_state_bytes_per_caller=)); "
        "delete keys, or retry when values have expired"
    )


def handle_limit(limit: int) -> StateLimitError:
    return StateLimitError(
        f"too many state handles: this caller already holds {limit} live ones, the limit per caller "
        "(Server(max_state_handles=)); pass back a handle you were given instead of leaving the parameter "
        "out, or wait until unused ones expire (1 hour after their last use)"
    )


def total_limit(used: int, limit: int, option: str) -> StateLimitError:
    return StateLimitError(
        f"the server's session state is full ({used} bytes, the limit is {limit} bytes in all: {option}); "
        "retry later, when values have expired"
    )


def scope_limit(used: int, cost: int, limit: int) -> StateLimitError:
    return StateLimitError(
        f"session state is full: this scope holds {used} bytes and the value needs {cost} more, over the "
        f"limit of {limit} bytes per scope (max_scope_bytes); delete keys or store less"
    )


class _Scope:
    __slots__ = ("bytes", "charged", "owner", "soonest", "values")

    def __init__(self, charged: str) -> None:
        self.charged = charged  # the owner its bytes count against (module docstring)
        self.values: dict[str, tuple[bytes, float]] = {}  # key -> (value, expiry on time.monotonic())
        self.owner: tuple[str, float] | None = None
        self.bytes = 0
        self.soonest = float("inf")  # no later than its values' first expiry (MemoryKV._ends)

    def sweep(self, now: float) -> None:
        for key, (value, expiry) in list(self.values.items()):
            if expiry <= now:
                del self.values[key]
                self.bytes -= len(key.encode()) + len(value) + ENTRY_OVERHEAD
        if self.owner is not None and self.owner[1] <= now:
            self.bytes -= owner_cost(self.owner[0])
            self.owner = None

    def first(self) -> float | None:
        """When its first value or its owner record expires (None: it holds neither)."""
        ends = [expiry for _, expiry in self.values.values()]
        if self.owner is not None:
            ends.append(self.owner[1])
        return min(ends) if ends else None


class MemoryKV:
    """Session state in this process (the default store): bounded (module docstring), swept of
    expired entries as scopes are used and, at most once a minute, as a whole. Each ``set`` first
    sweeps every scope where a value or an owner record has expired (found by ``_ends``, each
    scope by its first expiry: as ``kv:ends`` on Redis), so the total it checks counts live ones
    only; so does each ``bind``."""

    def __init__(
        self, *, max_scope_bytes: int = DEFAULT_MAX_SCOPE_BYTES, max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES
    ) -> None:
        self.max_scope_bytes = max_scope_bytes
        self.max_total_bytes = max_total_bytes
        self._scopes: dict[str, _Scope] = {}
        self._handles: dict[str, dict[str, float]] = {}  # owner -> its handles' scopes -> expiry
        self._total = 0
        self._owned: dict[str, int] = {}  # owner -> the bytes of the scopes charged to it
        self._swept = time.monotonic()
        self._ends: list[tuple[float, str]] = []  # a heap: (a scope's soonest, the scope)

    def _scope(self, scope: str, now: float) -> _Scope | None:
        found = self._scopes.get(scope)
        if found is not None:
            before = found.bytes
            found.sweep(now)
            self._total -= before - found.bytes
            self._charge(found.charged, found.bytes - before)
            if not found.values and found.owner is None:
                del self._scopes[scope]
                return None
        return found

    def _sweep_all(self, now: float) -> None:
        if now - self._swept >= 60.0:
            self._swept = now
            for name in list(self._scopes):
                self._scope(name, now)
            for owner in list(self._handles):
                self._live(owner, now)

    def _expire(self, now: float) -> None:
        """Sweep the scopes where a value or the owner record has expired (each counted without
        it from now on)."""
        ends = self._ends
        while ends and ends[0][0] <= now:
            at, name = heapq.heappop(ends)
            found = self._scopes.get(name)
            if found is None or found.soonest != at:
                continue  # a scope gone, or an entry a set with an earlier expiry replaced
            found.soonest = float("inf")
            found = self._scope(name, now)
            first = found.first() if found is not None else None
            if found is not None and first is not None:
                self._soon(found, name, first)

    def _soon(self, found: _Scope, name: str, expiry: float) -> None:
        """A value of scope ``name`` expires at ``expiry``: keep ``_ends`` ahead of it."""
        if expiry < found.soonest:
            found.soonest = expiry
            heapq.heappush(self._ends, (expiry, name))

    def _charge(self, owner: str, delta: int) -> None:
        """``owner``'s scopes hold ``delta`` bytes more (fewer, when negative)."""
        left = self._owned.get(owner, 0) + delta
        if left > 0:
            self._owned[owner] = left
        else:
            self._owned.pop(owner, None)

    def _live(self, owner: str, now: float) -> dict[str, float]:
        """The scopes of ``owner``'s handles that have not expired (the others forgotten)."""
        held = {scope: at for scope, at in self._handles.get(owner, {}).items() if at > now}
        if held:
            self._handles[owner] = held
        else:
            self._handles.pop(owner, None)
        return held

    async def get(self, scope: str, key: str) -> bytes | None:
        found = self._scope(scope, time.monotonic())
        entry = found.values.get(key) if found is not None else None
        return entry[0] if entry is not None else None

    async def set(self, scope: str, key: str, value: bytes, ttl: float, owner: str, max_owner_bytes: int) -> None:
        now = time.monotonic()
        self._sweep_all(now)
        self._expire(now)
        found = self._scope(scope, now) or _Scope(owner)
        cost = len(key.encode()) + len(value) + ENTRY_OVERHEAD
        old = found.values.get(key)
        freed = len(key.encode()) + len(old[0]) + ENTRY_OVERHEAD if old is not None else 0
        if found.bytes - freed + cost > self.max_scope_bytes:
            raise scope_limit(found.bytes - freed, cost, self.max_scope_bytes)
        held = self._owned.get(found.charged, 0) - freed
        if cost > freed and held + cost > max_owner_bytes:
            raise owner_limit(held, cost, max_owner_bytes)
        if self._total - freed + cost > self.max_total_bytes:
            raise total_limit(self._total, self.max_total_bytes, "MemoryKV(max_total_bytes=)")
        found.values[key] = (value, now + ttl)
        found.bytes += cost - freed
        self._total += cost - freed
        self._charge(found.charged, cost - freed)
        self._scopes[scope] = found
        self._soon(found, scope, now + ttl)

    async def delete(self, scope: str, key: str) -> bool:
        found = self._scope(scope, time.monotonic())
        old = found.values.pop(key, None) if found is not None else None
        if found is None or old is None:
            return False
        cost = len(key.encode()) + len(old[0]) + ENTRY_OVERHEAD
        found.bytes -= cost
        self._total -= cost
        self._charge(found.charged, -cost)
        return True

    async def bind(self, scope: str, owner: str, ttl: float, max_handles: int, max_owner_bytes: int) -> bool:
        now = time.monotonic()
        self._sweep_all(now)
        self._expire(now)
        found = self._scope(scope, now) or _Scope(owner)
        if found.owner is not None:
            return False
        held = self._live(owner, now)
        if len(held) >= max_handles:
            raise handle_limit(max_handles)
        cost = owner_cost(owner)
        mine = self._owned.get(found.charged, 0)
        if mine + cost > max_owner_bytes:
            raise owner_limit(mine, cost, max_owner_bytes)
        if self._total + cost > self.max_total_bytes:
            raise total_limit(self._total, self.max_total_bytes, "MemoryKV(max_total_bytes=)")
        found.owner = (owner, now + ttl)
        found.bytes += cost
        self._total += cost
        self._charge(found.charged, cost)
        self._soon(found, scope, now + ttl)
        held[scope] = now + ttl
        self._handles[owner] = held
        self._scopes[scope] = found
        return True

    async def owner(self, scope: str, ttl: float) -> str | None:
        now = time.monotonic()
        found = self._scope(scope, now)
        if found is None or found.owner is None:
            return None
        found.owner = (found.owner[0], now + ttl)
        self._handles.setdefault(found.owner[0], {})[scope] = now + ttl
        return found.owner[0]
