"""hypercorn for ``Server.serve_http(http2=True)`` / ``mcpio run -t http --http2``: HTTP/2 and
HTTP/1.1 on one port (the ``http2`` extra; imported only when HTTP/2 is asked for).

Over HTTP/1.1 every open SSE stream holds a connection of its own (a browser allows six per
host); over HTTP/2 any number of streams (up to ``h2_max_concurrent_streams``) share one. What
is served:

* **with a certificate** (``certfile``/``keyfile``): TLS, ALPN offering ``h2`` then
  ``http/1.1`` (RFC 9113 §3.2): HTTP/2 clients get h2, the others HTTP/1.1 — on the same port;
* **without**: cleartext, HTTP/1.1 plus h2c, both with prior knowledge (the connection preface,
  RFC 9113 §3.3) and with ``Upgrade: h2c`` (RFC 7540 §3.2, which RFC 9113 deprecated but
  clients still send; hypercorn upgrades a request without a body, and answers a POST that
  asks to upgrade over HTTP/1.1, as RFC 9110 §7.8 lets a server do).

Why hypercorn, not granian (benchmarks/http2_servers.py: three runs on this project's shared
2-core machine, 50 concurrent streams over one h2c connection; docs/evidence/benchmarks.md):
granian needed 0.49-0.87x hypercorn's server CPU per JSON ``tools/call`` and 0.74-1.02x per
SSE stream. But it runs in the same process only through its embedded mode, which it logs as
"experimental" and which printed a Rust panic ("panic in a function that cannot unwind") at
some exits; it answers ``Upgrade: h2c`` over HTTP/1.1 (no upgrade); and it does its I/O on
threads of its own beside the event loop. hypercorn is pure Python on the server's event
loop: ``serve_http`` stays an ordinary coroutine (cancelling it stops the server), with the
same lifespan, logging and signals as under uvicorn. Its cost is measured, not hidden: HTTP/2
is opt-in, and uvicorn stays the default.

Limits (the counterparts of ``_uvicorn``'s, where hypercorn has one): ``keep_alive_timeout``
closes idle connections; ``ssl_handshake_timeout`` is ``header_timeout``;
``h11_max_incomplete_size`` bounds an HTTP/1.1 request head; HTTP/2 bounds its header list
(64 KiB) and concurrent streams per connection (100). uvicorn's ``max_connections`` eviction
and ``limit_concurrency`` have no counterpart here. On SIGINT/SIGTERM hypercorn stops
accepting; requests in flight get ``GRACEFUL_TIMEOUT - DRAIN_MARGIN`` (4.5 s), then the app
ends the streams still open (as uvicorn cancels them after its 5 s) and the process exits 0.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import threading
from typing import Any

from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.asyncio.run import worker_serve
from hypercorn.config import Config, Sockets
from hypercorn.utils import wrap_app

from ._uvicorn import OncePerPeriod, ignores_sigint

DEFAULT_MAX_STREAMS = 100
GRACEFUL_TIMEOUT = 5.0  # as _uvicorn's timeout_graceful_shutdown
DRAIN_MARGIN = 0.5  # the app ends its open streams this long before hypercorn would cancel them


def config(
    host: str,
    port: int,
    *,
    log_level: str,
    certfile: str | None = None,
    keyfile: str | None = None,
    header_timeout: float = 10.0,
    timeout_keep_alive: int = 5,
    h11_max_incomplete_event_size: int = 64 * 1024,
    max_streams: int = DEFAULT_MAX_STREAMS,
    graceful_timeout: float = GRACEFUL_TIMEOUT,
) -> Config:
    """The hypercorn configuration of ``serve_http(http2=True)`` (see the module docstring)."""
    cfg = Config()
    cfg.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    cfg.certfile, cfg.keyfile = certfile, keyfile
    cfg.alpn_protocols = ["h2", "http/1.1"]
    cfg.accesslog = None
    cfg.loglevel = log_level.upper()
    cfg.keep_alive_timeout = timeout_keep_alive
    cfg.keep_alive_max_requests = 2**31  # uvicorn has no such cap: a long-lived h2 client keeps its connection
    cfg.ssl_handshake_timeout = header_timeout
    cfg.h11_max_incomplete_size = h11_max_incomplete_event_size
    cfg.h2_max_concurrent_streams = max_streams
    cfg.graceful_timeout = graceful_timeout
    return cfg


async def serve(app: Any, cfg: Config, sockets: list[socket.socket] | None = None) -> None:
    """Serve ``app`` until SIGINT/SIGTERM (main thread only, as uvicorn) or cancellation, with
    :class:`OncePerPeriod` on hypercorn's and asyncio's loggers; on ``sockets`` already bound
    (and listening) when given, e.g. one port shared by worker processes, else on ``cfg.bind``."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():  # as uvicorn: signal.signal, restored after

        def on_signal(signum: int, frame: Any) -> None:
            loop.call_soon_threadsafe(stop.set)

        # an ignored SIGINT stays ignored: see ignores_sigint
        for sig in (signal.SIGTERM,) if ignores_sigint() else (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)
    quiet = OncePerPeriod()
    loggers = [logging.getLogger(n) for n in ("hypercorn.error", "asyncio")]
    for lg in loggers:
        lg.addFilter(quiet)
    draining: list[asyncio.Task[Any]] = []
    timers: list[asyncio.TimerHandle] = []

    async def shutdown_trigger() -> None:
        await stop.wait()
        # hypercorn now stops accepting and gives the requests in flight graceful_timeout, then
        # cancels them; cancelling a task that holds an HTTP/2 stream fails inside hypercorn
        # (0.18: "TaskGroup is shutting down", exit status 1; a known hypercorn bug, unfixed in
        # its releases). So the app itself ends what is still open (SSE streams, sessions) just
        # before: every handler returns on its own.
        aclose = getattr(app, "aclose", None)
        if aclose is not None:
            delay = max(0.0, cfg.graceful_timeout - DRAIN_MARGIN)
            timers.append(loop.call_later(delay, lambda: draining.append(loop.create_task(aclose()))))

    try:
        if sockets is None:
            await hypercorn_serve(app, cfg, shutdown_trigger=shutdown_trigger, mode="asgi")
        else:
            for sock in sockets:
                sock.setblocking(False)
            given = Sockets(list(sockets), [], []) if cfg.ssl_enabled else Sockets([], list(sockets), [])
            await worker_serve(
                wrap_app(app, cfg.wsgi_max_body_size, "asgi"), cfg, sockets=given, shutdown_trigger=shutdown_trigger
            )
        if draining:
            await draining[0]
    finally:
        for timer in timers:  # everything ended in time: the app's lifespan closed it already
            timer.cancel()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for lg in loggers:
            lg.removeFilter(quiet)
