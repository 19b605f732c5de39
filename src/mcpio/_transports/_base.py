"""The transport seam: ``send`` / ``receive`` / ``aclose`` (style rule 5).

A transport carries *frames*: the bytes of exactly one JSON-RPC message (or batch), without
the newline. ``receive`` returns the next frame, or an ``Oversized`` marker for a message that
exceeded the size limit (so the session can answer it and go on), and raises
:class:`~mcpio._errors.EndOfStream` once the peer has closed and every frame was delivered.
``send`` may wait (backpressure) but never reorders. ``aclose`` is idempotent and bounded.
What a transport offers beyond these three is declared in one value, its ``abilities``
(:class:`Abilities`), which each reader (the session engine, the server, the client) reads from
there and nowhere else; a transport without it offers nothing more. A wrapper declares its own:
it forwards only the abilities of what it wraps that stay true through it (a trace, which must
see every frame, forwards neither ``send_nowait`` nor ``answer_nowait``, nor ``attach``).

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
    """A transport's optional abilities (each None when it has not got it), grouped by who
    reads them. Each is read from this value only: nothing above the transport looks for an
    attribute of its own (a wrapper forwards what it opts into, and nothing else)."""

    # ---- read by the session engine, once, when it is made on the transport
    # send_nowait(frame) -> bool: the frame queued, in order, when that needs no waiting (True),
    # else nothing done (False: send it).
    send_nowait: Callable[[bytes], bool] | None = None
    # answer_nowait(id, frame) -> bool: send_nowait for the frame answering request id alone, told
    # its id (no decoding to route it).
    answer_nowait: Callable[[Any, bytes], bool] | None = None
    # unanswered(id): request id will never be answered (the peer cancelled it: no response
    # follows a cancellation), so what waits for its answer ends without one (a legacy HTTP
    # POST's response: its SSE stream closes; a JSON response not yet started is 204).
    unanswered: Callable[[Any], None] | None = None
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

    # ---- read by the server framework
    # The id of the HTTP session the transport carries (Mcp-Session-Id; HTTP+SSE's session_id),
    # which names it on every process; None: no such session.
    session_id: str | None = None
    # session_ended() -> bool: whether the session the transport carries ended for good (a
    # shared legacy HTTP session's local copy may end while the session lives on elsewhere).
    # None: the session ends with its transport.
    session_ended: Callable[[], bool] | None = None
    # http_scope(request_id) -> the ASGI scope of the HTTP request that carried the request, while
    # it is served, else None (``ctx.http``).
    http_scope: Callable[[Any], Any] | None = None
    # close_stream(request_id, retry_ms): end the HTTP connection carrying the request's SSE
    # stream now; the client resumes it (SEP-1699 polling; ``ctx.close_sse_stream``).
    close_stream: Callable[[Any, int | None], Awaitable[None]] | None = None

    # ---- read by the client, once, when it connects
    # Identifies the server for per-server memories (the era it speaks, cached lists); None:
    # this connection only.
    key: str | None = None
    # open(): start the transport (spawn the process, make the HTTP client) before the engine.
    open: Callable[[], Awaitable[None]] | None = None
    # stderr_tail() -> the server's last stderr lines, for an error message.
    stderr_tail: Callable[[], str] | None = None
    # closed_error(what) -> the error for ``what`` failing because the server went away (its
    # exit status and stderr).
    closed_error: Callable[[str], Awaitable[Exception]] | None = None
    # accept_tools(tools) -> the tools/list items the client may use (2026-07-28 HTTP drops the
    # tools whose x-mcp-header annotations are invalid, and remembers the others' headers).
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
