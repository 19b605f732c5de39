"""uvicorn for ``Server.serve_http``: connection limits, a header timeout and quiet logs (so
slow or idle connections cannot exhaust the server). Imported only when serving HTTP (the ``http`` extra).

uvicorn's defaults leave a connection that never sends a request open forever and count idle
connections against ``limit_concurrency``, so thousands of idle sockets cut off real clients
and, at the descriptor limit, flood stderr with one traceback per failed ``accept``. Here:

* **The parser** (``http_parser``): ``"httptools"`` (llhttp, in C: half the server CPU of a
  request), ``"h11"`` (pure Python), or ``"auto"`` (the default): httptools when it imports (the
  ``http`` extra installs it on CPython), h11 otherwise. Every limit below holds under both.
* **max_connections** (1000): past it, a new connection closes the connection that has been
  idle longest (no request in flight) — a flood of idle sockets evicts itself, real clients
  get in. Connections with a request in flight (SSE streams included) are never evicted.
* **header_timeout** (10 s): a connection must deliver a complete request head within this
  time of opening (or of its previous response); trickling bytes does not reset it.
* **timeout_keep_alive** (5 s, uvicorn's): an idle keep-alive connection is closed.
* **h11_max_incomplete_event_size** (64 KiB): the largest request head accepted. h11 enforces
  it itself (uvicorn answers 400); llhttp has no such limit, so the httptools protocol counts a
  head's bytes as they arrive and answers 431 and closes once a head would pass it, before the
  parser buffers them.
* **limit_concurrency** (None): uvicorn's 503 past that many connections or tasks.
* **The client address** (``ctx.http.client``, what ``RateLimit`` and the OAuth proxy's limits
  count by) is the TCP peer's. uvicorn would by default replace it, and the scheme, with
  ``X-Forwarded-For`` / ``X-Forwarded-Proto`` of any request from 127.0.0.1, which any local
  process, or a reverse proxy that passes the client's own header through, can set to anything.
  They are trusted only from the addresses the operator names in ``FORWARDED_ALLOW_IPS``
  (uvicorn's variable: your proxy's address, ``*`` for any).
* **Graceful shutdown** (SIGTERM, Ctrl-C): stop accepting, then ``drain(grace)`` (the app's:
  /readyz 503, idle SSE streams handed over, requests in flight get ``grace`` seconds), then
  uvicorn's own shutdown. A SIGTERM ends the process with status 0 once drained.
* **Logs**: repeated warnings and errors of uvicorn and asyncio (``Invalid HTTP request``,
  ``accept`` failures …) are logged once a minute as one line with a count, never as a
  traceback each.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_MAX_CONNECTIONS = 1000
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_KEEP_ALIVE = 5
DEFAULT_MAX_HEAD = 64 * 1024
PARSERS = ("auto", "httptools", "h11")
LOG_PERIOD = 60.0


class OncePerPeriod(logging.Filter):
    """Lets the first record of a kind through per ``period`` seconds, as one line (the
    exception's type and text instead of its traceback), with the count of those dropped."""

    def __init__(self, period: float = LOG_PERIOD) -> None:
        super().__init__()
        self.period = period
        self._last: dict[tuple[str, str], float] = {}
        self._dropped: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self.period:
            self._dropped[key] = self._dropped.get(key, 0) + 1
            return False
        self._last[key] = now
        text = record.getMessage().strip()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f" ({type(exc).__name__}: {exc})"
        dropped = self._dropped.pop(key, 0)
        if dropped:
            text += f" [{dropped} more like this in the last {self.period:g} s were not logged]"
        record.msg, record.args, record.exc_info, record.exc_text = text, None, None, None
        return True


def ignores_sigint() -> bool:
    """Whether this process ignores SIGINT and so must go on ignoring it while it serves: a
    worker of ``_server._workers``, whose supervisor turns Ctrl-C into one SIGTERM per worker
    (both arriving would race, and uvicorn takes a second signal as "force exit, no drain")."""
    return threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def parser_base(http_parser: str) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol class of ``http_parser`` (one of :data:`PARSERS`; see the
    module docstring); ValueError for another name, RuntimeError for "httptools" when it does not
    import."""
    if http_parser not in PARSERS:
        raise ValueError(f"http_parser must be one of {', '.join(map(repr, PARSERS))}, not {http_parser!r}")
    if http_parser != "h11":
        try:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
        except ImportError:
            if http_parser == "httptools":
                raise RuntimeError("http_parser='httptools' needs httptools: pip install 'mcpio[http]'") from None
        else:
            return HttpToolsProtocol
    return H11Protocol


def guarded_protocol(
    max_connections: int, header_timeout: float, max_head: int = DEFAULT_MAX_HEAD, http_parser: str = "auto"
) -> type[asyncio.Protocol]:
    """uvicorn's protocol of ``http_parser`` enforcing ``max_connections``, ``header_timeout``
    and, where the parser does not (llhttp), ``max_head`` (see the module docstring)."""
    base: Any = parser_base(http_parser)

    class Guarded(base):  # type: ignore[misc]
        _idle_since = 0.0
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._idle_since = time.monotonic()
            self._arm()
            if len(self.connections) > max_connections:
                self._evict()

        def _busy(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def _evict(self) -> None:
            idle = [
                c
                for c in self.connections
                if c is not self and isinstance(c, Guarded) and not c._busy() and not c.transport.is_closing()
            ]
            if idle:
                min(idle, key=lambda c: c._idle_since)._close()

        def _arm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            self._head_timer = self.loop.call_later(header_timeout, self._head_timeout)

        def _head_timeout(self) -> None:
            self._head_timer = None
            if not self._busy():
                self._close()

        def _close(self) -> None:
            if not self.transport.is_closing():
                self.transport.close()

        def _head_done(self) -> None:
            """After the parser's events: a request that started stops the head timer."""
            if self._busy() and self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def on_response_complete(self) -> None:
            self._idle_since = time.monotonic()
            if not self.transport.is_closing():
                self._arm()
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            super().connection_lost(exc)

    if base is H11Protocol:

        class GuardedH11(Guarded):
            def handle_events(self) -> None:
                super().handle_events()
                self._head_done()

        return GuardedH11

    class GuardedLlhttp(Guarded):
        # Bytes the request head being read may still take; None from the end of a head to the
        # end of its message (its body is the app's to limit). A head starts with the connection
        # and at the end of each message.
        _head_left: int | None = max_head

        def data_received(self, data: bytes) -> None:
            left = self._head_left
            if left is None or len(data) <= left:
                if left is not None:
                    self._head_left = left - len(data)
                super().data_received(data)
                return
            self._head_left = 0  # the parser gets what the head may take, and must end it there
            super().data_received(data[:left])
            if self.transport.is_closing():
                return
            if self._head_left == 0:
                self._refuse_head()
                return
            self.data_received(data[left:])

        def on_headers_complete(self) -> None:
            self._head_left = None
            super().on_headers_complete()
            self._head_done()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._head_left = max_head

        def _refuse_head(self) -> None:
            self.logger.warning("Request head larger than %d bytes.", max_head)
            if self._busy():  # a pipelined head behind a response still being sent: no answer can follow it
                self.transport.close()
                return
            body = b"Request head too large"
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                + b"".join(name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers)
                + b"content-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
                % len(body)
                + body
            )
            self.transport.close()

    return GuardedLlhttp


