"""The transport seam: ``send`` / ``receive`` / ``aclose`` (style rule 5).

A transport carries *frames*: the bytes of exactly one JSON-RPC message (or batch), without
the newline. ``receive`` returns the next frame, or an ``Oversized`` marker for a message that
exceeded the size limit (so the session can answer it and go on), and raises
:class:`~mcpio._errors.EndOfStream` once the peer has closed and every frame was delivered.
``send`` may wait (backpressure) but never reorders. ``aclose`` is idempotent and bounded.
A transport may also offer ``send_nowait(frame) -> bool``: the frame queued, in order, when that
needs no waiting (True), else nothing done (False: ``send`` it); and ``answer_nowait(id, frame)
-> bool``, the same for a frame answering request ``id`` alone, told its id (no decoding to
route it). A wrapper that must see every frame sets both to None.

:data:`serving` names the incoming request the current task is serving, as (key, id): the
session engine sets it in each request's task, so a transport that carries several streams
(Streamable HTTP) can put what a handler sends — progress, logs, requests to the client — on
the stream of the request it belongs to. ``key`` is :func:`routing_key` of the session's
transport, which is the same whatever wrappers (a trace, middleware) the transport wears: a
wrapper forwards the attributes it does not define to what it wraps, ``routing_key`` included.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Protocol

from .._protocol._framing import Decoded, Oversized

Frame = bytes | Oversized

serving: ContextVar[tuple[Any, Any] | None] = ContextVar("mcpio_serving", default=None)


class Transport(Protocol):
    async def send(self, frame: bytes) -> None: ...

    async def receive(self) -> Frame | Decoded: ...  # Decoded: parsed already (Streamable HTTP)

    async def aclose(self) -> None: ...


def routing_key(transport: Any) -> Any:
    """The identity :data:`serving` records for ``transport``: its ``routing_key`` attribute
    when it has one (reached through any wrapper that forwards attributes), else itself."""
    key = getattr(transport, "routing_key", None)
    return transport if key is None else key
