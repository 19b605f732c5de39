"""Wire traces: every frame a peer sends and receives, appended to a file as a line
``<UTC time> in|out <the frame>`` ("in" and "out" as seen by the peer writing the trace).

The server writes one with ``MCPIO_TRACE=/path`` (stdio); the client with ``Client(trace=path)``
or ``mcpio … --trace FILE``: :class:`Traced` wraps any transport. A trace is a debugging aid:
lines are flushed as written, and a frame that is not UTF-8 is written with replacement
characters.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .._protocol._framing import Oversized

Trace = Callable[[str, bytes], None]


def open_trace(path: str) -> Trace:
    """A function appending ``(direction, frame)`` lines to ``path``; OSError if it cannot be opened."""
    f = open(path, "a", buffering=1, encoding="utf-8", errors="replace")  # noqa: SIM115 - open for the process's life

    def trace(direction: str, frame: bytes) -> None:
        now = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
        f.write(f"{stamp} {direction} {bytes(frame).decode('utf-8', 'replace')}\n")

    return trace


def oversized_marker(frame: Oversized) -> bytes:
    return f'"<a line of {frame.size} bytes over the limit of {frame.limit}, discarded>"'.encode()


class Traced:
    """``inner`` (any transport), with every frame written to ``trace`` on its way."""

    def __init__(self, inner: Any, trace: Trace) -> None:
        self.inner = inner
        self.trace = trace

    def __getattr__(self, name: str) -> Any:  # key, stderr_tail, accept_tools … of the inner transport
        return getattr(self.inner, name)

    async def open(self) -> None:
        opener = getattr(self.inner, "open", None)
        if opener is not None:
            await opener()

    async def send(self, frame: bytes) -> None:
        self.trace("out", frame)
        await self.inner.send(frame)

    async def receive(self) -> Any:
        frame = await self.inner.receive()
        self.trace("in", oversized_marker(frame) if type(frame) is Oversized else frame)
        return frame

    async def aclose(self) -> None:
        await self.inner.aclose()
