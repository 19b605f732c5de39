"""A :class:`~mcpio.Server` over Streamable HTTP: the app, its sessions, and serving it.

``Server.http_app``/``serve_http`` delegate here, so the server class keeps to the protocol and
this module holds what HTTP adds: the auth guard's wiring (a ``mcpio.auth.ResourceServer`` runs
before routing and closes with the app), the state backend's cross-process bus, ``MCPIO_TRACE``
for HTTP sessions, DELETE aborting a session's requests, and uvicorn's limits. Nothing here is
imported on the stdio path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

from .._transports._base import Transport
from .._transports._trace import Traced, open_trace

if TYPE_CHECKING:
    from ._server import Server

log = logging.getLogger("mcpio.server")


def http_app(server: Server, path: str, **options: Any) -> Any:
    """The :class:`StreamableHTTPApp` of ``server`` (see :meth:`Server.http_app`)."""
    from .._transports._http_server import StreamableHTTPApp

    auth = options.pop("auth", None)
    lifespan: Any = server.running
    if auth is not None:  # a mcpio.auth.ResourceServer: its guard runs before routing
        guard = options["auth"] = auth.guard(
            scopes_for=server._scopes_for,
            scoped=lambda: bool(server._item_scopes),
            max_body_size=options.get("max_body_size", 16 * 1024 * 1024),
        )

        @contextlib.asynccontextmanager
        async def lifespan() -> Any:  # the verifier's HTTP client closes with the app
            try:
                async with server.running() as value:
                    yield value
            finally:
                await guard.aclose()

    state = options.get("state")
    if state is not None and state is not server._state_bus:  # one bus per server: its fan-out
        server._state_bus = state
        state.on_message(lambda message: on_state_message(server, message))
    return StreamableHTTPApp(
        server._serve_http, path=path, tool_schema=server._tool_schema, lifespan=lifespan, **options
    )


async def on_state_message(server: Server, message: dict[str, Any]) -> None:
    """A message another process published on the state backend's bus: a resource update or a
    list change to tell this process's sessions about (each process tells its own)."""
    kind = message.get("type")
    if kind == "resources/updated" and isinstance(message.get("uri"), str):
        await server._resource_updated_here(message["uri"])
    elif kind == "list_changed" and message.get("kind") in ("tools", "resources", "prompts"):
        loop = server._loop
        if loop is not None and not loop.is_closed():
            server._notify_changed(loop, message["kind"], here_only=True)


async def publish(bus: Any, message: dict[str, Any]) -> None:
    """Publish ``message`` to the other processes on the state backend's bus; a backend that is
    down loses it with a warning (this process's own subscribers were already told)."""
    from .._state._base import StateUnavailable

    try:
        await bus.publish(message)
    except StateUnavailable as exc:
        log.warning("%s not sent to the other processes: %s", message.get("type"), exc)


async def serve_session(server: Server, transport: Transport, stateless: bool) -> None:
    """Run one HTTP session (a legacy session, or one stateless request) of ``server``."""
    if server._http_trace is None:  # MCPIO_TRACE: the same wire trace as on stdio (read once)
        path = os.environ.get("MCPIO_TRACE")
        server._http_trace = False
        if path:
            try:
                server._http_trace = open_trace(path)
            except OSError as exc:
                log.warning("MCPIO_TRACE: cannot write %s (%s); serving without a trace", path, exc.strerror or exc)
    raw = transport
    if server._http_trace:
        transport = Traced(transport, server._http_trace)
    session = server.session(transport, stateless=stateless)
    session.expose_errors = server.expose_errors is True  # remote clients get the type only
    if hasattr(raw, "on_abort"):  # DELETE cancels the session's requests in flight
        raw.on_abort = lambda: session.abort(0.0)
        setattr(raw, "in_flight", session.in_flight)  # noqa: B010 - graceful shutdown waits for these (_http_drain)
    bind = getattr(raw, "bind_mirror", None)
    if bind is not None:  # a session shared across processes: resumed from / kept in its record
        from ._replicas import SessionMirror

        bind(SessionMirror(session))
    if stateless:
        await session.run()
    else:
        await server._run_session(session)


async def serve(
    server: Server,
    host: str,
    port: int,
    *,
    path: str,
    allow_remote: bool,
    log_level: str,
    max_connections: int,
    header_timeout: float,
    timeout_keep_alive: int,
    h11_max_incomplete_event_size: int,
    limit_concurrency: int | None,
    redis: str | None,
    grace: float = 10.0,
    sockets: Any = None,
    **options: Any,
) -> None:
    """Serve ``server.http_app`` with uvicorn until cancelled (see :meth:`Server.serve_http`)."""
    from .._protocol._http import is_loopback

    if not is_loopback(host) and not allow_remote and options.get("auth") is None:
        raise ValueError(
            f"refusing to bind {host!r}: only loopback addresses (127.0.0.1, ::1, localhost) are "
            "served by default; pass allow_remote=True to accept connections from other machines"
        )
    try:
        from .._transports import _uvicorn
    except ImportError:
        raise RuntimeError("serving HTTP needs uvicorn: pip install 'mcpio[http]'") from None
    if redis is not None:
        from .._state import RedisState

        options["state"] = RedisState(redis)
    if options.get("state") is not None:
        await options["state"].start()  # StateUnavailable: not reachable, do not listen
    app = server.http_app(path, **options)
    cfg = _uvicorn.config(
        app,
        host,
        port,
        log_level=log_level,
        max_connections=max_connections,
        header_timeout=header_timeout,
        timeout_keep_alive=timeout_keep_alive,
        h11_max_incomplete_event_size=h11_max_incomplete_event_size,
        limit_concurrency=limit_concurrency,
    )
    from .._transports._http_drain import drain

    await _uvicorn.serve(cfg, drain=lambda g: drain(app, g), grace=grace, sockets=sockets)


def run(server: Server, host: str, port: int, options: dict[str, Any]) -> None:
    """``Server.run("http", ...)``: serve until SIGTERM/SIGINT, in this process or, with
    ``workers=N`` (N > 1), in N forked processes sharing the port (``_workers``). Several
    workers need ``redis=URL`` (or a ``state=`` with a session directory, e.g. ``RedisState``): a legacy session, its SSE events and
    resource subscriptions must be reachable from every worker, since each request of a
    session may reach any of them; ``ValueError`` without it."""
    from .._state._base import StateUnavailable

    workers = options.pop("workers", 1)
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers={workers!r}: a number of processes, at least 1")
    shared = options.get("redis") is not None or getattr(options.get("state"), "sessions", None) is not None
    if workers > 1 and not shared:  # MemoryState: each worker would hold its own sessions
        raise ValueError(
            f"workers={workers} needs redis='redis://HOST:PORT/DB': without a shared state store each "
            "worker would know only its own legacy sessions and SSE events"
        )

    def serve_one(sockets: Any = None) -> None:
        try:
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(server.serve_http(host, port, sockets=sockets, **options))
        except StateUnavailable as exc:  # one line, exit status 1 (Redis down at start)
            sys.stderr.write(f"mcpio: {exc}\n")
            raise SystemExit(1) from None

    if workers == 1:
        serve_one()
        return
    from ._workers import supervise

    status = supervise(lambda sock: serve_one([sock]), host, port, workers, grace=options.get("grace", 10.0))
    if status:
        raise SystemExit(status)
