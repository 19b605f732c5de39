"""The bus between the copies of a legacy HTTP session shared by several processes
(``_http_sessions``): the messages each process's ``SharedSessions`` publishes and hears, and where
the session's GET stream is.

What is sent outside a request goes to the session's GET stream, on the one process that holds
it (``GET_MOVED`` tells the others where). A change told to every copy (list changes, resource
updates, extension notifications, a core task's status: ``_base.everywhere``, with the change's
id) is sent by the copy there and dropped by the others; what a copy sends on its own (a log
message, a request to the client) goes over the bus to that process (``HELD``). Before the
session's first GET, each copy holds both (``before_get``), and hands both over when it hears
where the GET opened: the copy there may have been started for that GET, from the record, and
was told nothing before. That copy sends each change once, whichever telling reaches it first
(its own, or one handed over: :meth:`HeldForGet.first_telling`). A copy started after the GET
opened learns where from the record (``GET_AT``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from .._state._base import StateUnavailable
from ._base import everywhere
from ._http_legacy import HELD_FOR_GET, LegacyTransport
from ._http_server_streams import Stream

log = logging.getLogger("mcpio.http")

ENDED = "mcpio/session-ended"
CHANGED = "mcpio/session-changed"
FRAME = "mcpio/session-frame"
GET_MOVED = "mcpio/session-get"  # {sid, at}: the GET stream opened on process ``at`` (its tag)
# {sid, at, frames, changes}: a copy's messages for the GET stream on ``at``, each with the id of
# the change it tells every copy ("": its own; no ``changes``: all its own)
HELD = "mcpio/session-held"
GET_AT = "get"  # the record's field naming the process (its tag) that opened the GET stream last
TOLD_KEPT = 4 * HELD_FOR_GET  # the changes a copy remembers sending, against a second telling
TOLD_FOR = 60.0  # seconds the first GET's copy remembers them, for the handovers (the bus's WINDOW)


class HeldForGet(LegacyTransport):
    """What a copy of a shared session sends outside a request, and its GET stream (the module
    docstring); :class:`~._http_sessions.SharedLegacyTransport` is one."""

    registry: Any  # the process's SharedSessions
    get_at: str | None  # the process holding the session's GET stream, when not this one

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        # (change id, frame): the last TOLD_KEPT sent or held, until the first GET's handovers are
        # in (then None: no copy hands a change over again)
        self.told: dict[tuple[str, bytes], None] | None = {}
        self.told_until: float | None = None  # when, if the first GET opened on this copy
        self.noting: Any = None  # the task noting that the GET stream is here (_get_here)

    def first_telling(self, change_id: str, frame: bytes) -> bool:
        """Whether ``frame``, telling change ``change_id``, is new to this copy (then noted): a
        change reaches the copy holding the first GET stream from its own process and from the
        copies that held it; it goes out once."""
        told = self.told
        if told is not None and self.before_get is None:
            until = self.told_until
            if until is None or time.monotonic() > until:
                told = self.told = None  # the first GET is elsewhere, or its handovers are in
        if told is None:
            return True
        key = (change_id, frame)
        if key in told:
            return False
        told[key] = None
        if len(told) > TOLD_KEPT:
            del told[next(iter(told))]
        return True

    async def route(self, frame: bytes, envelopes: list[Any]) -> None:
        """:meth:`LegacyTransport.route`; a change told to every copy only the first time."""
        told = everywhere.get()
        if told and not self.first_telling(told, frame):
            return
        await super().route(frame, envelopes)

    def open_get_stream(self, *, priming: bool) -> Stream | None:
        """The GET stream, here; the other processes' copies drop theirs (one per session) and
        send theirs what they held for it (:meth:`get_moved`)."""
        first = self.before_get is not None
        stream = super().open_get_stream(priming=priming)
        if stream is not None:
            if first:
                self.told_until = time.monotonic() + TOLD_FOR
            self.get_at = None
            self.noting = self.registry.app._spawn(self._get_here())
        return stream

    async def _get_here(self) -> None:
        """Tell the record (read by copies started from now on), then the other copies, that the
        GET stream is on this process: a copy is told one way or the other."""
        reg = self.registry
        try:  # (rev unchanged: no copy reads the record again for it)
            await reg.directory.note(self.id, GET_AT, reg.tag, ttl=reg.app.session_timeout)
        except StateUnavailable as exc:
            log.warning("session %s: which process holds its GET stream is not recorded: %s", self.id, exc)
        await reg.publish({"type": GET_MOVED, "sid": self.id, "at": reg.tag})

    def get_moved(self, at: str | None) -> list[tuple[str, str]]:
        """Process ``at`` holds the session's GET stream now: this one ends, and what this copy
        sends on its own outside a request goes there (:meth:`outside`). Returns what it held
        for the first GET (for that stream), each frame with its change's id ("": its own)."""
        held = [(frame.decode(), told) for frame, told in self.before_get] if self.before_get else []
        stream, self.get_stream, self.before_get, self.get_at = self.get_stream, None, None, at
        if stream is not None:
            self.streams.pop(stream.id, None)
            stream.finished = True
            stream.wake.set()
        return held

    async def outside(self, frame: bytes, method: str | None) -> None:
        """:meth:`LegacyTransport.outside`; what this copy sends on its own while another process
        holds the session's GET stream goes there, on the bus."""
        at = self.get_at
        if at is None or everywhere.get():
            await super().outside(frame, method)
        else:
            await self.registry.publish({"type": HELD, "sid": self.id, "at": at, "frames": [frame.decode()]})

    async def take_held(self, frames: list[str], changes: list[str]) -> None:
        """Put on this copy's GET stream what another copy of the session sent for it (``HELD``),
        or hold it for that stream (a copy started here since: ``before_get``), a change told to
        every copy only if it is new here (``changes``: their ids, "" for that copy's own); only
        that process's copy, admitted for the session's principal, can open it."""
        for frame, told in zip(frames, changes, strict=True):
            stream, held = self.get_stream, self.before_get
            if self.closed or (stream is None and held is None):
                log.debug("session %s: %d message(s) for a GET stream gone from here; dropped", self.id, len(frames))
                return
            data = frame.encode()
            if told and not self.first_telling(told, data):
                continue
            if stream is not None:
                await stream.put(data, final=False)
            elif held is not None:
                held.append((data, told))


