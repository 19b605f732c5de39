"""The bus between the copies of a legacy HTTP session shared by several processes
(``_http_sessions``): the messages each process's ``SharedSessions`` publishes and hears, and where
the session's GET stream is.

What is sent outside a request goes to the session's GET stream, on the one process that holds
it (``GET_MOVED`` tells the others where). A change told to every copy (list changes, resource
updates: ``_base.everywhere``) is sent by the copy there and dropped by the others; what a copy
sends on its own (a log message, a request to the client) goes over the bus to that process
(``HELD``). Before the session's first GET, each copy holds both (``before_get``), and hands its
own over when it hears where the GET opened; a copy started later learns it from the record
(``GET_AT``).
"""

from __future__ import annotations

import logging
from typing import Any

from .._state._base import StateUnavailable
from ._base import everywhere
from ._http_legacy import LegacyTransport
from ._http_server_streams import Stream

log = logging.getLogger("mcpio.http")

ENDED = "mcpio/session-ended"
CHANGED = "mcpio/session-changed"
FRAME = "mcpio/session-frame"
GET_MOVED = "mcpio/session-get"  # {sid, at}: the GET stream opened on process ``at`` (its tag)
HELD = "mcpio/session-held"  # {sid, at, frames}: a copy's own messages for the GET stream on ``at``
GET_AT = "get"  # the record's field naming the process (its tag) that opened the GET stream last


class HeldForGet(LegacyTransport):
    """What a copy of a shared session sends outside a request, and its GET stream (the module
    docstring); :class:`~._http_sessions.SharedLegacyTransport` is one."""

    registry: Any  # the process's SharedSessions
    get_at: str | None  # the process holding the session's GET stream, when not this one

    def open_get_stream(self, *, priming: bool) -> Stream | None:
        """The GET stream, here; the other processes' copies drop theirs (one per session) and
        send theirs what they held for it (:meth:`get_moved`)."""
        stream = super().open_get_stream(priming=priming)
        if stream is not None:
            self.get_at = None
            self.registry.app._spawn(self._get_here())
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

    def get_moved(self, at: str | None) -> list[str]:
        """Process ``at`` holds the session's GET stream now: this one ends, and what this copy
        sends on its own outside a request goes there (:meth:`outside`). Returns what it held
        for the first GET of its own (for that stream; not the changes every copy was told)."""
        held = [frame.decode() for frame, told in self.before_get if not told] if self.before_get else []
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

    async def take_held(self, frames: list[str]) -> None:
        """Put on this copy's GET stream what another copy of the session sent for it (``HELD``);
        only that process's copy, admitted for the session's principal, can have opened it."""
        for frame in frames:
            stream = self.get_stream
            if stream is None or self.closed:
                log.debug("session %s: %d message(s) for a GET stream gone from here; dropped", self.id, len(frames))
                return
            await stream.put(frame.encode(), final=False)


async def on_message(reg: Any, message: dict[str, Any]) -> None:
    """Bus messages from other processes about sessions process ``reg`` (its ``SharedSessions``)
    has a copy of."""
    kind = message.get("type")
    if kind not in (ENDED, CHANGED, FRAME, GET_MOVED, HELD):
        return
    found = reg.app.sessions.get(str(message.get("sid")))
    if not isinstance(found, HeldForGet) or found.closed:
        return
    local: Any = found  # a SharedLegacyTransport
    if kind == ENDED:
        local.session_ended = True
        reg.app.end_session(local, abort=True)
    elif kind == GET_MOVED:
        at = message.get("at")
        held = local.get_moved(at if isinstance(at, str) else None)
        if held and isinstance(at, str):
            reg.app._spawn(reg.publish({"type": HELD, "sid": local.id, "at": at, "frames": held}))
    elif kind == HELD:
        frames = message.get("frames")
        if message.get("at") == reg.tag and isinstance(frames, list) and all(type(f) is str for f in frames):
            reg.app._spawn(local.take_held(frames))  # a task: a slow stream never holds up the bus
    elif kind == CHANGED and isinstance(message.get("record"), dict):
        local.refresh(message["record"], newer_only=True)
    elif kind == FRAME and isinstance(message.get("frame"), str):
        to = message.get("to")  # the processes whose copies it answers (absent: every copy)
        if isinstance(to, list) and reg.tag not in to:
            return
        # Not forwarded again; a task, so a full inbox never holds up the bus.
        reg.app._spawn(LegacyTransport.deliver(local, message["frame"].encode()))
