"""The transport of one modern (2026-07-28) Streamable HTTP POST (see ``_http_server_streams``):
its one request in, its answers out to that POST's own :class:`~._http_server_streams.Stream`;
and :func:`serve_post`, which serves that POST on it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .._errors import EndOfStream, TransportError
from .._protocol import _http as h
from .._protocol._framing import Decoded
from ._base import Abilities
from ._http_server_streams import Receive, Send, Stream, peek, send_json

if TYPE_CHECKING:
    from ._http_server import StreamableHTTPApp


class RequestTransport:
    """The transport of one modern POST (module docstring): end of stream once the final answer
    is out or the client has gone. The stream is made when first used (:attr:`stream`): a final
    answer given before that is kept in :attr:`answered`, for the app to send as the response."""

    def __init__(
        self, frame: bytes, message: Any = None, json_ok: bool = True, sse_ok: bool = True, scope: Any = None
    ) -> None:
        """``message``: ``frame`` decoded already; ``json_ok``/``sse_ok``: what the client accepts
        (``_http.accepts``); ``scope``: the POST's ASGI scope (``ctx.http``)."""
        self.scope = scope
        self._frame: bytes | None = frame  # read once by receive(), with message as a Decoded
        self.message = message
        # A subscriptions/listen stream: no final answer, handed over at once when draining.
        self.listen = type(message) is dict and message.get("method") == "subscriptions/listen"
        self.json_ok = json_ok
        self.sse_ok = sse_ok
        self._stream: Stream | None = None
        self.answered: bytes | None = None  # the final answer, given before the stream was made
        self._ended = False  # the final answer is out, or the client has gone
        self._done: asyncio.Event | None = None  # made only when receive() must wait

    @property
    def stream(self) -> Stream:
        """The POST's response stream (made on first use; holding :attr:`answered` if given)."""
        stream = self._stream
        if stream is None:
            stream = self._stream = Stream("0", era=h.MODERN, json_ok=self.json_ok, sse_ok=self.sse_ok)
            if self.answered is not None:
                stream.items.append(self.answered)
                stream.finished = True
        return stream

    @property
    def abilities(self) -> Abilities:
        """Made when read (once, by its session): a POST answered without a session never needs it."""
        return Abilities(http_scope=lambda request_id: self.scope)  # its one request's POST (ctx.http)

    async def receive(self) -> bytes | Decoded:
        frame = self._frame
        if frame is not None:
            self._frame = None
            if not self._ended:  # closed before it was read: never served
                return frame if self.message is None else Decoded(frame, self.message)
        if not self._ended:
            done = self._done = self._done or asyncio.Event()
            await done.wait()
        raise EndOfStream()

    def _end(self) -> None:
        self._ended = True
        if self._done is not None:
            self._done.set()

    async def send(self, frame: bytes) -> None:
        final = any(e.method is None for e in peek(frame))  # the request's answer
        if final and self.keep_answer(frame):  # the app sends it as the response
            return
        if self.stream.gone:
            raise TransportError("the client closed the response stream")
        if final:
            await self.stream.put(frame, True)
            self._end()
        elif self.stream.sse_ok:  # a JSON-only client gets the answer alone
            await self.stream.put(frame, False)

    def keep_answer(self, frame: bytes) -> bool:
        """Keep ``frame``, the request's final answer, for the app to send as the whole response
        when nothing went out before it (no stream yet): True; else False (it goes on the stream)."""
        if self._stream is not None:
            return False
        self.answered = frame
        self._end()
        return True

    async def aclose(self) -> None:
        self._end()


def end_request(app: StreamableHTTPApp, transport: RequestTransport) -> None:
    """End a modern request: nothing more is sent on its transport, and the task serving it (its
    session serves the one request in that task: ``app._requests`` maps the two) is cancelled."""
    transport._end()
    task = app._requests.get(transport)
    if task is not None:
        task.cancel()


async def serve_post(
    app: StreamableHTTPApp, receive: Receive, send: Send, transport: RequestTransport, answer: bytes | None
) -> None:
    """Serve a modern POST's request (``transport``) on its stream: ``answer``, its answer already
    (``app.answer``'s, for a client that takes SSE only), or what a session serving it in a
    task of its own sends."""
    task = None
    if answer is not None:
        transport.keep_answer(answer)
    else:
        task = app._spawn(app.serve(transport, True), eager=True)
        if transport.json_ok and transport.answered is not None:  # answered while the task started eagerly
            await send_json(send, transport.answered, [], h.MODERN)
            return
    stream = transport.stream  # made before anything can be put on it
    if task is not None and not task.done():  # end_request cancels the task serving it
        app._requests[transport] = task
        task.add_done_callback(lambda _: app._requests.pop(transport, None))

    def hung_up() -> None:  # closing the stream cancels the request (spec 2026-07-28)
        stream.disconnected()
        end_request(app, transport)

    try:  # a hang-up is watched once it matters
        await stream.pump(
            send, [], receive, sse_after=app.sse_after, keepalive=app.keepalive, retry_ms=app.retry_ms, on_gone=hung_up
        )
    finally:
        if not stream.finished:
            end_request(app, transport)
