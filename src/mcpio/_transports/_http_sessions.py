"""Legacy HTTP sessions shared by every process of a state backend (``RedisState``).

With a backend that has a session directory (``state.sessions``, :class:`~mcpio._state._base.
SessionDirectory`), a legacy session is no longer the property of the process that answered
its initialize: its record (version, client capabilities and info, log level, subscriptions)
lives in the backend with an idle expiry of ``session_timeout`` and the cap ``max_sessions``
counted over all processes. Each process keeps *local copies* in ``StreamableHTTPApp.sessions``
(the origin and replicas alike, each a :class:`SharedLegacyTransport` running its own server
session):

* every request touches the record (one round trip: it keeps the session alive, tells a
  deleted or expired session — 404 — and brings a changed record); a process that has no copy
  starts one primed from the record (no handshake) and serves the request there, so the
  request's progress, logs and server-to-client requests go to the POST's own stream;
* requests that change the record (initialize, logging/setLevel, resources/subscribe and
  unsubscribe) write the fields that changed *before* their answer goes out, and the new record
  goes on the bus so every copy is current at once;
* a client's responses (to sampling, elicitation, roots/list) and ``notifications/cancelled``
  are delivered to the local copy and published on the bus to every other copy: the one whose
  request is waiting takes it, the others ignore an id they do not know;
* DELETE removes the record and tells every process on the bus to end its copy (requests in
  flight are cancelled); an expired record is found gone by the next request (404);
* a copy idle here for ``session_timeout`` is dropped here only (the session may live on
  elsewhere); a busy one (request in flight, stream open) keeps its record alive.

Notifications outside a request (resources/updated, list_changed, logs) go to the GET stream
of the copy that holds it; copies without one drop them, so the client gets each once.
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import TYPE_CHECKING, Any

from .._protocol import _http as h
from .._state._base import SessionDirectory, StateUnavailable
from ._http_server_streams import LegacyTransport, peek

if TYPE_CHECKING:
    from ._http_server import StreamableHTTPApp

log = logging.getLogger("mcpio.http")

# Requests whose handling changes the record (they write it before their answer goes out).
RECORDED = frozenset({"initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
ENDED = "mcpio/session-ended"
CHANGED = "mcpio/session-changed"
FRAME = "mcpio/session-frame"


class SharedLegacyTransport(LegacyTransport):
    """A local copy of a shared legacy session (see the module docstring)."""

    def __init__(self, session_id: str, *, registry: SharedSessions, record: dict[str, str] | None) -> None:
        super().__init__(session_id, store=registry.app.event_store)
        self.registry = registry
        self.stream_prefix = registry.tag
        self.record = record  # what a replica is primed from (None: this process made it)
        self.rev = int(record.get("rev", 0)) if record else 1
        self.known: dict[str, str] = _fields(record) if record else {}  # the fields stored
        self.mirror: Any = None  # _server._replicas.SessionMirror, bound by the server
        self.recorded: set[Any] = set()  # ids of RECORDED requests in flight
        self.owns_events = False  # forget the event store's keys at the end (only if it ended)

    def bind_mirror(self, mirror: Any) -> None:
        """Called by the server before its session reads anything: prime a replica."""
        self.mirror = mirror
        if self.record is not None:
            mirror.apply(self.record)
            self.record = None

    def refresh(self, record: dict[str, str]) -> None:
        """A newer record (another process changed it): apply it to this copy."""
        rev = int(record.get("rev", 0))
        if rev <= self.rev and self.mirror is not None:
            return
        self.rev = rev
        self.known = _fields(record)
        if self.mirror is not None:
            self.mirror.apply(record)
        else:
            self.record = record

    async def deliver(self, frame: bytes) -> None:
        forward = False
        for e in peek(frame):
            if e.method is None or e.method == "notifications/cancelled":
                forward = True  # it may belong to a request running on another process
            elif e.method in RECORDED and isinstance(e.id, (int, str)):
                self.recorded.add(e.id)
        await super().deliver(frame)
        if forward:
            await self.registry.forward(self.id, frame)

    async def send(self, frame: bytes) -> None:
        if self.recorded:
            ids = {e.id for e in peek(frame) if e.method is None}
            if ids & self.recorded:
                self.recorded -= ids
                await self.sync()
        await super().send(frame)

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


def _fields(record: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in record.items() if k != "rev"}


class SharedSessions:
    """The legacy sessions of one :class:`StreamableHTTPApp` on a shared backend."""

    def __init__(self, app: StreamableHTTPApp, state: Any, directory: SessionDirectory) -> None:
        self.app = app
        self.state = state
        self.directory = directory
        self.tag = secrets.token_hex(3) + "."  # this process's POST streams: "<tag><n>"
        state.on_message(self.on_message)

    def _local(self, sid: str, record: dict[str, str] | None) -> SharedLegacyTransport:
        app = self.app
        transport = SharedLegacyTransport(sid, registry=self, record=record)
        transport.retry_ms = app.retry_ms
        app.sessions[sid] = transport
        app.run_session(transport, sid)
        if app._reaper is None and app.session_timeout > 0:
            app._reaper = app._spawn(app._reap())
        return transport

    async def create(self) -> SharedLegacyTransport | None:
        """A new session (initialize); None at the cluster-wide cap."""
        sid = h.new_session_id()
        app = self.app
        if not await self.directory.create(sid, {}, ttl=app.session_timeout, max_sessions=app.max_sessions):
            return None
        return self._local(sid, None)

    async def find(self, sid: str, local: Any) -> SharedLegacyTransport | None:
        """The local copy of ``sid`` (started from its record if there is none), after touching
        the record; None if the session is unknown, deleted or expired."""
        if local is not None and local.closed:
            local = None
        found = await self.directory.touch(sid, local.rev if local is not None else 0, ttl=self.app.session_timeout)
        if found is None:
            if local is not None:  # ended elsewhere, or expired
                local.owns_events = True
                self.app.end_session(local, abort=True)
            return None
        if local is None:
            return self._local(sid, found if isinstance(found, dict) else None)
        if isinstance(found, dict):
            local.refresh(found)
        return local  # type: ignore[no-any-return]

    async def delete(self, transport: SharedLegacyTransport) -> None:
        """DELETE: the session ends everywhere (record gone, every copy told)."""
        transport.owns_events = True
        await self.directory.delete(transport.id)
        await self.state.publish({"type": ENDED, "sid": transport.id})

    async def forward(self, sid: str, frame: bytes) -> None:
        try:
            await self.state.publish({"type": FRAME, "sid": sid, "frame": frame.decode()})
        except StateUnavailable as exc:
            log.warning("session %s: a client message not shared with the other processes: %s", sid, exc)

    async def on_message(self, message: dict[str, Any]) -> None:
        """Bus messages from other processes about sessions this process has a copy of."""
        kind = message.get("type")
        if kind not in (ENDED, CHANGED, FRAME):
            return
        local = self.app.sessions.get(str(message.get("sid")))
        if not isinstance(local, SharedLegacyTransport) or local.closed:
            return
        if kind == ENDED:
            self.app.end_session(local, abort=True)
        elif kind == CHANGED and isinstance(message.get("record"), dict):
            local.refresh(message["record"])
        elif kind == FRAME and isinstance(message.get("frame"), str):
            await LegacyTransport.deliver(local, message["frame"].encode())  # not forwarded again

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
                log.info("HTTP session %s: local copy dropped after %.0f s idle here", t.id, app.session_timeout)
                app.end_session(t)
