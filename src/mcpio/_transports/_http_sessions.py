"""Legacy HTTP sessions shared by every process of a state backend (``RedisState``).

With a backend that has a session directory (``state.sessions``), a legacy session's record
(version, client capabilities and info, log level, subscriptions) lives in the backend, with an
idle expiry of ``session_timeout`` and the cap ``max_sessions`` counted over all processes. Each
process keeps *local copies* in ``StreamableHTTPApp.sessions`` (each a
:class:`SharedLegacyTransport` running its own server session):

* a request touches the record (it keeps the session alive, tells a deleted or expired one —
  404 — and brings a changed record), unless the copy is fresh (:meth:`SharedSessions.find`);
  a process without a copy starts one primed from the record (no handshake) and serves the
  request there, so its progress, logs and server-to-client requests go to the POST's stream;
* requests that change the record (``RECORDED``) write it *before* their answer goes out, and
  the new record goes on the bus so every copy is current at once;
* a copy numbers its requests to the client, and its POST streams, "<tag><k>_<n>" (``tag``: its
  process's; ``k``: the copy's number in the process, so a copy started again there after one
  was dropped never reuses an id), so they are unique within the session whatever the copies
  ask at once (JSON-RPC 2.0 §4; MCP: an id is never used twice in a session); a client's
  response goes to the local copy and, when its id names another process, on the bus to that
  process's copy (``FRAME`` with ``to``); a ``notifications/cancelled`` to every copy (its
  request may run on any process);
* DELETE removes the record and every process ends its copy; an expired record is found gone
  by the next request (404);
* while the backend is unreachable, sessions with a copy here are served from it (others: 503);
  when it comes back empty the copies restore their records (``SessionDirectory.restore``);
* a copy idle here for ``session_timeout`` is dropped here only (if its record expired, every
  process is told, as for a DELETE); a busy one keeps its record alive.

What is sent outside a request goes to the session's GET stream, on the one process that holds
it: see :mod:`._http_sessions_bus`, which also has the bus's messages between the copies.

A POST stream whose requests run here holds this process's lease (``state.tasks``) until they
are answered, and its first stored event notes the process and the request ids: a process
following it for a resuming client answers them with -32603 once the lease has passed
(:meth:`SharedSessions.resume`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import _jsonrpc as rpc
from .._protocol import _http as h
from .._state._base import SessionDirectory, StateUnavailable
from ._http_legacy import Engine, LegacyTransport, current
from ._http_server_streams import Stream, peek
from ._http_sessions_bus import CHANGED, ENDED, FRAME, GET_AT, HeldForGet, on_message

if TYPE_CHECKING:
    from ._http_server import StreamableHTTPApp

log = logging.getLogger("mcpio.http")

# Requests whose handling changes the record (they write it before their answer goes out).
RECORDED = frozenset({"initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
OWNER = "own"  # the record's field naming the principal that opened the session (with auth)
FRESH_FOR = 1.0  # seconds a touch vouches for a local copy (SharedSessions.find)


class SharedLegacyTransport(HeldForGet):
    """A local copy of a shared legacy session (see the module docstring)."""

    def __init__(
        self, sid: str, *, registry: SharedSessions, record: dict[str, str] | None, owner: str | None = None, **kw: Any
    ) -> None:
        # The owner (with auth) is the record's: fixed at create, the same on every process.
        super().__init__(sid, owner=record.get(OWNER) if record is not None else owner, **kw)
        # Every answer through send (no answer_nowait): it keeps this copy's books.
        # Its requests to the client and its POST streams are numbered "<tag><k>_<n>" (module docstring).
        prefix = f"{registry.tag}{next(registry.copies)}_"
        self.abilities = self.abilities._replace(
            answer_nowait=None, session_ended=lambda: self.session_ended, request_ids=prefix
        )
        # Its send may wait on the backend (sync: a record write) whatever the event store, and
        # its deliver keeps books: no request started on another task's stack, none fed.
        self.eager_safe = False
        self.registry = registry
        self.stream_prefix = prefix
        self.record = record  # what a replica is primed from (None: this process made it)
        self.rev = int(record.get("rev", 0)) if record else 1
        self.known: dict[str, str] = _fields(record) if record else {}  # the fields stored
        self.mirror: Any = None  # _server._replicas.SessionMirror, bound by the server
        self.recorded: set[Any] = set()  # ids of RECORDED requests in flight
        self.owns_events = False  # forget the event store's keys at the end (only if it ended)
        self.session_ended = False  # the session itself ended (DELETE, expiry), not only this copy
        self.held: dict[str, Stream] = {}  # POST streams whose requests hold this process's lease
        self.generation: int | None = None  # the bus's generation when the record was last read
        self.checked = 0.0  # when it was last read (monotonic): find() trusts it for a window
        self.get_at: str | None = None  # the process holding the session's GET stream, when not this one
        at = record.get(GET_AT) if record is not None else None
        if at is not None and at != registry.tag:  # opened before this copy was: nothing to hold for it
            self.get_at, self.before_get = at, None
        elif at is not None:  # this process's: what is sent for the GET stream is held here
            self.holds_get(True)

    def attach(self, engine: Engine, *, feed: bool, mirror: Callable[[Any], Any]) -> None:
        """:meth:`LegacyTransport.attach`, and the copy's mirror made: a replica primed from the
        record it was made from."""
        super().attach(engine, feed=feed, mirror=mirror)
        self.mirror = mirror(engine)
        if self.record is not None:
            self.mirror.apply(self.record)
            self.record = None

    def refresh(self, record: dict[str, str], *, newer_only: bool = False) -> None:
        """Apply the record as the backend holds it now: with ``newer_only`` (a bus message) only a
        higher ``rev``, else any other (a restored record starts again at 1)."""
        rev = int(record.get("rev", 0))
        if self.mirror is not None and (rev <= self.rev if newer_only else rev == self.rev):
            return
        self.rev = rev
        self.known = _fields(record)
        if self.mirror is not None:
            self.mirror.apply(record)
        else:
            self.record = record

    async def deliver(self, frame: bytes, messages: list[Any] | None = None, batch: bool = False) -> None:
        """:meth:`LegacyTransport.deliver`, keeping this copy's books from ``messages`` (the POST's,
        decoded once by ``read_post``; decoded here only when not given)."""
        if messages is None:
            value = rpc.decode(frame)
            messages = value if type(value) is list else [value]
        tag = self.registry.tag
        to: set[str] = set()  # the other processes whose copies asked what this answers
        everyone = False
        for m in messages:
            rid, method = m.get("id"), m.get("method")
            if method is None:  # an answer: to a request of this copy, or of another process's
                asker = asked_by(rid)
                if asker is None:
                    everyone = True  # an id no copy of this version made: let every copy look
                elif asker != tag:
                    to.add(asker)
            elif method == "notifications/cancelled":
                everyone = True  # its request may run on another process
            elif method in RECORDED and isinstance(rid, (int, str)):
                self.recorded.add(rid)
        await super().deliver(frame, messages, batch)
        if everyone or to:
            message: dict[str, Any] = {"type": FRAME, "sid": self.id, "frame": frame.decode()}
            if not everyone:
                message["to"] = sorted(to)
            await self.registry.publish(message)

    def new_stream(self, ids: set[Any], *, json_ok: bool, sse_ok: bool, priming: bool, store: Any = None) -> Stream:
        """A POST's stream, holding this process's lease while its requests run (module docstring)."""
        leases, store = self.registry.leases, self.store if store is None else store
        if noted := leases is not None and ids and store is not None and hasattr(store, "note"):
            note = json.dumps({"node": leases.node, "ids": sorted(ids, key=str)}, separators=(",", ":"))
            store = _NotedStore(store, note)
        stream = super().new_stream(ids, json_ok=json_ok, sse_ok=sse_ok, priming=priming, store=store)
        if noted:
            leases.hold((self.id, stream.id))
            self.held[stream.id] = stream
        return stream

    def end_streams(self) -> None:
        super().end_streams()
        self._release(list(self.held))

    def _release(self, stream_ids: list[str]) -> None:
        leases = self.registry.leases
        for sid in stream_ids:
            self.held.pop(sid, None)
            if leases is not None:
                leases.release((self.id, sid))

    async def send(self, frame: bytes) -> None:
        envelopes = peek(frame)
        if self.recorded:
            ids = {e.id for e in envelopes if e.method is None}
            if ids & self.recorded:
                self.recorded -= ids
                await self.sync()
        await self.route(frame, envelopes)  # LegacyTransport.send, without peeking again
        if self.held and envelopes and envelopes[0].method is None:  # answered: stored or sent now
            self._release([k for k, s in self.held.items() if s.finished])

    def unanswered(self, request_id: Any) -> None:
        """:meth:`LegacyTransport.unanswered`, and the books kept as for an answer."""
        super().unanswered(request_id)
        self.recorded.discard(request_id)
        if self.held:
            self._release([k for k, s in self.held.items() if s.finished])

    async def sync(self) -> None:
        """Write what changed in the session to its record, then tell the other copies."""
        if self.mirror is None:
            return
        now = self.mirror.snapshot()
        changed = {k: v for k, v in now.items() if self.known.get(k) != v}
        removed = [k for k in self.known if k not in now]
        if not changed and not removed:
            return
        reg = self.registry
        try:
            record = await reg.directory.update(self.id, changed, removed, ttl=reg.app.session_timeout)
            if record is None:
                return  # deleted meanwhile: the next request gets 404
            self.refresh(record)
            await reg.state.publish({"type": CHANGED, "sid": self.id, "record": record})
        except StateUnavailable as exc:
            log.warning("session %s: its change is not shared with the other processes: %s", self.id, exc)


def asked_by(request_id: Any) -> str | None:
    """The process (its tag) whose copy sent the request ``request_id`` answers ("<tag><k>_<n>";
    "<tag><n>" from a process of an earlier version), or None when the id names no process."""
    if type(request_id) is str:
        tag, dot, rest = request_id.partition(".")
        k, _, n = rest.rpartition("_")
        if dot and rest.isascii() and n.isdigit() and (not k or k.isdigit()):
            return tag + dot
    return None


def _fields(record: dict[str, str]) -> dict[str, str]:
    """The fields a copy keeps in step with its session (``rev``, the fixed owner and where the
    GET stream is aside)."""
    return {k: v for k, v in record.items() if k != "rev" and k != OWNER and k != GET_AT}


class SharedSessions:
    """The legacy sessions of one :class:`StreamableHTTPApp` on a shared backend."""

    def __init__(self, app: StreamableHTTPApp, state: Any, directory: SessionDirectory) -> None:
        self.app = app
        self.state = state
        self.directory = directory
        # This process's POST streams and its copies' requests to the client: "<tag><n>". The
        # process's node on the backend (RedisState.node: 64 random bits, its bus and leases'),
        # so no two live processes draw the same tag (one identity per process).
        node = getattr(state, "node", None)
        self.tag = (node if isinstance(node, str) and node else secrets.token_hex(8)) + "."
        self.copies = itertools.count(1)  # the numbers of this process's copies (their ids' "<k>_")
        leases = getattr(state, "tasks", None)  # per-process leases (_state._redis_tasks), if any
        self.leases: Any = leases if hasattr(leases, "alive") else None
        self._due: dict[str, SharedLegacyTransport] = {}  # copies served without a touch (find)
        self.starting: dict[str, list[Any]] = {}  # copies started for a HELD (_http_sessions_bus)
        self.handing: set[Any] = set()  # copies keeping what they handed over (_http_sessions_bus)
        self.watcher: asyncio.Task[None] | None = None  # the watch of those processes' leases
        self._toucher: asyncio.Task[None] | None = None
        state.on_message(lambda message: on_message(self, message))

    def _local(self, sid: str, record: dict[str, str] | None) -> SharedLegacyTransport:
        return self.app.start_session(SharedLegacyTransport, sid, registry=self, record=record)

    async def create(self) -> SharedLegacyTransport | None:
        """A new session (initialize); None at the cluster-wide cap. With auth, its record names
        the principal that opened it (``own``), which every process checks (``admits``)."""
        sid = h.new_session_id()
        app = self.app
        caller = current(app.caller)
        fields = {OWNER: caller.principal} if caller is not None else {}
        if not await self.directory.create(sid, fields, ttl=app.session_timeout, max_sessions=app.max_sessions):
            return None
        return self._local(sid, None)  # owned by the caller's principal (start_session)

    def _bus(self) -> int | None:
        """The bus's generation (``RedisState.bus_generation``); None: down, or not known."""
        generation = getattr(self.state, "bus_generation", None)
        return generation() if callable(generation) else None

    @property
    def window(self) -> float:
        """How long a touch vouches for a copy: the backend's ``fresh_for`` (else ``FRESH_FOR``)
        seconds, at most a quarter of ``session_timeout``."""
        fresh = float(getattr(self.state, "fresh_for", FRESH_FOR))
        timeout = self.app.session_timeout
        return min(fresh, timeout / 4) if timeout > 0 else fresh

    async def find(self, sid: str, local: Any) -> SharedLegacyTransport | None:
        """The local copy of ``sid`` (started from its record if there is none), after touching
        the record; None if the session is unknown, deleted or expired. A copy read less than
        :attr:`window` ago, with the bus listening since (it tells of a DELETE or a change at
        once), is served without a round trip, its touch batched in the background
        (:meth:`_touch_due`): a copy is stale for at most the window."""
        if local is not None and local.closed:
            local = None
        fresh = local is not None and local.generation is not None and local.generation == self._bus()
        if fresh and time.monotonic() - local.checked < self.window:
            self._due[sid] = local
            if self._toucher is None:
                self._toucher = asyncio.get_running_loop().create_task(self._touch_due())
            return local  # type: ignore[no-any-return]
        ttl = self.app.session_timeout
        generation, started = self._bus(), time.monotonic()
        try:
            found = await self.directory.touch(sid, local.rev if local is not None else 0, ttl=ttl)
        except StateUnavailable:
            if local is None:
                raise  # 503: only the backend knows this session
            return local  # type: ignore[no-any-return]  # served from this copy while the backend is down
        return await self._apply(sid, local, found, generation, started)

    async def _apply(
        self, sid: str, local: Any, found: Any, generation: int | None, started: float
    ) -> SharedLegacyTransport | None:
        """A touch's answer ``found`` for ``sid`` applied to its copy ``local`` (or None)."""
        ttl = self.app.session_timeout
        if isinstance(found, str):  # Redis lost its data (restarted empty): this copy restores it
            if local is None or local.mirror is None:
                return None
            log.info("HTTP session %s: restored in the state store from this process", sid)
            fields = local.mirror.snapshot()
            if local.owner is not None:
                fields[OWNER] = local.owner
            found = await self.directory.restore(sid, fields, ttl=ttl)
            local.rev = 0
        if found is None:
            if local is not None:  # ended elsewhere, or expired
                local.owns_events = local.session_ended = True
                self.app.end_session(local, abort=True)
            return None
        if local is None:  # unless another find started one meanwhile (one copy per process)
            local = self.app.sessions.get(sid)
            if local is not None and local.closed:
                local = None
        if local is None:
            local = self._local(sid, found if isinstance(found, dict) else None)
        elif isinstance(found, dict):
            local.refresh(found)
        local.generation, local.checked = generation, started
        return local  # type: ignore[no-any-return]

    async def _touch_due(self) -> None:
        """The background touch of the copies :meth:`find` served without one: once per window,
        in one round trip (``touch_many``) when the directory has it."""
        try:
            while self._due:
                await asyncio.sleep(self.window)
                due, self._due = self._due, {}
                due = {sid: t for sid, t in due.items() if not t.closed}
                if not due:
                    continue
                generation, started = self._bus(), time.monotonic()
                ttl = self.app.session_timeout
                try:
                    many = getattr(self.directory, "touch_many", None)
                    if many is not None:
                        found = await many({sid: t.rev for sid, t in due.items()}, ttl=ttl)
                    else:
                        found = {sid: await self.directory.touch(sid, t.rev, ttl=ttl) for sid, t in due.items()}
                    for sid, t in due.items():
                        if not t.closed:
                            await self._apply(sid, t, found[sid], generation, started)
                except StateUnavailable as exc:
                    for t in due.values():
                        t.generation = None  # the next request touches (or is served from its copy)
                    log.warning("the background touch of %d HTTP sessions failed: %s", len(due), exc)
        finally:
            self._toucher = None

    def close(self) -> None:
        """The server stops: the background touch and the watch with it (the copies are ended)."""
        if self._toucher is not None:
            self._toucher.cancel()
        if self.watcher is not None:
            self.watcher.cancel()
        self._due.clear()

    async def delete(self, transport: SharedLegacyTransport) -> None:
        """DELETE: the session ends everywhere (record gone, every copy told)."""
        transport.owns_events = transport.session_ended = True
        await self.directory.delete(transport.id)
        await self.publish({"type": ENDED, "sid": transport.id})

    async def publish(self, message: dict[str, Any]) -> None:
        try:
            await self.state.publish(message)
        except StateUnavailable as exc:
            log.warning("session %s: %s not shared with the other processes: %s", message["sid"], message["type"], exc)

    def resume(
        self, transport: LegacyTransport, last: str, stream_id: str, replay: list[tuple[str, bytes]]
    ) -> Stream | None:
        """A POST stream another process runs, not answered yet, resumed here at ``Last-Event-ID``
        ``last``: after the replay its events are read from the store, with their own ids, until
        its answer or the session's end. When that process no longer holds its lease (it died),
        each of its requests is answered with -32603 and the stream ends. None: not such a stream."""
        if stream_id == "0":  # the GET stream moves here: replay, then live (the others drop theirs)
            return transport.open_get_stream(priming=False)
        if stream_id.startswith(self.tag) or not hasattr(self.app.event_store, "read_after"):
            return None  # this process's own (complete) stream, or a store shared by no one
        if any(e.method is None for _, frame in replay if frame for e in peek(frame)):
            return None  # answered already: the replay is all there is
        last_seq = h.parse_event_id(replay[-1][0] if replay else last)
        if last_seq is None:
            return None
        tail = _TailStore(self.app.event_store)
        stream = Stream(stream_id, era=h.LEGACY, json_ok=False, store=tail, session_id=transport.id)  # type: ignore[arg-type]
        self.app._spawn(self._feed(stream, tail, transport, last_seq[1]))
        return stream

    async def _feed(self, stream: Stream, tail: _TailStore, transport: LegacyTransport, seq: int) -> None:
        store: Any = self.app.event_store
        quiet = time.monotonic()
        try:
            while not (stream.gone or transport.closed):
                batch = await store.read_after(transport.id, stream.id, seq, 1000)
                if batch:
                    quiet = time.monotonic()
                for got, frame in batch:
                    seq = got
                    if not frame:
                        continue  # a priming event: nothing to deliver
                    final = any(e.method is None for e in peek(frame))
                    tail.ids.append(h.event_id(stream.id, got))
                    await stream.put(frame, final)
                    if final:
                        return
                leases = self.leases
                if not batch and leases is not None and time.monotonic() - quiet >= leases.lease:
                    quiet = time.monotonic()
                    died = await self._runner_died(store, transport.id, stream.id)
                    if died is not None:
                        # A last look (its answer may have been stored as its lease ended).
                        for got, frame in await store.read_after(transport.id, stream.id, seq, 1000):
                            seq = got
                            if frame and any(e.method is None for e in peek(frame)):
                                tail.ids.append(h.event_id(stream.id, got))
                                await stream.put(frame, True)
                                return
                        node, ids = died
                        log.warning("session %s: the process running stream %s died; its requests "
                                    "%s are answered with an error", transport.id, stream.id, ids)  # fmt: skip
                        for i, rid in enumerate(ids):
                            await stream.put(_died(rid, node), i == len(ids) - 1)
                        return
        except StateUnavailable as exc:
            log.warning("session %s: stream %s cannot be followed: %s", transport.id, stream.id, exc)
        stream.finished = True  # the HTTP response ends (the client may resume again)
        stream.wake.set()

    async def reap(self) -> None:
        """Keep the records of busy copies alive; drop copies idle here (only here)."""
        app = self.app
        now = time.monotonic()
        for t in list(app.sessions.values()):
            if not isinstance(t, SharedLegacyTransport) or t.closed:
                continue
            if t.busy():
                try:
                    await self.find(t.id, t)
                except StateUnavailable:
                    continue
            elif t.idle_for(now) > app.session_timeout:
                try:
                    if await self.directory.ended(t.id):  # expired everywhere, not only idle here
                        t.owns_events = t.session_ended = True  # its core tasks end (on every process)
                        await self.publish({"type": ENDED, "sid": t.id})
                except StateUnavailable:
                    pass
                log.info("HTTP session %s: local copy dropped after %.0f s idle here", t.id, app.session_timeout)
                app.end_session(t)

    async def _runner_died(self, store: Any, sid: str, stream_id: str) -> tuple[str, list[Any]] | None:
        """(node, request ids) of the stream when the process that runs it no longer holds its
        lease; None while it does (or when the stream says nothing of it)."""
        raw = await store.note(sid, stream_id) if hasattr(store, "note") else None
        try:
            note: Any = json.loads(raw) if raw else {}
            node, ids = note["node"], note["ids"]
        except (ValueError, TypeError, KeyError):
            return None
        if not isinstance(node, str) or not isinstance(ids, list) or not ids or await self.leases.alive(node):
            return None
        return node, ids


