"""A :class:`~mcpio.Server` over Streamable HTTP: the app, its sessions, and serving it.

``Server.http_app``/``serve_http`` delegate here, so the server class keeps to the protocol and
this module holds what HTTP adds: the auth guard's wiring (a ``mcpio.auth.ResourceServer`` runs
before routing and closes with the app), the state backend's cross-process bus, ``MCPIO_TRACE``
for HTTP sessions, DELETE aborting a session's requests, and uvicorn's limits. Nothing here is
imported on the stdio path.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from collections.abc import Awaitable
from types import MethodType, SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .. import _jsonrpc as rpc
from .. import _log, _otel
from .._protocol._connection import Connection, modern_admission
from .._protocol._events import RequestReceived
from .._transports._base import Transport, abilities
from .._transports._trace import Traced
from . import _answer
from ._stdio import env_trace

if TYPE_CHECKING:
    from .._session import Session
    from ._server import Server

log = _log.logger("mcpio.server", globals())
T = TypeVar("T")


class HttpBinding:
    """What serving a :class:`~mcpio.Server` over HTTP adds to it, one per server (made by its
    first ``http_app``): the ``MCPIO_TRACE`` wire trace of its HTTP sessions and the state
    backend whose bus fans its notifications out to the other processes. The app gets its bound
    methods; the Server reads ``bus`` to publish its changes."""

    __slots__ = ("bus", "server", "statuses", "trace")

    def __init__(self, server: Server) -> None:
        self.server = server
        self.bus: Any = None  # the state backend of http_app(state=...): cross-process fan-out
        self.trace: Any = None  # MCPIO_TRACE for HTTP sessions: None = not looked at yet, False = off
        self.statuses: dict[Any, Any] = {}  # event loop -> the asyncio.Lock ordering core_status there

    def app(self, path: str, **options: Any) -> Any:
        from .._transports._http_server import StreamableHTTPApp

        server = self.server
        auth = options.pop("auth", None)
        lifespan: Any = server.running
        if auth is not None:  # a mcpio.auth.ResourceServer: its guard runs before routing
            guard = options["auth"] = auth.guard(
                scopes_for=server.registry.scopes_for,
                scoped=lambda: bool(server.registry.scopes),
                max_body_size=options.get("max_body_size", 16 * 1024 * 1024),
                state=options.get("state"),  # an OAuthProxy keeps its clients and grants there when shared
            )
            from .._auth import _info  # no I/O, no third party (loaded by every guard anyway)

            # Whoever the guard (ResourceServer's, OAuthProxy's) verified: legacy sessions are bound to it
            options["caller"] = _info.slot

            @contextlib.asynccontextmanager
            async def lifespan() -> Any:  # the verifier's HTTP client closes with the app
                try:
                    async with server.running() as value:
                        yield value
                finally:
                    await guard.aclose()

        state = options.get("state")
        if state is not None and state is not self.bus:  # one bus per server: its fan-out
            self.bus = state
            state.on_message(self.on_state_message)
            if getattr(state, "tasks", None) is not None:  # tasks on every process (_tasks_shared)
                server.tasks.share(state.tasks, lambda task_id: task_changed_elsewhere(server, task_id))
        app = StreamableHTTPApp(
            self.serve_session,
            path=path,
            param_headers=MethodType(param_headers, server),
            lifespan=lifespan,
            # without telemetry or a subclass's own _on_request (they see every request as it is)
            answer=self.answer_post if server.plain else None,
            **options,
        )
        return _otel.http_app(server, app)  # with telemetry on: trace context from headers, SSE streams counted

    async def on_state_message(self, message: dict[str, Any]) -> None:
        """A message another process published on the state backend's bus: a resource update, a
        list change, a task's status or an extension's notification to tell this process's
        sessions about (each process tells its own)."""
        from .._transports._base import change

        told = message.get("change")  # the change's id where it happened, for its copies of a session
        token = change.set(told if isinstance(told, str) else "")
        try:
            await self._on_state_message(message)
        finally:
            change.reset(token)

    async def _on_state_message(self, message: dict[str, Any]) -> None:
        server = self.server
        kind = message.get("type")
        if kind == "resources/updated" and isinstance(message.get("uri"), str):
            await server.notify_resource_updated_here(message["uri"])
        elif kind == "list_changed" and message.get("kind") in ("tools", "resources", "prompts"):
            server.notify_list_changed_here(message["kind"])
        elif kind == TASK_STATUS and isinstance(message.get("sid"), str) and isinstance(message.get("params"), dict):
            await _status_here(server, message["sid"], message["params"])
        elif kind == EXTENSION and isinstance(message.get("extension"), str) and isinstance(message.get("method"), str):
            params = message.get("params")
            if params is None or isinstance(params, dict):
                await server.notify_extension_here(message["extension"], message["method"], params)
        elif kind == SESSION_ENDED and isinstance(message.get("sid"), str):
            server.tasks.forget_owner(message["sid"])  # ended everywhere: its core tasks running here too

    async def core_status(self, task: Any, params: dict[str, Any]) -> None:
        """A core task of this process changed (shared sessions): ``notifications/tasks/status``
        with ``params`` (its status as the change left it) to the owning session's copies on the
        other processes (see ``TASK_STATUS``), and to a newer copy here when the one that created
        the task was dropped (the Server told a live one). Sent in the order of the changes (the
        lock is FIFO; publishes from separate tasks could overtake one another)."""
        from ._tasks_shared import owner_key

        sid = owner_key(task.owner)
        if sid is None:
            return
        import asyncio

        from .._transports._base import change

        loop = asyncio.get_running_loop()
        lock = self.statuses.get(loop)
        if lock is None:
            lock = self.statuses[loop] = asyncio.Lock()
        async with lock:
            if task.owner.closed:
                await _status_here(self.server, sid, params)
            await publish(self.bus, {"type": TASK_STATUS, "sid": sid, "params": params, "change": change.get()})

    def http_trace(self) -> Any:
        """The wire trace of ``MCPIO_TRACE`` for HTTP sessions (the same as on stdio; the variable
        is read once), or False."""
        if self.trace is None:
            self.trace = env_trace() or False
        return self.trace

    async def serve_session(self, transport: Transport, stateless: bool) -> None:
        """Run one HTTP session (a legacy session, or one stateless request) of the server."""
        server = self.server
        raw = transport
        if self.http_trace():
            transport = Traced(transport, self.trace)
        # remote: errors' type only; stateless: its one request runs in this task (end_request cancels it)
        able = abilities(raw)
        # A shared legacy session's copy numbers its requests apart from the other copies'
        conn = None if able.request_ids is None else Connection("server", id_prefix=able.request_ids)
        session = server.session(transport, stateless=stateless, remote=True, conn=conn)
        attach = able.attach
        if attach is not None:  # a legacy session (LegacyTransport.attach)
            # Its POSTs may be served on their own tasks: not with a trace (it records what the
            # session reads), not with telemetry (its spans follow the session's task).
            attach(session, feed=transport is raw and server.plain, mirror=self.mirror)
        if stateless:
            await session.run()
        else:
            await server.run_session(session)

    def mirror(self, session: Session) -> Any:
        """What a legacy session shared across processes is resumed from and kept in its record with."""
        from ._replicas import SessionMirror

        return SessionMirror(session, self.server)

    def answer_post(self, message: dict[str, Any]) -> bytes | None:
        """The encoded answer to a modern POST's one request (``message``: ``_http_checks.Post``'s, a
        JSON-RPC request) when it needs neither a Session nor awaiting: ``_answer.answer``'s, after
        the request's ``_meta`` is admitted as a stateless connection admits it. None: serve it on a
        session (``MCPIO_TRACE`` records a session's frames, so with a trace every request has one)."""
        server = self.server
        tool = _answer.sync_tool(server, message["method"], message.get("params"))
        if tool is None or (self.trace is not False and self.http_trace()):
            return None
        id_, params = message["id"], message["params"]
        meta = params.get("_meta")
        admitted = modern_admission("tools/call", meta if type(meta) is dict else _NO_META)
        if not isinstance(admitted, str):  # the error object
            return rpc.encode(rpc.error_response(id_, admitted))
        ev = RequestReceived(id_, "tools/call", params, admitted)
        session = _STATELESS[server.expose_errors is True]  # remote clients get the type only (serve_session)
        return contextvars.copy_context().run(_answer.answer_tool, server, session, ev, tool)


def param_headers(server: Server, name: str) -> dict[str, tuple[str, ...]] | None:
    """The ``Mcp-Param-*`` headers tool ``name`` declares (the app checks them on every modern
    ``tools/call``), kept per tool (``Tool.param_headers``); None for an unknown tool."""
    tool = server.registry.tools.get(name)
    return tool.param_headers if tool is not None else None


# A 2025-11-25 core task changed on this process: its ``notifications/tasks/status`` goes to the
# owning session's copies on the other processes too (published as {type, sid, params}); the copy
# that holds the session's GET stream sends it, the others drop it (as every notification
# outside a request: the client gets it once).
TASK_STATUS = "mcpio/task-status"
# ``Server.notify_extension`` on this process: the other processes tell their sessions too
# (published as {type, extension, method, params}).
EXTENSION = "mcpio/extension-notification"
SESSION_ENDED = "mcpio/session-ended"  # _transports/_http_sessions.ENDED: DELETE/expiry of a shared session


async def _status_here(server: Server, sid: str, params: dict[str, Any]) -> None:
    from ._tasks_shared import owner_key

    for session in server.sessions_now():
        if not session.closed and owner_key(session) == sid:
            await server.changes.tell(session, "notifications/tasks/status", params)


def ended(session: Any) -> bool:
    """Whether the session itself ended (always, but for the local copy of a session shared by
    several processes, which may be dropped here while the session lives on: then only a DELETE
    or expiry, ``SharedLegacyTransport.session_ended``)."""
    ended_for_good = abilities(session.transport).session_ended
    return ended_for_good is None or ended_for_good()


async def on_bus(call: Awaitable[T], down: T, lost: str | None = None) -> T:
    """What ``call`` to the state backend (its bus, its turns) gives, or ``down`` when the backend
    is down (StateUnavailable): a process goes on serving its own clients without it. ``lost``:
    what the other processes miss then, said in a warning."""
    from .._state._base import StateUnavailable

    try:
        return await call
    except StateUnavailable as exc:
        if lost is not None:
            log.warning("%s not sent to the other processes: %s", lost, exc)
        return down


async def publish(bus: Any, message: dict[str, Any]) -> None:
    """Publish ``message`` to the other processes on the state backend's bus; a backend that is
    down loses it with a warning (this process's own subscribers were already told)."""
    await on_bus(bus.publish(message), None, message.get("type"))


async def task_changed_elsewhere(server: Server, task_id: str) -> None:
    """A task another process runs changed: ``notifications/tasks`` to this process's
    ``subscriptions/listen`` streams that asked for it (its record is read only if any did)."""
    from ._subscriptions import task_targets
    from ._tasks_shared import fetch

    targets = list(task_targets(iter(server.sessions_now()), task_id))
    if not targets or server.tasks.runs_here(task_id):
        return  # nobody here listens, or it runs here (the Server notified already)
    task = await fetch(server.tasks.shared, task_id, None)
    if task is not None:
        detailed = task.detailed()
        for session, meta in targets:
            await server.changes.tell(session, "notifications/tasks", {**detailed, "_meta": meta})


# What a request answered without a session reads of its session: expose_errors only
# (``Server.announced`` reads no state for a stateless version).
_STATELESS = {flag: cast("Session", SimpleNamespace(expose_errors=flag)) for flag in (True, False)}
_NO_META: dict[str, Any] = {}  # the _meta of a request without one (read only)


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
    http_parser: str = "auto",
    redis_secret: str | bytes | None = None,
    http2: bool = False,
    certfile: str | os.PathLike[str] | None = None,
    keyfile: str | os.PathLike[str] | None = None,
    grace: float = 10.0,
    sockets: Any = None,
    **options: Any,
) -> None:
    """Serve ``server.http_app`` until cancelled (see :meth:`Server.serve_http`): with uvicorn
    (HTTP/1.1), or with hypercorn when ``http2`` (h2 with ALPN over TLS, h2c in cleartext; the
    ``http2`` extra). ``certfile``/``keyfile`` (PEM) serve HTTPS with either; ValueError before
    listening when they cannot be loaded."""
    from .._protocol._http import is_loopback
    from .._transports._tls import check_certificate

    if not is_loopback(host) and not allow_remote and options.get("auth") is None:
        raise ValueError(
            f"refusing to bind {host!r}: only loopback addresses (127.0.0.1, ::1, localhost) are "
            "served by default; pass allow_remote=True to accept connections from other machines"
        )
    certfile, keyfile = check_certificate(certfile, keyfile)
    try:
        from .._transports import _uvicorn
    except ImportError:
        raise RuntimeError("serving HTTP needs uvicorn: pip install 'mcpio[http]'") from None
    if http2:
        try:
            from .._transports import _hypercorn
        except ImportError:
            raise RuntimeError("serving HTTP/2 needs hypercorn and h2: pip install 'mcpio[http2]'") from None
    if redis is not None:
        from .._state import RedisState

        options["state"] = RedisState(redis, secret=redis_secret)
    if options.get("state") is not None:
        await options["state"].start()  # StateUnavailable: not reachable, do not listen
    app = server.http_app(path, **options)
    # What both servers take alike: the log level, TLS and the limits on a request's head.
    common: dict[str, Any] = {
        "log_level": log_level,
        "certfile": certfile,
        "keyfile": keyfile,
        "header_timeout": header_timeout,
        "timeout_keep_alive": timeout_keep_alive,
        "h11_max_incomplete_event_size": h11_max_incomplete_event_size,
    }
    if http2:  # uvicorn speaks HTTP/1.1 only
        await _hypercorn.serve(app, _hypercorn.config(host, port, graceful_timeout=grace, **common), sockets=sockets)
        return
    cfg = _uvicorn.config(
        app,
        host,
        port,
        max_connections=max_connections,
        limit_concurrency=limit_concurrency,
        http_parser=http_parser,
        **common,
    )
    from inspect import unwrap  # the app under telemetry's wrapper drains (_otel._asgi.TracedApp)

    from .._transports._http_drain import drain

    await _uvicorn.serve(cfg, drain=lambda g: drain(unwrap(app), g), grace=grace, sockets=sockets)


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
        import asyncio

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
