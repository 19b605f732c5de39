"""The transport seam: ``send`` / ``receive`` / ``aclose`` (style rule 5).

A transport carries *frames*: the bytes of exactly one JSON-RPC message (or batch), without
the newline. ``receive`` returns the next frame, or an ``Oversized`` marker for a message that
exceeded the size limit (so the session can answer it and go on), and raises
:class:`~mcpio._errors.EndOfStream` once the peer has closed and every frame was delivered.
``send`` may wait (backpressure) but never reorders. ``aclose`` is idempotent and bounded.
What a transport offers beyond these three is declared in one value, its ``abilities``
(:class:`Abilities`; docs/project/architecture.md, step 1, names who reads which).

:data:`serving` names the incoming request the current task is serving, as (key, id): the
session engine sets it in each request's task, so a transport that carries several streams
(Streamable HTTP) can put what a handler sends on the stream of the request it belongs to.
``key`` is :func:`routing_key` of the session's transport, the same through any wrapper.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, NamedTuple, Protocol, TypeVar

from .._protocol._framing import Decoded, Oversized, Related

T = TypeVar("T")
Frame = bytes | Oversized

serving: ContextVar[tuple[Any, Any] | None] = ContextVar("mcpio_serving", default=None)
# Set while a change is told to every copy of a legacy HTTP session shared by several processes
# (each process tells its own copies: list changes, resource updates, extension notifications, a
# core task's status; :func:`told_everywhere`): the change's id, the same on every process, else
# "". A copy sends such a frame once, on a GET stream of its own (``_http_sessions_bus``).
everywhere: ContextVar[str] = ContextVar("mcpio_everywhere", default="")
# The id of the change being told (:func:`new_change`): made where it happens, carried by its bus
# message to the other processes, which tell it under the same id.
change: ContextVar[str] = ContextVar("mcpio_change", default="")


class Transport(Protocol):
    async def send(self, frame: bytes) -> None: ...

    # Decoded: parsed already (Streamable HTTP); Related: arrived on one of our requests' streams
    async def receive(self) -> Frame | Decoded | Related: ...

    async def aclose(self) -> None: ...


class Abilities(NamedTuple):
    """A transport's optional abilities (each None when it has not got it), grouped by who
    reads them, from this value only (a wrapper forwards what it opts into, and nothing else)."""

    # ---- read by the session engine, once, when it is made on the transport
    # send_nowait(frame, now) -> bool: the frame queued, in order, when that needs no waiting (else
    # False); now: no other frame is due to join its write (written at once, not at the pass's end).
    send_nowait: Callable[[bytes, bool], bool] | None = None
    # answer_nowait(id, frame) -> bool: send_nowait of the frame answering request id alone.
    answer_nowait: Callable[[Any, bytes], bool] | None = None
    # unanswered(id): the peer cancelled request id, so what waits for its answer ends without one.
    unanswered: Callable[[Any], None] | None = None
    # close_reason() -> why the peer went away, for the requests left unanswered.
    close_reason: Callable[[], Awaitable[str]] | None = None
    # What serving records for the transport, when not itself (a wrapper's: what it wraps's key).
    routing_key: Any = None
    # attach(engine, *, feed, mirror): the engine serving it, given once before it reads (legacy HTTP).
    attach: Callable[..., None] | None = None
    # receive marks what arrived on one of our own requests' response streams (Related).
    relates: bool = False
    # push(take): the engine's take (Session.take), given once; while the transport's queue is
    # empty each frame read goes to take on the data callback's stack (hand_over), not the queue.
    push: Callable[[Callable[[Any], Any]], None] | None = None

    # ---- read by the server framework
    # The HTTP session's id (Mcp-Session-Id; HTTP+SSE's session_id), the same on every process.
    session_id: str | None = None
    # session_ended() -> bool: the session ended for good (a shared session's copy may end alone).
    session_ended: Callable[[], bool] | None = None
    # The prefix of the ids of the server's requests to the client (``Connection(id_prefix=)``):
    # a shared legacy session's copy has its process's, so they are unique across the copies.
    request_ids: str | None = None
    # http_scope(request_id) -> the ASGI scope of the HTTP request carrying it, while served (ctx.http).
    http_scope: Callable[[Any], Any] | None = None
    # close_stream(request_id, retry_ms): end the HTTP connection of its SSE stream (SEP-1699 polling).
    close_stream: Callable[[Any, int | None], Awaitable[None]] | None = None

    # ---- read by the client, once, when it connects
    # The server's identity for per-server memories (its era, cached lists); None: this connection only.
    key: str | None = None
    # open(): start the transport (spawn the process, make the HTTP client) before the engine.
    open: Callable[[], Awaitable[None]] | None = None
    # stderr_tail() -> the server's last stderr lines, for an error message.
    stderr_tail: Callable[[], str] | None = None
    # closed_error(what) -> the error for ``what`` failing because the server went away.
    closed_error: Callable[[str], Awaitable[Exception]] | None = None
    # accept_tools(tools) -> the tools/list items the client may use (2026-07-28 HTTP: x-mcp-header).
    accept_tools: Callable[[list[Any]], list[Any]] | None = None


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


def related(key: Any, request_id: Any, sending: Awaitable[T]) -> Awaitable[T]:
    """``sending`` (what a handler sends its client), to await, related to request ``request_id``
    of the session on the transport whose :func:`routing_key` is ``key``: a transport with several
    streams puts it on that request's own (legacy Streamable HTTP: the POST's SSE stream) by
    :data:`serving`, which names that request in its own task but not in another's, such as a
    proxy's forwarding what its upstream asks or says."""
    relation = (key, request_id)
    if request_id is None or serving.get() == relation:
        return sending  # the request's own task (or none to name): awaited as it is, no frame of ours
    return _relating(relation, sending)


async def _relating(relation: tuple[Any, Any], sending: Awaitable[T]) -> T:
    token = serving.set(relation)
    try:
        return await sending
    finally:
        serving.reset(token)


def new_change() -> str:
    """The id of a change happening on this process (:data:`change`): unique among processes."""
    import secrets  # on the first change, not on the stdio start-up path (it loads hashlib, hmac, random)

    return secrets.token_hex(8)


async def told_everywhere(sending: Awaitable[T], change_id: str) -> T:
    """``sending`` (a notification of change ``change_id``), marked as told to every copy of its
    session (:data:`everywhere`)."""
    token = everywhere.set(change_id)
    try:
        return await sending
    finally:
        everywhere.reset(token)


def hand_over(take: Callable[[Any], Any] | None, frames: list[Any], queue: Any) -> bool:
    """``frames`` (just read) to ``take`` in order (:attr:`Abilities.push`), until it hands one
    back: that one and those after it go to ``queue``, the transport's own; all of them while
    ``queue`` holds frames (nothing overtakes) or without ``take``. True when something was
    queued (wake the reader)."""
    if take is None or queue:
        queue.extend(frames)
        return True
    for i, frame in enumerate(frames):
        rest = take(frame)
        if rest is not None:
            queue.append(rest)
            queue.extend(frames[i + 1 :])
            return True
    return False