def _died(request_id: Any, node: str) -> bytes:
    """The answer to a request whose process died before answering it (the client's request
    was fine: it may send it again)."""
    error = {
        "code": -32603,
        "message": "Internal error: the server process running this request died before answering it; "
        "send the request again",
        "data": {"reason": "server process died", "process": node},
    }
    return rpc.encode(rpc.error_response(request_id, error))


class _NotedStore:
    """The event store of a POST stream run here: its first stored event carries ``note``
    (this process and the stream's request ids, for whoever resumes it if this process dies)."""

    def __init__(self, real: Any, note: str) -> None:
        self.real = real
        self.pending: str | None = note  # until the first event is stored

    async def store(self, session_id: str, stream_id: str, message: bytes) -> str | None:
        note, self.pending = self.pending, None
        if note is None:
            return await self.real.store(session_id, stream_id, message)  # type: ignore[no-any-return]
        return await self.real.store(session_id, stream_id, message, note=note)  # type: ignore[no-any-return]

    async def discard_stream(self, session_id: str, stream_id: str) -> None:
        await self.real.discard_stream(session_id, stream_id)


class _TailStore:
    """The event store of a stream resumed on a process that does not run it: its events are
    in the store already, so "storing" one only hands back the id it was stored under."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.ids: deque[str] = deque()

    async def store(self, session_id: str, stream_id: str, message: bytes) -> str | None:
        return self.ids.popleft() if self.ids else None

    async def discard_stream(self, session_id: str, stream_id: str) -> None:
        await self.real.discard_stream(session_id, stream_id)  # delivered whole: as the pump would
