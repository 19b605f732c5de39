"""The transport seam: ``send`` / ``receive`` / ``aclose`` (style rule 5).

A transport carries *frames*: the bytes of exactly one JSON-RPC message (or batch), without
the newline. ``receive`` returns the next frame, or an ``Oversized`` marker for a message that
exceeded the size limit (so the session can answer it and go on), and raises
:class:`~mcpio._errors.EndOfStream` once the peer has closed and every frame was delivered.
``send`` may wait (backpressure) but never reorders. ``aclose`` is idempotent and bounded.
What a transport offers beyond these three is declared in one value, its ``abilities``
(:class:`Abilities`), which the session engine reads once, when it is made on the transport; a
transport without it offers nothing more. A wrapper declares its own: it forwards only the
abilities of what it wraps that stay true through it (a trace, which must see every frame,
forwards neither ``send_nowait`` nor ``answer_nowait``).

:data:`serving` names the incoming request the current task is serving, as (key, id): the
session engine sets it in each request's task, so a transport that carries several streams
(Streamable HTTP) can put what a handler sends — progress, logs, requests to the client — on
the stream of the request it belongs to. ``key`` is :func:`routing_key` of the session's
transport, which is the same whatever wrappers (a trace, middleware) the transport wears (a
wrapper forwards ``routing_key`` in its abilities).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, NamedTuple, Protocol

from .._protocol._framing import Decoded, Oversized, Related

Frame = bytes | Oversized

serving: ContextVar[tuple[Any, Any] | None] = ContextVar("mcpio_serving", default=None)


class Transport(Protocol):
    async def send(self, frame: bytes) -> None: ...

    # Decoded: parsed already (Streamable HTTP); Related: arrived on one of our requests' streams
    async def receive(self) -> Frame | Decoded | Related: ...

    async def aclose(self) -> None: ...


class Abilities(NamedTuple):
    """A transport's optional abilities (each None when it has not got it)."""

    # send_nowait(frame) -> bool: the frame queued, in order, when that needs no waiting (True),
    # else nothing done (False: send it).
    send_nowait: Callable[[bytes], bool] | None = None
    # answer_nowait(id, frame) -> bool: send_nowait for the frame answering request id alone, told
    # its id (no decoding to route it).
    answer_nowait: Callable[[Any, bytes], bool] | None = None
    # close_reason() -> why the peer went away (its exit status, its stderr's tail …), for the
    # requests left unanswered.
    close_reason: Callable[[], Awaitable[str]] | None = None
    # What serving records for the transport, when not the transport itself (a wrapper's: the
    # routing key of what it wraps).
    routing_key: Any = None
    # attach(engine, *, feed, mirror): the session engine serving the transport, given once by
    # the server before the engine reads anything (legacy HTTP: LegacyTransport.attach).
    attach: Callable[..., None] | None = None
    # receive marks what arrived on the response stream of one of our own requests (Related), so
    # the session can serve a request of the peer's in the context of the request it belongs to
    # (a legacy Streamable HTTP client: the SSE stream of a POST).
    relates: bool = False


NONE = Abilities()


def abilities(transport: Any) -> Abilities:
    """``transport``'s declared :class:`Abilities`; none for a transport that declares none."""
    declared = getattr(transport, "abilities", None)
    return declared if isinstance(declared, Abilities) else NONE


def routing_key(transport: Any) -> Any:
    """The identity :data:`serving` records for ``transport``: its abilities' ``routing_key``
    (a wrapper's: that of what it wraps), else the transport itself."""
    key = abilities(transport).routing_key
    return transport if key is None else key
