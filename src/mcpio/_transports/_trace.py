"""Wire traces: every frame a peer sends and receives, appended to a file as a line
``<UTC time> in|out <the frame>`` ("in" and "out" as seen by the peer writing the trace).

The server writes one with ``MCPIO_TRACE=/path`` (stdio); the client with ``Client(trace=path)``
or ``mcpio … --trace FILE`` (:class:`Traced` wraps any transport). Lines are flushed as
written; a frame that is not UTF-8 is written with replacement characters.

A trace holds every message, secrets included, so :func:`open_private` creates it readable by
its owner only (0600) and never follows a symbolic link planted at its path; an existing
regular file is appended to. This process's own descriptors (``/dev/stdout``, ``/dev/fd/N``)
stay usable.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from typing import IO, Any

from .._platform import restore_blocking
from .._protocol._framing import Decoded, Oversized, Related
from ._base import Abilities, abilities, routing_key

Trace = Callable[[str, bytes], None]


_OWN_DESCRIPTORS = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/")


def open_private(path: str, *, buffering: int = -1) -> IO[str]:
    """``path`` opened for appending text: created 0600 if new; OSError if it is a symbolic
    link (``ELOOP``) or not a regular file — except this process's own descriptors
    (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``), which are links by design."""
    own = path in _OWN_DESCRIPTORS[:2] or path.startswith(_OWN_DESCRIPTORS[2:])
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    if not own:
        flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not hang us
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", None) or os.path.islink(path):
            raise OSError(exc.errno, f"{path} is a symbolic link, which a trace file must not be") from None
        raise
    if not own:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(0, f"{path} is not a regular file")
        restore_blocking(fd)  # opened O_NONBLOCK so that a FIFO cannot hang us; writes block
    return open(fd, "a", buffering=buffering, encoding="utf-8", errors="replace")


def open_trace(path: str) -> Trace:
    """A function appending ``(direction, frame)`` lines to ``path`` (:func:`open_private`);
    OSError if it cannot be opened."""
    f = open_private(path, buffering=1)  # open for the process's life

    def trace(direction: str, frame: bytes) -> None:
        now = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
        f.write(f"{stamp} {direction} {bytes(frame).decode('utf-8', 'replace')}\n")

    return trace


def as_traced(frame: Any) -> bytes:
    """What a trace shows of a received frame: its bytes, or a marker for an Oversized one."""
    if type(frame) is Oversized:
        return f'"<a line of {frame.size} bytes over the limit of {frame.limit}, discarded>"'.encode()
    return frame.raw if type(frame) in (Decoded, Related) else frame  # type: ignore[no-any-return]


class Traced:
    """``inner`` (any transport), with every frame written to ``trace`` on its way."""

    def __init__(self, inner: Any, trace: Trace) -> None:
        self.inner = inner
        self.trace = trace
        # What stays true through a trace: not send_nowait/answer_nowait/attach/push (frames would
        # skip the trace).
        o = abilities(inner)
        self.abilities = Abilities(
            unanswered=o.unanswered,
            close_reason=o.close_reason,
            relates=o.relates,
            routing_key=routing_key(inner),
            session_id=o.session_id,
            session_ended=o.session_ended,
            request_ids=o.request_ids,
            http_scope=o.http_scope,
            close_stream=o.close_stream,
            key=o.key,
            open=o.open,
            stderr_tail=o.stderr_tail,
            closed_error=o.closed_error,
            accept_tools=o.accept_tools,
        )

    async def send(self, frame: bytes) -> None:
        self.trace("out", frame)
        await self.inner.send(frame)

    async def receive(self) -> Any:
        frame = await self.inner.receive()
        self.trace("in", as_traced(frame))
        return frame

    async def aclose(self) -> None:
        await self.inner.aclose()
