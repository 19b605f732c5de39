"""Event stores for SSE resumability (legacy era: ``GET`` + ``Last-Event-ID``).

An :class:`EventStore` keeps the events written to each SSE stream so a client that lost the
connection (or was told to poll, SEP-1699) can resume. Four async methods form the interface,
so a shared store (Redis, a database) can stand behind several workers:

* ``store(session_id, stream_id, message) -> event_id`` — record one event (``b""`` for a
  priming event, which is never replayed) and return its id;
* ``replay_after(session_id, last_event_id) -> (stream_id, [(event_id, message)])`` — the
  events of *that* stream after the given one; None if the id is unknown, or if any event
  after it was already discarded (a replay with a hole would silently lose messages, so the
  server refuses it: the HTTP layer answers 404 and the client re-sends what it misses);
* ``discard_stream(session_id, stream_id)`` — the stream's final response was delivered and
  its connection closed cleanly: nothing of it can be needed for resumption any more;
* ``forget(session_id)`` — the session ended: drop its events.

Every lookup is scoped by session id (a pain point of other SDKs: stores that replayed events of other
streams or sessions leaked data).

:class:`MemoryEventStore` is the default. What it retains is bounded four ways, oldest first
(without byte bounds one session POSTing 2,000 calls with 1 MB results held 1.9 GiB for
five minutes):

* ``max_session_bytes`` (8 MiB) per session, so one client cannot take the server's memory;
* ``max_total_bytes`` (256 MiB) for the whole process, so many clients cannot either;
* ``max_events`` (1000) per stream and ``ttl`` (300 s) per event.

Each event is charged its size plus :data:`EVENT_OVERHEAD` bytes (so empty priming events
count too). The defaults: 8 MiB holds a handful of large tool results for a client that
lost its connection (the common case is kilobytes of progress and one answer), and 256 MiB
is 32 such sessions at their cap, a budget that fits a small container. Delivered streams
are discarded at once (``discard_stream``), so the bounds only ever hold what a client that
went away may still ask for.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Protocol

from .._protocol._http import event_id, parse_event_id

MiB = 1024 * 1024
DEFAULT_MAX_SESSION_BYTES = 8 * MiB
DEFAULT_MAX_TOTAL_BYTES = 256 * MiB
DEFAULT_MAX_EVENTS = 1000
DEFAULT_TTL = 300.0
EVENT_OVERHEAD = 64  # bytes charged per event on top of its payload (ids, times, references)


class EventStore(Protocol):
    async def store(self, session_id: str, stream_id: str, message: bytes) -> str: ...

    async def replay_after(self, session_id: str, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None: ...

    async def discard_stream(self, session_id: str, stream_id: str) -> None: ...

    async def forget(self, session_id: str) -> None: ...


class _Event:
    __slots__ = ("at", "cost", "dead", "message", "seq", "session", "stream")

    def __init__(self, session: _Session, stream: _Stream, seq: int, at: float, message: bytes) -> None:
        self.session = session
        self.stream = stream
        self.seq = seq
        self.at = at
        self.message = message
        self.cost = len(message) + EVENT_OVERHEAD
        self.dead = False


class _Stream:
    __slots__ = ("events", "lost", "next_seq", "touched")

    def __init__(self, now: float) -> None:
        self.events: deque[_Event] = deque()  # live ones, oldest first
        self.next_seq = 1
        self.lost = 0  # the highest seq of a non-priming event discarded before delivery
        self.touched = now


class _Session:
    __slots__ = ("bytes", "dead", "id", "order", "streams")

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.streams: dict[str, _Stream] = {}
        self.order: deque[_Event] = deque()  # every event of the session, oldest first (dead ones lazily)
        self.bytes = 0
        self.dead = 0  # dead events still in ``order``


class MemoryEventStore:
    """In-process event store, bounded by bytes per session and in total, events per stream
    and age (see the module docstring); evicts oldest first."""

    def __init__(
        self,
        *,
        max_events: int = DEFAULT_MAX_EVENTS,
        ttl: float = DEFAULT_TTL,
        max_session_bytes: int = DEFAULT_MAX_SESSION_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    ) -> None:
        if max_events < 1 or ttl <= 0 or max_session_bytes < 1 or max_total_bytes < 1:
            raise ValueError("max_events, max_session_bytes and max_total_bytes must be >= 1 and ttl > 0")
        self.max_events = max_events
        self.ttl = ttl
        self.max_session_bytes = max_session_bytes
        self.max_total_bytes = max_total_bytes
        self._sessions: dict[str, _Session] = {}
        self._order: deque[_Event] = deque()  # every event, oldest first (dead ones lazily)
        self._dead = 0
        self.bytes = 0  # retained, all sessions together (payloads + overhead)
        self.evicted = 0  # events discarded by a bound (not delivered, so a resumption would miss them)
        self._last_sweep = time.monotonic()

    # ---------------------------------------------------------------- the EventStore interface
    async def store(self, session_id: str, stream_id: str, message: bytes) -> str:
        now = time.monotonic()
        sess = self._sessions.get(session_id)
        if sess is None:
            sess = self._sessions[session_id] = _Session(session_id)
        s = sess.streams.get(stream_id)
        if s is None:
            s = sess.streams[stream_id] = _Stream(now)
        seq = s.next_seq
        s.next_seq += 1
        s.touched = now
        ev = _Event(sess, s, seq, now, bytes(message))
        s.events.append(ev)
        sess.order.append(ev)
        self._order.append(ev)
        sess.bytes += ev.cost
        self.bytes += ev.cost
        self._enforce(sess, s, now)
        return event_id(stream_id, seq)

    async def replay_after(self, session_id: str, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, seq = parsed
        sess = self._sessions.get(session_id)
        s = sess.streams.get(stream_id) if sess is not None else None
        if s is None or seq >= s.next_seq:
            return None
        self._expire(time.monotonic())
        if s.lost > seq:  # something after the client's last event is gone: no replay with holes
            return None
        return stream_id, [(event_id(stream_id, e.seq), e.message) for e in s.events if e.seq > seq and e.message]

    async def discard_stream(self, session_id: str, stream_id: str) -> None:
        sess = self._sessions.get(session_id)
        s = sess.streams.pop(stream_id, None) if sess is not None else None
        if s is None:
            return
        for ev in s.events:
            self._kill(ev, delivered=True)
        s.events.clear()
        self._compact(sess)

    async def forget(self, session_id: str) -> None:
        sess = self._sessions.pop(session_id, None)
        if sess is None:
            return
        for ev in sess.order:
            if not ev.dead:
                self._kill(ev, delivered=True)
        sess.order.clear()
        self._compact(None)

    # ---------------------------------------------------------------- bounds
    def _enforce(self, sess: _Session, s: _Stream, now: float) -> None:
        while len(s.events) > self.max_events:
            self._kill(s.events[0])
        while sess.bytes > self.max_session_bytes:
            self._drop_head(sess)
            self._kill(sess.order[0])
        while self.bytes > self.max_total_bytes:
            self._drop_global_head()
            self._kill(self._order[0])
        self._expire(now)
        self._compact(sess)

    def _expire(self, now: float) -> None:
        horizon = now - self.ttl
        order = self._order
        while order and (order[0].dead or order[0].at < horizon):
            ev = order[0]
            self._kill(ev)
            self._drop_global_head()
            self._drop_head(ev.session)
        if now - self._last_sweep > self.ttl / 4:  # streams and sessions with nothing left, silent for ttl
            self._last_sweep = now
            for sid in [k for k, v in self._sessions.items() if not v.bytes]:
                sess = self._sessions[sid]
                for key in [k for k, st in sess.streams.items() if st.touched < horizon]:
                    del sess.streams[key]
                if not sess.streams:
                    del self._sessions[sid]

    def _kill(self, ev: _Event, *, delivered: bool = False) -> None:
        if ev.dead:
            return
        ev.dead = True
        sess, s = ev.session, ev.stream
        sess.bytes -= ev.cost
        self.bytes -= ev.cost
        sess.dead += 1
        self._dead += 1
        if not delivered:
            if ev.message:  # a priming event is never replayed: losing it loses nothing
                s.lost = max(s.lost, ev.seq)
                self.evicted += 1
            while s.events and s.events[0].dead:
                s.events.popleft()
        ev.message = b""

    def _drop_head(self, sess: _Session) -> None:
        order = sess.order
        while order and order[0].dead:
            order.popleft()
            sess.dead -= 1

    def _drop_global_head(self) -> None:
        order = self._order
        while order and order[0].dead:
            order.popleft()
            self._dead -= 1

    def _compact(self, sess: _Session | None) -> None:
        """Drop dead events from the ordering queues once they outnumber the live ones."""
        if sess is not None:
            self._drop_head(sess)
            if sess.dead > 64 and sess.dead > len(sess.order) // 2:
                sess.order = deque(e for e in sess.order if not e.dead)
                sess.dead = 0
        self._drop_global_head()
        if self._dead > 1024 and self._dead > len(self._order) // 2:
            self._order = deque(e for e in self._order if not e.dead)
            self._dead = 0

    def __len__(self) -> int:
        """Events held, all sessions together (for tests and metrics)."""
        return sum(len(s.events) for sess in self._sessions.values() for s in sess.streams.values())