async def on_message(reg: Any, message: dict[str, Any]) -> None:
    """Bus messages from other processes about sessions process ``reg`` (its ``SharedSessions``)
    has a copy of."""
    kind = message.get("type")
    if kind not in (ENDED, CHANGED, FRAME, GET_MOVED, HELD):
        return
    sid = str(message.get("sid"))
    found = reg.app.sessions.get(sid)
    if not isinstance(found, HeldForGet) or found.closed:
        if kind == HELD and message.get("at") == reg.tag:
            _restart(reg, sid, message)
        return
    local: Any = found  # a SharedLegacyTransport
    if kind == ENDED:
        local.session_ended = True
        reg.app.end_session(local, abort=True)
    elif kind == GET_MOVED:
        at = message.get("at")
        stream = local.get_stream
        if stream is not None and stream.attached and isinstance(at, str):
            reg.app._spawn(_contested(reg, local, at))  # a GET stream here too: which stays?
        else:
            _moved(reg, local, at if isinstance(at, str) else None)
    elif kind == HELD and (held := _held(reg, message)) is not None:
        reg.app._spawn(local.take_held(*held))  # a task: a slow stream never holds up the bus
    elif kind == CHANGED and isinstance(message.get("record"), dict):
        local.refresh(message["record"], newer_only=True)
    elif kind == FRAME and isinstance(message.get("frame"), str):
        to = message.get("to")  # the processes whose copies it answers (absent: every copy)
        if isinstance(to, list) and reg.tag not in to:
            return
        # Not forwarded again; a task, so a full inbox never holds up the bus.
        reg.app._spawn(LegacyTransport.deliver(local, message["frame"].encode()))


def _held(reg: Any, message: dict[str, Any]) -> tuple[list[str], list[str]] | None:
    """The (frames, change ids) of a ``HELD`` message for this process; None: not for it, or malformed."""
    frames, changes = message.get("frames"), message.get("changes")
    if message.get("at") != reg.tag or not isinstance(frames, list) or any(type(f) is not str for f in frames):
        return None
    if not isinstance(changes, list) or len(changes) != len(frames) or any(type(c) is not str for c in changes):
        changes = [""] * len(frames)
    return frames, changes


def _restart(reg: Any, sid: str, message: dict[str, Any]) -> None:
    """A ``HELD`` for session ``sid``'s GET stream here, with no copy here (it was dropped, idle
    here, while the client went on elsewhere): a copy started from the record holds it for that
    stream (the record names this process: ``GET_AT``), as a copy started for a request does.
    Those that come while it starts wait in ``reg.starting``, in order."""
    held = _held(reg, message)
    if held is None:
        return
    waiting = reg.starting.get(sid)
    if waiting is not None:
        waiting.append(held)
        return
    reg.starting[sid] = [held]

    async def start() -> None:
        try:
            local = await reg.find(sid, None)
        except StateUnavailable:
            local = None
        finally:
            waiting = reg.starting.pop(sid)
        if local is None:
            log.debug("session %s: messages for its GET stream, but it has ended; dropped", sid)
            return
        for frames, changes in waiting:
            await local.take_held(frames, changes)

    reg.app._spawn(start())


def _moved(reg: Any, local: Any, at: str | None) -> None:
    """Process ``at`` holds ``local``'s session's GET stream now (:meth:`HeldForGet.get_moved`):
    what this copy held for it goes there."""
    held = local.get_moved(at)
    if held and at is not None:
        handed = {"frames": [f for f, _ in held], "changes": [c for _, c in held]}
        reg.app._spawn(reg.publish({"type": HELD, "sid": local.id, "at": at, **handed}))


async def _contested(reg: Any, local: Any, at: str) -> None:
    """Process ``at`` opened a GET stream of the session while this copy has one open (two GETs
    at once on two processes): the one whose process the record names stays (each process notes
    itself there before it tells the others, so once this copy's own note is in, both read the
    same record), and tells the others again, since they may have heard the two in either order;
    the other ends, as when the GET moves. The record unreadable: this one ends."""
    noting = local.noting
    if noting is not None and not noting.done():
        await asyncio.wait([noting])
    try:
        record = await reg.directory.touch(local.id, 0, ttl=reg.app.session_timeout)
    except StateUnavailable:
        record = None
    if isinstance(record, dict) and record.get(GET_AT) == reg.tag and not local.closed:
        stream = local.get_stream
        if stream is not None and stream.attached:
            await reg.publish({"type": GET_MOVED, "sid": local.id, "at": reg.tag})
            return
    _moved(reg, local, at)
