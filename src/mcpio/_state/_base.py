"""The state backend interface (see the package docstring)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from .._transports._http_events import EventStore


class StateUnavailable(Exception):
    """The state backend cannot be reached (Redis down or restarting). The HTTP server answers
    the request with 503 and ``Retry-After``; nothing is wrong with the request itself."""

    retry_after = 2  # seconds


class StateBackend(Protocol):
    """All cross-request state of one HTTP server, bounded, behind one object.

    ``events``: the SSE event store (resumability with ``Last-Event-ID``).
    ``start()``: connect once before serving (idempotent); raises :class:`StateUnavailable`
    if the backend cannot be reached (the server then refuses to start). ``ready()``: whether
    requests can be served now (``/readyz``). ``aclose()``: release connections; idempotent.
    ``publish(message)``: send a small JSON object to every *other* process sharing the
    backend (the in-memory backend has no others); ``on_message(handler)``: call ``handler``
    with each message another process published (the server uses it for
    ``notifications/resources/updated``).
    ``tasks``: None when the server's in-memory task store is enough (one process), else a
    directory of every process's task records (:class:`~mcpio._state._redis_tasks.RedisTaskDirectory`).
    """

    events: EventStore
    tasks: Any

    async def publish(self, message: dict[str, Any]) -> None: ...

    def on_message(self, handler: Callable[[dict[str, Any]], Awaitable[None]]) -> None: ...

    async def start(self) -> None: ...

    async def ready(self) -> bool: ...

    async def aclose(self) -> None: ...
