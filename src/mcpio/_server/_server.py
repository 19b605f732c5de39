"""The Server: registries, the method table, and ``run()``.

``@server.tool`` / ``@server.resource(uri)`` / ``@server.prompt`` register a function and return
it unchanged; ``add_*`` / ``remove_*`` are the same at run time (connected clients get
``notifications/*/list_changed``). Its parts and its place in a request's way:
docs/project/architecture.md (step 4, "The server's parts").
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from types import MethodType
from typing import TYPE_CHECKING, Any, cast

from .. import _log, _otel
from .._errors import MethodNotFound
from .._jsonrpc import DEFAULT_MAX_LINE_SIZE
from .._protocol._connection import Connection
from .._protocol._events import NotificationReceived, RequestReceived
from .._versions import CACHEABLE_METHODS, META_SERVER_INFO, RULES, Rules
from . import _stdio
from ._catalog_api import CatalogMixin, tags_of
from ._changes import Changes, ChangesMixin
from ._constructors import FromAPI
from ._context import Context, request_context
from ._extensions import ExtensionsMixin, extension_handler, is_custom
from ._lifecycle import INFO_FIELDS, NO_CAPABILITIES, capabilities, server_info
from ._mrtr import InputRequired, StateCodec, finished
from ._registry import SESSION_ENDED, Registry
from ._result_cap import DEFAULT_MAX_RESULT_BYTES, check_max_result_bytes
from ._running import Held, HeldUntilStarted, LateMounts, drop_closed_loops
from ._tools import Tool, check_heartbeat, check_task_options

if TYPE_CHECKING:
    from .._session import Session
    from .._state._kv import KVStore, MemoryKV
    from .._transports._base import Transport
    from . import _answer, _http
    from ._handlers import METHODS
    from ._middleware import Request, build_chain, run_hook
    from ._resources import Prompt, Resource
    from ._skills import Skill
    from ._tasks import TaskStore
else:  # the method table, the HTTP glue, the sync answer, middleware: from the first session
    _answer = _http = METHODS = None
    Request = build_chain = run_hook = None

log = _log.logger("mcpio.server", globals())


class Server(CatalogMixin, ChangesMixin, FromAPI, ExtensionsMixin):
    """An MCP server. The guides under docs/ tour it; every option is keyword-only and optional."""

    _infos: dict[str, dict[str, Any]]  # serverInfo by version (_lifecycle.server_info), emptied by __setattr__
    _metas: dict[str, dict[str, Any]]  # {serverInfo: it}: the _meta of a result without one (decorate)

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        lifespan: Callable[[Server], contextlib.AbstractAsyncContextManager[Any]] | None = None,
        page_size: int = 100,
        max_message_size: int = DEFAULT_MAX_LINE_SIZE,
        max_in_flight: int = 1024,
        max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES,
        cache_ttl_ms: int = 0,
        cache_scope: str = "private",
        state_secret: bytes | str | None = None,
        state_ttl: float = 3600.0,
        task_ttl: float = 3600.0,
        task_poll_interval: float = 1.0,
        max_tasks: int = 1000,
        max_tasks_per_requester: int | None = None,
        max_state_handles: int = 10_000,
        max_state_bytes_per_caller: int | None = None,
        heartbeat: float | None = None,
        tool_timeout: float | None = None,
        expose_errors: bool | None = None,
        skills: str | os.PathLike[str] | None = None,
        telemetry: bool | None = None,
        hide_unauthorized: bool = False,
    ) -> None:
        self.name, self.version, self.title, self.description = name, version, title, description
        self.instructions, self.website_url, self.icons, self.lifespan = instructions, website_url, icons, lifespan
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size!r}")
        self.page_size = page_size
        self.max_message_size = max_message_size
        self.max_in_flight = max_in_flight
        check_max_result_bytes(max_result_bytes)
        self.max_result_bytes = max_result_bytes  # text of a tool result, per call (see _result_cap)
        check_heartbeat(heartbeat)
        self.heartbeat = heartbeat  # seconds between "still working" progress of a tool call (None: off)
        self.tool_timeout = Tool.check_timeout(tool_timeout)  # seconds: for tools without timeout= (or inline=True)
        # Unexpected exceptions' text to the client: None = over stdio only (HTTP: their type); True; False.
        self.expose_errors = expose_errors
        # 2026-07-28 caching hints (CacheableResult); safe defaults: stale at once, never shared.
        if cache_ttl_ms < 0 or cache_scope not in ("public", "private"):
            raise ValueError("cache_ttl_ms must be >= 0 and cache_scope 'public' or 'private'")
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        # requestState integrity (MRTR): one secret per server; set it (or MCPIO_STATE_SECRET) for many processes.
        secret = state_secret if state_secret is not None else os.environ.get("MCPIO_STATE_SECRET")
        secret = secret.encode() if isinstance(secret, str) else secret
        self.state_codec = StateCodec(secret or os.urandom(32), state_ttl)
        # Tasks (see TaskStore): kept task_ttl s, at most max_tasks (max_tasks_per_requester live each).
        check_task_options(task_ttl, task_poll_interval, max_tasks, max_tasks_per_requester)
        self._task_options = (task_ttl, task_poll_interval, max_tasks, max_tasks_per_requester)
        if isinstance(max_state_handles, bool) or not isinstance(max_state_handles, int) or max_state_handles < 1:
            raise ValueError(f"max_state_handles must be an int >= 1, not {max_state_handles!r}")
        self.max_state_handles = max_state_handles  # live StateHandles per caller (_session_state.open_handle)
        per_caller = max_state_bytes_per_caller
        if per_caller is not None and (type(per_caller) is not int or per_caller < 1):  # (a bool is no int here)
            raise ValueError(f"max_state_bytes_per_caller must be an int >= 1 or None, not {per_caller!r}")
        # ctx.session_state bytes per caller, all its scopes together (None: a 16th of the store's total, _kv)
        self.max_state_bytes_per_caller = per_caller
        self.registry = Registry()  # what it serves (_registry): the helper modules read it, not the Server
        self._binding: _http.HttpBinding | None = None  # what serving over HTTP adds: made by http_app
        self.changes = Changes(self.registry, lambda: self._binding)
        self._lifespan_values: dict[Any, Any] = {}  # event loop -> what the lifespan yielded there
        self._running = Held(self._lifespan_entered)  # the lifespan, shared by concurrent connections
        self.late_mounts = LateMounts()  # the lifespans of servers mounted in it while it is held
        # List results leave out the items the caller's token lacks the scopes for (HTTP with auth).
        self.hide_unauthorized = hide_unauthorized
        self.telemetry = _otel.wanted(telemetry)  # OpenTelemetry around every request (None: MCPIO_OTEL)
        self.registry.late = self.late_mounts
        # Every session's on_request: after what is starting (``_running``), inside the span of each (telemetry).
        held = HeldUntilStarted(self.registry, self._on_request)
        self._on_request_hook = _otel.traced(self, held) if self.telemetry else held
        self.plain = self.plain_for()  # every request reaches the method table as it comes (plain_for)
        if skills is not None:
            self.add_skills(skills)

    def plain_for(self) -> bool:
        """Whether requests reach the method table as they come: no telemetry, no middleware, no
        subclass's own ``_on_request``. The one predicate of every way that answers without the
        engine (a call of a registered tool; the stdio start-up's ``initialize``: neither waits for
        a first start, ``_running``); :attr:`plain` is its answer."""
        if self.telemetry or self.registry.middleware:
            return False
        return type(self)._on_request is Server._on_request

    @functools.cached_property
    def tasks(self) -> TaskStore:
        """The task store (2025-11-25 core tasks, the 2026-07-28 tasks extension), made at its first
        use: it is not on the stdio start-up path."""
        from ._tasks import TaskStore

        return TaskStore(*self._task_options, on_change=self.changes.task_changed)

    @functools.cached_property
    def _kv(self) -> MemoryKV:
        from .._state._kv import MemoryKV

        return MemoryKV()

    @property
    def lifespan_value(self) -> Any:
        """What ``lifespan`` yielded, while the server runs (``ctx.lifespan``); None otherwise. A
        server served on several event loops at once has a lifespan on each: the caller's loop's."""
        held = list(self._lifespan_values.values())  # (a copy: another loop's thread may change it)
        if len(held) < 2:  # held on one loop at most (almost always): nothing to choose from
            return held[0] if held else None
        from ._threads import loop_here

        return self._lifespan_values.get(loop_here())

    @property
    def state_backend(self) -> Any:
        """The state backend this server's HTTP app shares across processes (``http_app(state=...)``,
        ``serve_http(redis=...)``), or None (stdio; no HTTP app yet)."""
        binding = self._binding
        return binding.bus if binding is not None else None

    @property
    def session_store(self) -> KVStore:
        """Where ``ctx.session_state`` is kept: the state backend's store (``RedisState.kv``: every
        process) when there is one, else this server's own memory."""
        shared = getattr(self.state_backend, "kv", None)
        return shared if shared is not None else self._kv

    # ================================================================ registration
    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Register a tool: ``@server.tool`` or ``@server.tool(name=…, title=…, annotations=…)``."""
        if fn is None:
            return lambda f: self.tool(f, **options)
        self.add_tool(fn, **options)
        return fn

    def _serve_item(self, kind: str, method: str, key: str, item: Any, scopes: Any, tags: Any) -> None:
        """Serve ``item`` as ``kind`` under ``key``, with its ``tags`` and the OAuth ``scopes`` ``method`` needs."""
        if tags is not None:
            item.tags = tags_of(tags)
        self.registry.set_scopes(method, key, scopes)
        self.changes.register(kind, key, item)

    def add_tool(self, fn: Callable[..., Any] | Tool, **options: Any) -> Tool:
        scopes, tags = options.pop("scopes", None), options.pop("tags", None)
        if isinstance(fn, Tool) and options:  # a Tool (e.g. Tool.from_schema) is registered as it was made
            raise TypeError(f"add_tool({fn.name!r}): {', '.join(sorted(options))} apply to a function, not a Tool")
        timeout = None if options.get("inline") else self.tool_timeout
        tool = fn if isinstance(fn, Tool) else Tool.from_function(fn, **{"timeout": timeout, **options})
        self._serve_item("tools", "tools/call", tool.name, tool, scopes, tags)
        return tool

    def remove_tool(self, name: str) -> None:
        self.changes.unregister("tools", name)

    def resource(self, uri: str, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a resource (``"file:///a.txt"``) or template (``"users://{id}"``)."""
        from ._resources import check_uri

        check_uri(uri)  # a bare @server.resource (no URI) fails here, not silently later
        return lambda fn: (self.add_resource(fn, uri, **options), fn)[1]

    def add_resource(self, fn: Callable[..., Any], uri: str, **options: Any) -> Resource:
        from ._resources import Resource  # resources and prompts load with the first

        scopes, tags = options.pop("scopes", None), options.pop("tags", None)
        res = Resource(fn, uri, **options)
        self._serve_item("templates" if res.is_template else "resources", "resources/read", uri, res, scopes, tags)
        return res

    def remove_resource(self, uri: str) -> None:
        catalog = self.registry.catalog
        own = self.registry.resources if catalog is None else catalog.own["resources"]
        self.changes.unregister("resources" if uri in own else "templates", uri)

    def prompt(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=…, title=…)``."""
        if fn is None:
            return lambda f: self.prompt(f, **options)
        self.add_prompt(fn, **options)
        return fn

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> Prompt:
        from ._resources import Prompt

        scopes, tags = options.pop("scopes", None), options.pop("tags", None)
        p = Prompt(fn, **options)
        self._serve_item("prompts", "prompts/get", p.name, p, scopes, tags)
        return p

    def remove_prompt(self, name: str) -> None:
        self.changes.unregister("prompts", name)

    def add_skills(self, folder: str | os.PathLike[str]) -> list[Skill]:
        """Serve the Agent Skills in ``folder`` through the skills extension (SEP-2640): each
        directory with a SKILL.md becomes ``skill://<path>/SKILL.md``, its files resources with
        digests and sizes, listed by ``skills/list``. Raises ValueError for an invalid skill."""
        from ._skills import register as register_skills  # only servers with skills load it

        added = register_skills(self, folder)
        catalog = self.registry.catalog
        (self.registry.skills if catalog is None else catalog.own_skills).update((s.uri, s) for s in added)
        if catalog is not None:
            catalog.rebuild(("resources",))
        self.changes.changed("resources")
        return added

    def middleware(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``async def mw(request, call_next)`` to run around every client request
        (the first registered is the outermost); see ``_middleware`` and docs/guides/middleware.md."""
        from ._middleware import check_middleware  # with the first middleware

        check_middleware(fn)
        self.registry.middleware.append(fn)
        self.plain = self.plain_for()  # False now: the middleware sees every request
        return fn

    def completion(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register the completion handler: ``fn(ref, argument, context) -> list[str]`` (sync or
        async). Without one, arguments typed Literal/Enum complete from their values."""
        self.registry.completer = fn
        return fn

    def on_notification(self, method: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Run ``fn(ctx, params)`` (async) when the client sends notification ``method``,
        e.g. ``"notifications/initialized"`` or ``"notifications/roots/list_changed"``. A server
        mounted in another (``mount``) hears that one's clients' notifications too."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.registry.notification_hooks.setdefault(method, []).append(fn)
            return fn

        return register

    # ================================================================ capabilities
    def capabilities(self, rules: Rules) -> dict[str, Any]:
        """What this server announces (initialize, server/discover): :func:`._lifecycle.capabilities`."""
        return capabilities(self.registry, rules, self.active_extensions)

    def announced(self, rules: Rules | None, session: Session, capability: str, method: str) -> Rules:
        """The rules of a request served under ``rules`` on ``session``, or -32601 when the server
        did not announce ``capability`` (legacy: at initialize; modern: now)."""
        assert rules is not None  # the protocol layer admits these only with a version
        if rules.stateless:  # the registry's now; cached per version (never empty: logging)
            caps = self.registry.announced.get(rules.version) or self.capabilities(rules)
        else:
            caps = session.state.get("capabilities", NO_CAPABILITIES)
        if capability not in caps:
            raise MethodNotFound(
                f"Method not found: {method!r} (this server did not announce the {capability!r} capability)"
            )
        return rules

    def server_info(self, rules: Rules) -> dict[str, Any]:
        """serverInfo under ``rules`` (``_lifecycle.server_info``: kept, shared, never changed in place)."""
        return self._infos.get(rules.version) or self._keep_info(rules)

    def _keep_info(self, rules: Rules) -> dict[str, Any]:
        info = server_info(self, rules)
        self._infos[rules.version] = info
        self._metas[rules.version] = {META_SERVER_INFO: info}
        return info

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in INFO_FIELDS:  # serverInfo is made of it: made again when next needed
            object.__setattr__(self, "_infos", {})
            object.__setattr__(self, "_metas", {})

    # ================================================================ requests
    async def _on_request(self, session: Session, ev: RequestReceived) -> Any:
        handler = METHODS.get(ev.method) or extension_handler(self.registry, ev.method)  # built-in, else an extension's
        if handler is None:
            method = ev.method  # named, not echoed whole: any length fits in a request
            named = repr(method) if len(method) <= 100 else f"{method[:100]!r} (cut; {len(method):,} characters)"
            raise MethodNotFound(f"Method not found: {named} is not an MCP method this server serves")
        rules = RULES[ev.version] if ev.version is not None else None
        params = ev.params or {}
        ctx = request_context(self, session, ev, rules, params)
        try:
            if self.registry.middleware:
                result = await self._through_middleware(handler, ev.method, params, ctx)
            else:
                result = await handler(self, ctx, params)
        except InputRequired as pending:
            return finished(self, ctx, ev.method, params, None, pending)
        return finished(self, ctx, ev.method, params, result)

    async def _through_middleware(self, handler: Any, method: str, params: dict[str, Any], ctx: Context) -> Any:
        async def innermost(request: Request) -> dict[str, Any]:
            return cast("dict[str, Any]", await handler(self, request.context, request.params))

        return await build_chain(self.registry.middleware, innermost)(Request(method, params, ctx))

    def decorate(self, result: dict[str, Any], rules: Rules, method: str) -> dict[str, Any]:
        """The modern era's additions to every result (spec-notes §3, §5): resultType,
        ``_meta`` serverInfo and, on cacheable results, ttlMs + cacheScope."""
        result.setdefault("resultType", "complete")
        meta = result.get("_meta")
        info = self._infos.get(rules.version) or self._keep_info(rules)  # kept, with its _meta:
        result["_meta"] = self._metas[rules.version] if meta is None else {META_SERVER_INFO: info, **meta}
        if rules.cache_hints and method in CACHEABLE_METHODS and result["resultType"] == "complete":
            result.setdefault("ttlMs", self.cache_ttl_ms)
            result.setdefault("cacheScope", self.cache_scope)
        return result

    async def _on_notification(self, session: Session, ev: NotificationReceived) -> None:
        self._hear(session, ev.method, ev.params or {})

    def _hear(self, session: Session, method: str | None, params: dict[str, Any]) -> None:
        """Run the hooks of ``method`` (``SESSION_ENDED``: the session's end), this server's and
        its mounted servers', each in a task of its own."""
        import asyncio

        upstream = self.registry.upstream
        if upstream is not None and method is not None and is_custom(method):  # a proxy's: the upstream's too
            upstream.heard(method, params)
        hooks = self.registry.hooks_of(method)
        if hooks:
            loop = asyncio.get_running_loop()
            for owner, hook in hooks:
                ctx = Context(self, session, None, params.get("_meta"))
                ctx.owner = owner  # a mounted server's hook: its lifespan (ctx.lifespan)
                # A task, so a hook may itself send requests (e.g. roots/list) without
                # blocking the loop that must read their answers.
                self.changes.spawn(loop, run_hook(hook, ctx, params))

    # ================================================================ serving
    def session(
        self, transport: Transport, *, stateless: bool = False, remote: bool = False, conn: Connection | None = None
    ) -> Session:
        """A server-role Session for ``transport`` (``await session.run()`` serves it). ``stateless``: a
        modern POST's one request, admitted by its ``_meta`` alone, run in ``run()``'s task (ending the
        transport cancels it); ``remote``: HTTP (``expose_errors``); ``conn``: its Connection when not a
        new one (one initialised already, or one numbering its requests apart: ``id_prefix``)."""
        from .._session import Session  # not at import: asyncio comes after initialize's answer (_stdio)

        if _answer is None:
            _load_serving()
        s = Session(
            transport,
            conn or Connection("server", stateless=stateless),
            on_request=self._on_request_hook,
            on_notification=self._on_notification,
            max_in_flight=self.max_in_flight,
            drain_timeout=0.0 if stateless else 30.0,
            answer=MethodType(_answer.answer, self) if self.plain else None,  # else the engine sees every request
            relay=MethodType(_answer.relayed, self) if self.plain else None,
            expose_errors=self.expose_errors is True if remote else self.expose_errors is not False,
            inline_requests=stateless,
        )
        self.changes.sessions.add(s)
        return s

    def open_sessions(self) -> list[Session]:
        """The sessions connected now (stdio connections, legacy HTTP sessions; a 2026-07-28
        request is not one): a snapshot, safe to take from another thread (an exporter's)."""
        return [s for s in self.changes.snapshot() if not s.connection.stateless and not s.closed]

    def sessions_now(self) -> list[Session]:
        """Every session served now, 2026-07-28 requests (``subscriptions/listen`` streams) and
        closed ones not yet collected included: a snapshot for the serving loop to notify from."""
        return self.changes.snapshot()

    def running(self) -> contextlib.AbstractAsyncContextManager[Server]:
        """Hold the lifespan (and mounted servers') for the block: entered by the first of the
        connections served at the same time, exited when the last one leaves."""
        return self._running.use()

    @contextlib.asynccontextmanager
    async def _lifespan_entered(self) -> Any:
        import asyncio

        _stdio.resume_collection()  # `mcpio run` paused it until serving starts
        loop = asyncio.get_running_loop()
        self.changes.loops[loop] = None  # its clients are told of changes from it
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.lifespan is not None:
                    values = self._lifespan_values
                    drop_closed_loops(values)
                    values[loop] = await stack.enter_async_context(self.lifespan(self))
                    stack.callback(values.pop, loop, None)
                # Mounted servers' lifespans run inside this one's, in mount order (and those mounted from now on)
                registry = self.registry
                await self.late_mounts.enter(stack, lambda: () if registry.catalog is None else registry.catalog.mounts)
                yield self
        finally:
            self.changes.loops.pop(loop, None)
            self.tasks.close(loop)  # this loop's task runs end with it

    async def serve(self, transport: Transport) -> None:
        """Serve one connection on ``transport`` until it ends (lifespan included), then close
        ``transport`` so the peer sees end of stream (``aclose`` is idempotent)."""
        try:
            async with self.running():
                await self.run_session(self.session(transport))
        finally:
            await transport.aclose()

    async def serve_stdio(self) -> None:
        """Serve on this process's stdin/stdout until EOF, SIGTERM or the parent's death."""
        await _stdio.serve_stdio(self)

    # ================================================================ Streamable HTTP
    def http_app(self, path: str = "/mcp", **options: Any) -> Any:
        """A plain ASGI app serving this server over Streamable HTTP at ``path`` (both eras).

        Options (keyword-only): ``allowed_hosts`` / ``allowed_origins`` (default: localhost,
        127.0.0.1 and [::1] on any port; ``["*"]`` allows all), ``max_body_size`` (16 MiB),
        ``session_timeout`` (1800 s idle), ``max_sessions`` (10000), ``state`` (the state
        backend, ``mcpio._state.MemoryState()`` by default, or ``RedisState(url)``: every piece
        of cross-request state, bounded), ``event_store`` (the backend's by default; None
        disables resumability), ``retry_ms`` (1000),
        ``keepalive`` (15 s), ``sse_after`` (1 s: a silent request switches to SSE),
        ``legacy_sse=True`` (also serve the 2024-11-05 HTTP+SSE transport at ``sse_path``
        "/sse" and ``message_path`` "/messages"). Mount it in Starlette or FastAPI, or serve it
        with any ASGI server; ``app.lifespan`` enters this server's lifespan for frameworks
        that do not forward ASGI lifespan events to mounted apps.
        """
        _load_serving()
        if self._binding is None:  # one per server: every app of it shares its trace and bus
            self._binding = _http.HttpBinding(self)
        return self._binding.app(path, **options)

    async def run_session(self, session: Session) -> None:
        """Run a legacy-capable session; when it ends (not a copy dropped, ``_http.ended``), so do
        the 2025-11-25 core tasks it owns. Its resource subscriptions leave this process either
        way (a forwarded resource's upstream subscription is then held for the subscribers left
        here, if any; a copy elsewhere holds its own)."""
        try:
            await session.run()
        finally:
            self._hear(session, SESSION_ENDED, {})  # (a roots relay: whose roots the upstream sees)
            if _http.ended(session):
                self.tasks.forget_owner(session)
            subscriptions = session.state.pop("subscriptions", None)
            if subscriptions:
                from ._subscriptions import unwatch

                await unwatch(self, list(subscriptions))

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        path: str = "/mcp",
        allow_remote: bool = False,
        log_level: str = "warning",
        max_connections: int = 1000,
        header_timeout: float = 10.0,
        timeout_keep_alive: int = 5,
        h11_max_incomplete_event_size: int = 64 * 1024,
        limit_concurrency: int | None = None,
        redis: str | None = None,
        grace: float = 10.0,
        http_parser: str = "auto",
        **options: Any,
    ) -> None:
        """Serve :meth:`http_app` with uvicorn (``pip install mcpio[http]``) until cancelled.

        Binding an address other than loopback needs ``auth=`` (a :class:`mcpio.auth.ResourceServer`)
        or ``allow_remote=True``: the server is then reachable by other machines; pass
        ``allowed_hosts`` with the names clients use to reach it.

        Connection limits (``_transports/_uvicorn``): past ``max_connections`` a new connection closes the
        longest-idle one (none with a request in flight); a request head must come within ``header_timeout``
        seconds and hold at most ``h11_max_incomplete_event_size`` bytes; idle keep-alive connections close
        after ``timeout_keep_alive`` seconds; ``limit_concurrency`` is uvicorn's (503 past it; off by default);
        repeated server warnings are logged once a minute as one line. ``http_parser``: ``"auto"`` (httptools,
        in C, when it imports: the ``http`` extra installs it; h11 otherwise), ``"httptools"`` or ``"h11"``;
        every limit holds under both (an oversized head: 431 from httptools, 400 from h11).
        ``redis="redis://HOST:PORT/DB"`` keeps the server's state on Redis (``pip install 'mcpio[redis]'``;
        StateUnavailable before listening if it cannot be reached; its bus secret: ``redis_secret=``). ``certfile``/``keyfile`` (PEM) serve HTTPS;
        ``http2=True`` serves HTTP/2 too, with hypercorn (``pip install 'mcpio[http2]'``: h2 over TLS, h2c in
        cleartext). On SIGTERM or Ctrl-C: stop accepting, /readyz 503, requests in flight get ``grace`` seconds,
        open SSE streams are handed over (``_transports/_http_drain``). Other ``options`` go to :meth:`http_app`.
        """
        _load_serving()
        await _http.serve(
            self,
            host,
            port,
            path=path,
            allow_remote=allow_remote,
            log_level=log_level,
            max_connections=max_connections,
            header_timeout=header_timeout,
            timeout_keep_alive=timeout_keep_alive,
            h11_max_incomplete_event_size=h11_max_incomplete_event_size,
            limit_concurrency=limit_concurrency,
            redis=redis,
            grace=grace,
            http_parser=http_parser,
            **options,
        )

    def unavailable(self) -> str | None:
        """Why this server cannot serve at all (``initialize`` and ``server/discover`` then answer a
        JSON-RPC error with it), or None. A proxy whose only upstream failed to start says why."""
        return None

    def run(self, transport: str = "stdio", *, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serve until the client goes away (stdio) or until interrupted (HTTP).

        ``transport``: "stdio" (the default) or "http" (Streamable HTTP on ``host``:``port``,
        endpoint ``/mcp``; options as :meth:`serve_http`, and ``workers=N`` processes sharing the
        port, which needs ``redis=``: see ``_server/_workers``). On stdio a first ``initialize`` or
        ``server/discover`` is answered before asyncio loads, unless middleware, telemetry, a lifespan
        or MCPIO_TRACE is on.
        """
        _log.configure(_log.to_stderr)  # now if logging is loaded; on stdio else after the first answer
        if transport == "http":
            _stdio.resume_collection()  # `mcpio run` paused it until serving starts (stdio: in _stdio.run)
            _log.load()
            _load_serving()
            _http.run(self, host, port, options)
            return
        if transport != "stdio":
            raise ValueError(f"unknown transport {transport!r}; use 'stdio' or 'http'")
        _stdio.run(self)


def _load_serving() -> None:
    """Bind the method table, ``_http``, ``_answer`` and middleware's runners: not at import, a stdio
    server answers ``initialize`` before loading them. Every way to a session or an HTTP app calls it."""
    global _answer, _http, METHODS
    global Request, build_chain, run_hook
    from . import _answer, _http
    from ._handlers import METHODS
    from ._middleware import Request, build_chain, run_hook
