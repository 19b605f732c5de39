"""The state backend interface (see the package docstring)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from .._transports._http_events import EventStore


class StateUnavailable(Exception):
    """The state backend cannot serve now: unreachable (Redis down or restarting), loading, out
    of memory, read-only (a replica after a failover), refusing writes; the message says which.
    The HTTP server answers the request with 503 and ``Retry-After``; nothing is wrong with the
    request itself, and service resumes by itself when the backend does."""

    retry_after = 2  # seconds


class SessionDirectory(Protocol):
    """Legacy HTTP sessions shared by every process of a backend (``RedisState.sessions``).

    A *record* is a flat ``dict[str, str]``: ``rev`` (bumped by each update), ``v`` (the
    negotiated version), ``caps`` / ``info`` (the client's capabilities and clientInfo, JSON),
    ``scaps`` (the server capabilities announced, JSON), ``lvl`` (logging/setLevel), one
    ``sub:<uri>`` per resource subscription, with auth ``own``: the principal that opened the
    session (set at create, never updated; every process admits only that principal), and
    ``get``: the process that opened the session's GET stream last (:meth:`note`).
    ``ttl`` is the idle expiry (``session_timeout``; 0: never), refreshed by every call that
    finds the session. Every method raises :class:`StateUnavailable` when the backend is
    unreachable.
    """

    async def create(self, sid: str, fields: dict[str, str], *, ttl: float, max_sessions: int) -> bool:
        """Record a new session; False (nothing recorded) when ``max_sessions`` are alive."""
        ...

    async def touch(self, sid: str, rev: int, *, ttl: float) -> int | str | dict[str, str] | None:
        """Keep ``sid`` alive: None if it is gone (deleted or expired), ``rev`` if the record
        is still the one the caller knows, the whole record if it changed, or ``"lost"`` when
        the backend lost its data (restarted empty): the caller may :meth:`restore` it."""
        ...

    async def restore(self, sid: str, fields: dict[str, str], *, ttl: float) -> dict[str, str] | None:
        """Record ``sid`` again from a process's copy after ``"lost"``; the new record."""
        ...

    async def update(
        self, sid: str, changed: dict[str, str], removed: list[str], *, ttl: float
    ) -> dict[str, str] | None:
        """Set ``changed`` and delete ``removed`` fields; the record after it (None: gone)."""
        ...

    async def note(self, sid: str, field: str, value: str, *, ttl: float) -> bool:
        """Set ``field`` without bumping ``rev``: what only copies started later read (``get``:
        the process holding the GET stream); whether the session exists."""
        ...

    async def delete(self, sid: str) -> bool:
        """End ``sid`` everywhere; whether it existed."""
        ...

    async def ended(self, sid: str) -> bool:
        """Whether ``sid`` is gone because it was deleted or expired (not because the backend
        lost its data); refreshes nothing."""
        ...


class StateBackend(Protocol):
    """All cross-request state of one HTTP server, bounded, behind one object.

    ``events``: the SSE event store (resumability with ``Last-Event-ID``).
    ``start()``: connect once before serving (idempotent); raises :class:`StateUnavailable`
    if the backend cannot be reached (the server then refuses to start). ``ready()``: whether
    requests can be served now (``/readyz``). ``aclose()``: release connections; idempotent.
    ``publish(message)``: send a small JSON object to every *other* process sharing the
    backend (the in-memory backend has no others); ``on_message(handler)``: call ``handler``
    with each message another process published (the server uses it for
    ``notifications/resources/updated``). ``sessions``: the directory of legacy sessions shared
    by every process (:class:`SessionDirectory`), or None when sessions live in this process
    only (the in-memory backend: the HTTP app's own dict, no await on that path).
    ``tasks``: None when the server's in-memory task store is enough (one process), else a
    directory of every process's task records (:class:`~mcpio._state._redis_tasks.RedisTaskDirectory`).
    ``claim(name, ttl)``: whether ``name`` is this process's turn, taken when no process holds it
    (or it is this one's), for ``ttl`` seconds from now; ``release(name)`` gives it up if this
    process holds it. A proxy's resource updates are heard by every process whose upstream holds
    the subscription: only the one holding the update's turn tells the clients (``_changes``).
    One process (the in-memory backend) always has the turn.
    """

    events: EventStore
    sessions: SessionDirectory | None
    tasks: Any

    async def publish(self, message: dict[str, Any]) -> None: ...

    def on_message(self, handler: Callable[[dict[str, Any]], Awaitable[None]]) -> None: ...

    async def claim(self, name: str, ttl: float) -> bool: ...

    async def release(self, name: str) -> None: ...

    async def start(self) -> None: ...

    async def ready(self) -> bool: ...

    async def aclose(self) -> None: ...