def config(
    app: Any,
    host: str,
    port: int,
    *,
    log_level: str,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    timeout_keep_alive: int = DEFAULT_KEEP_ALIVE,
    h11_max_incomplete_event_size: int = DEFAULT_MAX_HEAD,
    limit_concurrency: int | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    http_parser: str = "auto",
) -> uvicorn.Config:
    """The uvicorn configuration of ``serve_http`` (see the module docstring); ``certfile`` and
    ``keyfile`` (checked by ``_tls.check_certificate``) serve HTTPS, HTTP/1.1 only."""
    if max_connections < 1 or header_timeout <= 0 or timeout_keep_alive < 0 or h11_max_incomplete_event_size < 1024:
        raise ValueError(
            "max_connections must be >= 1, header_timeout > 0, timeout_keep_alive >= 0 and "
            "h11_max_incomplete_event_size >= 1024"
        )
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=5,
        http=guarded_protocol(max_connections, header_timeout, h11_max_incomplete_event_size, http_parser),
        timeout_keep_alive=timeout_keep_alive,
        h11_max_incomplete_event_size=h11_max_incomplete_event_size,
        limit_concurrency=limit_concurrency,
        proxy_headers=bool(os.environ.get("FORWARDED_ALLOW_IPS")),  # module docstring
        ssl_certfile=certfile,
        ssl_keyfile=keyfile,
    )


class Server(uvicorn.Server):
    """uvicorn's server with a drain step in its shutdown (see the module docstring)."""

    def __init__(self, config: uvicorn.Config, drain: Callable[[float], Awaitable[None]] | None, grace: float) -> None:
        super().__init__(config)
        self.drain = drain
        self.grace = grace

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().serve(sockets)
        except asyncio.CancelledError:
            # The task serving was cancelled (an application embedding ``serve_http``): uvicorn
            # would skip its shutdown, leaving the lifespan (the user's and the app's) open and
            # its task pending. Stop as on SIGTERM with no grace, then let the cancellation go on.
            if self.started and not self.stopping:
                self.grace, self.announce = 0.0, False
                await self.shutdown(sockets)
            raise

    stopping = False  # shutdown() has begun
    announce = True  # say "draining" on stderr (not when cancelled)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.stopping = True
        for server in self.servers:  # stop accepting first: new connections go to other processes
            server.close()
        if self.drain is not None and not self.force_exit:
            if self.announce:
                sys.stderr.write(f"mcpio: draining (up to {self.grace:g} s), then stopping\n")
                sys.stderr.flush()
            await self.drain(self.grace)
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        keep_ignoring = ignores_sigint()
        with super().capture_signals():
            if keep_ignoring:  # a worker of _server._workers: Ctrl-C is its supervisor's to handle
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            yield
            # uvicorn re-raises the signal it stopped on; a SIGTERM handled by draining is a clean exit
            self._captured_signals = [s for s in self._captured_signals if s != signal.SIGTERM]


async def serve(
    cfg: uvicorn.Config,
    *,
    drain: Callable[[float], Awaitable[None]] | None = None,
    grace: float = 10.0,
    sockets: list[socket.socket] | None = None,
) -> None:
    """Run uvicorn with :class:`OncePerPeriod` on its and asyncio's loggers; on shutdown,
    ``drain(grace)`` runs once listening stopped; ``sockets``: listen on these (already bound,
    shared by the workers of ``_server._workers``) instead of binding ``cfg.host:cfg.port``."""
    quiet = OncePerPeriod()
    loggers = [logging.getLogger(n) for n in ("uvicorn.error", "asyncio")]
    for lg in loggers:
        lg.addFilter(quiet)
    try:
        await Server(cfg, drain, grace).serve(sockets=sockets)
    finally:
        for lg in loggers:
            lg.removeFilter(quiet)
