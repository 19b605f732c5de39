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

The process holding the GET stream (or holding what is sent for it, its copy started from a record
naming it) holds its lease (``state.tasks``) meanwhile, and for twice the lease after. A copy keeps
what it handed over (the last ``HELD_FOR_GET``) until that process is known to have held its lease
after receiving it: a watch per process asks once per half lease, only while something is so kept
(no round trip per message). A process found without its lease died (kill -9, a crash): what the
copy handed it since it was last known alive, and what the copy sends on its own from then on, is
held for the client's next GET (``before_get``), wherever it opens. So nothing a copy sends for the
GET stream is lost with that process; a message it had already written there before dying may come
twice.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from typing import Any

from .._state._base import StateUnavailable
from ._base import everywhere
from ._http_legacy import HELD_FOR_GET, LegacyTransport
from ._http_server_streams import Stream, peek

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
HANDED_MARGIN = 1.0  # seconds allowed for a HELD to reach its process and be taken there
_holds = itertools.count(1)  # the keys of this process's lease holds for GET streams


class HeldForGet(LegacyTransport):
    """What a copy of a shared session sends outside a request, and its GET stream (the module
    docstring); :class:`~._http_sessions.SharedLegacyTransport` is one."""

    registry: Any  # the process's SharedSessions
    get_at: str | None  # the process holding the session's GET stream, when not this one
    session_ended: bool  # the session itself ended (DELETE, expiry), not only this copy

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        # (change id, frame): the last TOLD_KEPT sent or held, until the first GET's handovers are
        # in (then None: no copy hands a change over again)
        self.told: dict[tuple[str, bytes], None] | None = {}
        self.told_until: float | None = None  # when, if the first GET opened on this copy
        self.noting: Any = None  # the task noting that the GET stream is here (_get_here)
        # (when, process, frame): what this copy handed over for the GET stream, until that process
        # is known to have held its lease after receiving it (_watch)
        self.handed: deque[tuple[float, str, bytes]] = deque(maxlen=HELD_FOR_GET)
        self.get_hold: Any = None  # this process's lease hold while the GET stream is here

    def holds_get(self, holds: bool, *, ended: bool = False) -> None:
        """Whether this process holds the session's GET stream, or what is sent for it: its lease
        is held meanwhile, and for twice the lease after (a copy that handed it something just
        before finds it alive then, not dead), unless the session ``ended``."""
        leases = self.registry.leases
        if leases is None or holds == (self.get_hold is not None):
            return
        if holds:
            self.get_hold = (self.id, GET_AT, next(_holds))
            leases.hold(self.get_hold)
        else:
            if ended:
                leases.release(self.get_hold)
            else:
                loop = asyncio.get_running_loop()
                loop.call_later(2 * leases.lease + HANDED_MARGIN, leases.release, self.get_hold)
            self.get_hold = None

    def end_streams(self) -> None:
        super().end_streams()
        self.holds_get(False, ended=self.session_ended)

    async def heard(self, node: str, alive: bool, before: float) -> None:
        """Whether process ``node`` held its lease when asked (``alive``); ``before``: what was
        handed to it before then, it received. Dead: what was handed to it since goes again, and
        what this copy sends from now on is held for the next GET, if the GET stream was there."""
        if alive:
            kept = [h for h in self.handed if h[1] != node or h[0] >= before]
        elif lost := [f for _, at, f in self.handed if at == node]:
            kept = [h for h in self.handed if h[1] != node]
            log.info(
                "session %s: process %s, holding its GET stream, died; %d message(s) sent again",
                self.id,
                node,
                len(lost),
            )
            if self.get_at == node:
                self.get_at, self.before_get = None, deque(maxlen=HELD_FOR_GET)
        else:
            return
        self.handed = deque(kept, maxlen=HELD_FOR_GET)
        for frame in [] if alive else lost:
            await self.route(frame, peek(frame))

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
            self.holds_get(True)
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
        self.holds_get(False)
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
            handed(self.registry, self, at, [frame])

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
        body = {"frames": [f for f, _ in held], "changes": [c for _, c in held]}
        reg.app._spawn(reg.publish({"type": HELD, "sid": local.id, "at": at, **body}))
        handed(reg, local, at, [f.encode() for f, told in held if not told])


def handed(reg: Any, local: Any, at: str, frames: list[bytes]) -> None:
    """``local`` handed ``frames`` to process ``at`` for the GET stream: kept until ``at`` is known
    to have received them (:func:`_watch`, started if it is not running)."""
    if reg.leases is None or not frames:
        return
    now = time.monotonic()
    local.handed.extend((now, at, f) for f in frames)
    reg.handing.add(local)
    if reg.watcher is None:
        reg.watcher = reg.app._spawn(_watch(reg))


async def _watch(reg: Any) -> None:
    """While this process's copies keep what they handed over, ask once per half lease whether
    each process they handed it to holds its lease, and tell them (:meth:`HeldForGet.heard`)."""
    leases = reg.leases
    try:
        while reg.handing:
            await asyncio.sleep(leases.lease / 2)
            reg.handing.difference_update([t for t in reg.handing if t.closed or not t.handed])
            for node in {at for t in reg.handing for _, at, _ in t.handed}:
                asked = time.monotonic()
                try:
                    alive = await leases.alive(node)
                except StateUnavailable:
                    continue  # asked again next time
                for t in list(reg.handing):
                    await t.heard(node, alive, asked - leases.lease - HANDED_MARGIN)
    finally:
        reg.watcher = None


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
