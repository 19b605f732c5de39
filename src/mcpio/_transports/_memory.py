"""In-memory transport pair for tests and embedding: the same frames as stdio, no pipes.

Frames are copied as bytes, so both sides go through the same serialisation path as a real
connection. Each direction is a bounded queue: a sender that outruns its reader waits.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .._errors import EndOfStream, TransportError
from ._base import Abilities, Frame

_EOF = None  # the end marker on a queue (frames are bytes, never None)


class MemoryTransport:
    """One end of a :func:`memory_pair`."""

    def __init__(
        self, inbox: asyncio.Queue[bytes | None], outbox: asyncio.Queue[bytes | None], key: str | None = None
    ) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self.closed = False  # (read only)
        self._eof = False
        self.abilities = Abilities(key=key)  # key: identifies the peer for per-server memories

    async def send(self, frame: bytes) -> None:
        if self.closed:
            raise TransportError("send on a closed memory transport")
        await self._outbox.put(bytes(frame))

    async def receive(self) -> Frame:
        if self._eof:
            raise EndOfStream()
        item = await self._inbox.get()
        if item is None:  # _EOF
            self._eof = True
            raise EndOfStream()
        return item

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            end_queue(self._outbox)


def end_queue(queue: asyncio.Queue[Any]) -> bool:
    """Queue the end marker (``None``) for ``queue``'s reader. A full queue means the reader is
    behind: what it has not read is dropped first, as closing a real pipe does (True)."""
    dropped = queue.full()
    while dropped and not queue.empty():
        queue.get_nowait()
    queue.put_nowait(_EOF)
    return dropped


def memory_pair(max_frames: int = 1024, *, key: str | None = None) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports: what one sends, the other receives. ``key``: what the first
    one's abilities identify its peer by (a Client's per-server memories)."""
    a_to_b: asyncio.Queue[bytes | None] = asyncio.Queue(max_frames)
    b_to_a: asyncio.Queue[bytes | None] = asyncio.Queue(max_frames)
    return MemoryTransport(b_to_a, a_to_b, key), MemoryTransport(a_to_b, b_to_a)
