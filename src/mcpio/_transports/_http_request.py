"""The transport of one modern (2026-07-28) Streamable HTTP POST (see ``_http_server_streams``):
its one request in, its answers out to that POST's own :class:`~._http_server_streams.Stream`."""

from __future__ import annotations

import asyncio
from typing import Any

from .._errors import EndOfStream, TransportError
from .._protocol._framing import Decoded
from ._http_server_streams import Stream, peek


class RequestTransport:
    """The transport of one modern (2026-07-28) POST: one frame in, its answers out to the
    POST's own stream; end of stream once the final answer is out or the client has gone."""

    listen = False  # a subscriptions/listen stream: no final answer, handed over at once when draining

    def __init__(self, frame: bytes, stream: Stream, message: Any = None) -> None:
        """``message``: ``frame`` decoded already (the session then does not decode it again)."""
        self._frame: bytes | Decoded | None = frame if message is None else Decoded(frame, message)
        self.message = message
        self.stream = stream
        self._ended = False  # the final answer is out, or the client has gone
        self._done: asyncio.Event | None = None  # made only when receive() must wait (issue 17)
        # The task serving the request (set by the app; none when it was answered at once, with
        # no task: issue 17): its session serves the one request in it, so closing the transport
        # cancels that task.
        self.task: asyncio.Task[Any] | None = None

    async def receive(self) -> bytes | Decoded:
        frame = self._frame
        if frame is not None:
            self._frame = None
            if not self._ended:  # closed before it was read: never served
                return frame
        if not self._ended:
            done = self._done = self._done or asyncio.Event()
            await done.wait()
        raise EndOfStream()

    def _end(self) -> None:
        self._ended = True
        if self._done is not None:
            self._done.set()

    async def send(self, frame: bytes) -> None:
        if any(e.method is None for e in peek(frame)):
            await self.answer(frame)
            return
        if self.stream.gone:
            raise TransportError("the client closed the response stream")
        if self.stream.sse_ok:  # a JSON-only client gets the answer alone
            await self.stream.put(frame, False)

    async def answer(self, frame: bytes) -> None:
        """Send ``frame``, the request's final answer (known to be one: not looked into again)."""
        if self.stream.gone:
            raise TransportError("the client closed the response stream")
        await self.stream.put(frame, True)
        self._end()

    async def aclose(self) -> None:
        self._end()

    def hung_up(self) -> None:
        """The client closed the connection (``watch_disconnect``): closing the stream cancels
        the request (spec 2026-07-28)."""
        self.stream.disconnected()
        self.close()

    def close(self) -> None:
        """The client went away: end the session, which cancels the request."""
        self._end()
        task = self.task
        if task is not None and not task.done():
            task.cancel()
