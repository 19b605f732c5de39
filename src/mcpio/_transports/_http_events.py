"""Event stores for SSE resumability (legacy era: ``GET`` + ``Last-Event-ID``).

An :class:`EventStore` keeps the events written to each SSE stream so a client that lost the
connection (or was told to poll, SEP-1699) can resume. Three async methods form the interface,
so a shared store (Redis, a database) can stand behind several workers:

* ``store(session_id, stream_id, message) -> event_id`` — record one event (``b""`` for a
  priming event, which is never replayed) and return its id;
* ``replay_after(session_id, last_event_id) -> (stream_id, [(event_id, message)])`` — the
  events of *that* stream after the given one, or None if the id is unknown or expired;
* ``forget(session_id)`` — the session ended: drop its events.

Every lookup is scoped by session id (pain point #33: stores that replayed events of other
streams or sessions leaked data). :class:`MemoryEventStore` is the default: bounded per stream
(``max_events``) and in time (``ttl`` seconds).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Protocol

from .._protocol._http import event_id, parse_event_id


class EventStore(Protocol):
    async def store(self, session_id: str, stream_id: str, message: bytes) -> str: ...

    async def replay_after(self, session_id: str, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None: ...

    async def forget(self, session_id: str) -> None: ...


class _Stream:
    __slots__ = ("events", "next_seq", "touched")

    def __init__(self, max_events: int) -> None:
        self.events: deque[tuple[int, float, bytes]] = deque(maxlen=max_events)
        self.next_seq = 1
        self.touched = time.monotonic()


class MemoryEventStore:
    """In-process event store with bounded retention: at most ``max_events`` per stream, each
    kept ``ttl`` seconds; a stream silent for ``ttl`` is dropped whole."""

    def __init__(self, *, max_events: int = 1000, ttl: float = 300.0) -> None:
        if max_events < 1 or ttl <= 0:
            raise ValueError("max_events must be >= 1 and ttl > 0")
        self.max_events = max_events
        self.ttl = ttl
        self._sessions: dict[str, dict[str, _Stream]] = {}
        self._last_sweep = time.monotonic()

    async def store(self, session_id: str, stream_id: str, message: bytes) -> str:
        now = time.monotonic()
        streams = self._sessions.setdefault(session_id, {})
        s = streams.get(stream_id)
        if s is None:
            s = streams[stream_id] = _Stream(self.max_events)
        seq = s.next_seq
        s.next_seq += 1
        s.events.append((seq, now, bytes(message)))
        s.touched = now
        if now - self._last_sweep > self.ttl / 4:
            self._sweep(now)
        return event_id(stream_id, seq)

    async def replay_after(self, session_id: str, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, seq = parsed
        s = self._sessions.get(session_id, {}).get(stream_id)
        if s is None or seq >= s.next_seq:
            return None
        horizon = time.monotonic() - self.ttl
        out = [(event_id(stream_id, n), msg) for n, t, msg in s.events if n > seq and t >= horizon and msg]
        return stream_id, out

    async def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def _sweep(self, now: float) -> None:
        self._last_sweep = now
        horizon = now - self.ttl
        for sid in list(self._sessions):
            streams = self._sessions[sid]
            for key in [k for k, s in streams.items() if s.touched < horizon]:
                del streams[key]
            if not streams:
                del self._sessions[sid]

    def __len__(self) -> int:
        """Events held, all sessions together (for tests and metrics)."""
        return sum(len(s.events) for streams in self._sessions.values() for s in streams.values())
