"""The in-process state backend (the default)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .._transports._http_events import (
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_SESSION_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    DEFAULT_TTL,
    MemoryEventStore,
)


class MemoryState:
    """State in this process: a :class:`~mcpio._transports._http_events.MemoryEventStore`
    with the given bounds (defaults: 8 MiB per session, 256 MiB in total, 1000 events per
    stream, 300 s). Always ready. Legacy sessions stay in the HTTP app's own dict
    (``sessions`` is None: no directory, no await)."""

    sessions = None

    def __init__(
        self,
        *,
        max_session_bytes: int = DEFAULT_MAX_SESSION_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        max_events: int = DEFAULT_MAX_EVENTS,
        ttl: float = DEFAULT_TTL,
    ) -> None:
        self.events = MemoryEventStore(
            max_session_bytes=max_session_bytes, max_total_bytes=max_total_bytes, max_events=max_events, ttl=ttl
        )
        self.tasks = None  # the server's own in-memory TaskStore is the task store of one process

    async def start(self) -> None:
        return None

    async def ready(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None

    async def publish(self, message: dict[str, Any]) -> None:
        return None  # one process: nobody else to tell

    def on_message(self, handler: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        return None

    async def claim(self, name: str, ttl: float) -> bool:
        return True  # one process: every turn is its own

    async def release(self, name: str) -> None:
        return None
