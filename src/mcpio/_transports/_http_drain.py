"""Operating a :class:`~._http_server.StreamableHTTPApp`: health probes, and graceful
shutdown (drain, then hand over).

``/healthz``: the process serves (200). ``/readyz``: ready for traffic: the state backend
answers and the process is not draining (200, else 503 with Retry-After), for load balancers
and orchestrators.

Graceful shutdown: ``drain(app, grace)``, for whatever runs the app (``_uvicorn.Server``;
people bringing their own ASGI server call it from their shutdown hook before the lifespan
ends).
Run by the ASGI server's shutdown after it stopped accepting connections and before it closes the
open ones and ends the lifespan:

1. ``app.draining`` is set: ``/readyz`` answers 503 from now on (a load balancer still probing
   this process over a kept-alive connection takes it out of rotation), and every response
   carries ``Connection: close``: a connection kept alive (a proxy's pool to this process)
   carries one last request, then closes, so new requests go to the other processes.
2. Streams that no request holds are handed over at once: each legacy session's standalone GET
   stream and each 2026-07-28 ``subscriptions/listen`` stream end. A resumable legacy stream
   ends with the SSE ``retry:`` field (spec 2025-11-25, Streamable HTTP, "Resumability and
   Redelivery"; SEP-1699): the client reconnects with ``Last-Event-ID`` after that many
   milliseconds, reaches another process, and the event store (Redis) replays what it missed.
3. Requests in flight get up to ``grace`` seconds to finish; their answers go out on their
   own streams as usual.
4. What is still running after ``grace`` is handed over the same way (its stream ends with
   ``retry:``; events already sent are in the store), then cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from ._http_request import end_request

log = logging.getLogger("mcpio.http")

POLL = 0.05  # seconds between two looks at the requests in flight while draining


def closing(send: Any) -> Any:
    """``send`` with ``Connection: close`` added to the response head (while draining)."""

    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
        await send(message)

    return wrapped


async def health(app: Any, send: Any, route: str) -> None:
    """Answer the probe ``route`` (``/healthz`` or ``/readyz``; see the module docstring)."""
    from ._http_server_streams import plain

    if route == "/readyz" and app.draining:
        await plain(send, 503, b"draining: shutting down\n", [(b"retry-after", b"2")])
    elif route == "/healthz" or app.state is None or await app.state.ready():
        await plain(send, 200, b"ok\n")
    else:
        await plain(send, 503, b"state store unreachable\n", [(b"retry-after", b"2")])


def _in_flight(app: Any) -> int:
    """Requests still running: legacy ones (per session: its engine's count; a request cancelled
    by the client holds its stream but runs no more) and modern ones (listen excluded)."""
    legacy: int = sum(t.running() for t in list(app.sessions.values()))
    modern = sum(1 for r in app.requests() if not r.listen and not r.stream.finished)
    return legacy + modern


def _hand_over(app: Any, *, idle_only: bool) -> None:
    """End open streams so their clients resume elsewhere; ``idle_only``: only those no request holds."""
    for t in list(app.sessions.values()):
        for s in list(t.streams.values()):
            if s.attached and (s is t.get_stream or not idle_only):
                s.detach(app.retry_ms)
    for r in app.requests():
        if r.listen or not idle_only:
            end_request(app, r)  # not resumable (2026-07-28 has no event ids): the client listens again elsewhere


async def drain(app: Any, grace: float) -> None:
    """Drain ``app`` (see the module docstring); returns within about ``grace`` seconds."""
    app.draining = True
    _hand_over(app, idle_only=True)
    deadline = time.monotonic() + max(0.0, grace)
    left = _in_flight(app)
    if left:
        log.warning("draining: %d request(s) in flight get up to %g s to finish", left, grace)
    while left and time.monotonic() < deadline:
        await asyncio.sleep(POLL)
        left = _in_flight(app)
    if left:
        log.warning("draining: %d request(s) still running after %g s: their streams are handed over", left, grace)
    _hand_over(app, idle_only=False)
    if left:  # once their connections ended (the retry: is out), cancel what is still running
        ending = [s for t in list(app.sessions.values()) for s in t.streams.values() if s.detach_retry is not None]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2):
                for s in ending:
                    await s.released.wait()
        for t in list(app.sessions.values()):
            if t.on_abort is not None and t.running():
                t.on_abort()


async def lifespan_protocol(app: Any, receive: Any, send: Any) -> None:
    """The ASGI lifespan protocol for ``app`` (a StreamableHTTPApp): startup enters its lifespan, shutdown leaves it."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await app.ensure_started()
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await app.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return
