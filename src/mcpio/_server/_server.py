"""The Server: registries, the method table, and ``run()``.

``@server.tool`` / ``@server.resource(uri)`` / ``@server.prompt`` register a function and return
it unchanged; ``add_*`` / ``remove_*`` are the same at run time (connected clients get
``notifications/*/list_changed``). Capabilities announced at ``initialize`` follow from what is
registered then. The method table ``_methods`` maps each client request to one coroutine; the
lifecycle and version rules are applied before it by the protocol layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any

from .._errors import InvalidParams, MethodNotFound, ResourceNotFound
from .._protocol._connection import Connection
from .._protocol._events import NotificationReceived, RequestReceived
from .._protocol._framing import DEFAULT_MAX_LINE_SIZE
from .._session import Session
from .._transports._base import Transport
from .._versions import Rules
from ._completion import complete
from ._context import LOG_LEVELS, Context
from ._pagination import paginate
from ._resources import Prompt, Resource
from ._tools import Tool

log = logging.getLogger("mcpio.server")


class Server:
    """An MCP server. See the README for a tour; every option is keyword-only and optional."""

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
    ) -> None:
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.instructions = instructions
        self.website_url = website_url
        self.icons = icons
        self.lifespan = lifespan
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size!r}")
        self.page_size = page_size
        self.max_message_size = max_message_size
        self.max_in_flight = max_in_flight
        self._tools: dict[str, Tool] = {}
        self._resources: dict[str, Resource] = {}  # static, by URI
        self._templates: dict[str, Resource] = {}  # by template string
        self._prompts: dict[str, Prompt] = {}
        self._completer: Callable[..., Any] | None = None
        self._notification_hooks: dict[str, list[Callable[..., Any]]] = {}
        self._sessions: weakref.WeakSet[Session] = weakref.WeakSet()
        self._lifespan_value: Any = None
        self._background: set[asyncio.Task] = set()
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop serving our sessions
        self._methods = {
            "initialize": self._initialize,
            "ping": self._ping,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
            "logging/setLevel": self._set_level,
        }

    # ================================================================ registration
    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Register a tool: ``@server.tool`` or ``@server.tool(name=…, title=…, annotations=…)``."""
        if fn is None:
            return lambda f: self.tool(f, **options)
        self.add_tool(fn, **options)
        return fn

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> Tool:
        tool = Tool.from_function(fn, **options)
        self._tools[tool.name] = tool
        self._changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        del self._tools[name]
        self._changed("tools")

    def resource(self, uri: str, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a resource (``"file:///a.txt"``) or template (``"users://{id}"``)."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add_resource(fn, uri, **options)
            return fn

        return register

    def add_resource(self, fn: Callable[..., Any], uri: str, **options: Any) -> Resource:
        res = Resource(fn, uri, **options)
        (self._templates if res.is_template else self._resources)[uri] = res
        self._changed("resources")
        return res

    def remove_resource(self, uri: str) -> None:
        if uri in self._resources:
            del self._resources[uri]
        else:
            del self._templates[uri]
        self._changed("resources")

    def prompt(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=…, title=…)``."""
        if fn is None:
            return lambda f: self.prompt(f, **options)
        self.add_prompt(fn, **options)
        return fn

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> Prompt:
        p = Prompt(fn, **options)
        self._prompts[p.name] = p
        self._changed("prompts")
        return p

    def remove_prompt(self, name: str) -> None:
        del self._prompts[name]
        self._changed("prompts")

    def completion(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register the completion handler: ``fn(ref, argument, context) -> list[str]`` (sync or
        async). Without one, arguments typed Literal/Enum complete from their values."""
        self._completer = fn
        return fn

    def on_notification(self, method: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Run ``fn(ctx, params)`` (async) when the client sends notification ``method``,
        e.g. ``"notifications/initialized"`` or ``"notifications/roots/list_changed"``."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._notification_hooks.setdefault(method, []).append(fn)
            return fn

        return register

    # ================================================================ notifications out
    def _changed(self, kind: str) -> None:
        """Tell connected clients that ``kind`` changed; safe from any thread (a sync tool
        runs in a worker thread and may add or remove tools)."""
        loop = self._loop
        if not self._sessions or loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._notify_changed(loop, kind)
        else:
            loop.call_soon_threadsafe(self._notify_changed, loop, kind)

    def _notify_changed(self, loop: asyncio.AbstractEventLoop, kind: str) -> None:
        for s in list(self._sessions):
            # Only to sessions that are initialized (the initialize result is out) and were told
            # listChanged for this kind (spec: server/tools §List Changed Notification).
            if s.closed or not s.connection.lifecycle.initialized:
                continue
            if s.state.get("capabilities", {}).get(kind, {}).get("listChanged"):
                self._spawn(loop, s.notify(f"notifications/{kind}/list_changed"))

    def _spawn(self, loop: asyncio.AbstractEventLoop, coro: Any) -> None:
        t = loop.create_task(coro)
        self._background.add(t)
        t.add_done_callback(self._background.discard)

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed (``notifications/resources/updated``)."""
        for s in list(self._sessions):
            if uri in s.state.get("subscriptions", ()):
                await s.notify("notifications/resources/updated", {"uri": uri})

    # ================================================================ capabilities
    def capabilities(self, rules: Rules) -> dict[str, Any]:
        """What this server announces at initialize: derived from what is registered then
        (spec-notes §4). ``completions`` (2025-03-26+) only when something can be completed:
        a prompt, a resource template or a registered completer."""
        caps: dict[str, Any] = {"logging": {}}
        if rules.completions_capability and (self._prompts or self._templates or self._completer is not None):
            caps["completions"] = {}
        if self._prompts:
            caps["prompts"] = {"listChanged": True}
        if self._resources or self._templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self._tools:
            caps["tools"] = {"listChanged": True}
        return caps

    def server_info(self, rules: Rules) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title and rules.titles:
            info["title"] = self.title
        if rules.icons:  # 2025-11-25 added these Implementation fields
            if self.description:
                info["description"] = self.description
            if self.website_url:
                info["websiteUrl"] = self.website_url
            if self.icons:
                info["icons"] = self.icons
        return info

    # ================================================================ method table
    async def _on_request(self, session: Session, ev: RequestReceived) -> Any:
        handler = self._methods.get(ev.method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {ev.method!r} is not an MCP method this server serves")
        return await handler(session, ev.params or {}, ev)

    def _gate(self, session: Session, capability: str, method: str) -> Rules:
        if capability not in session.state.get("capabilities", ()):
            raise MethodNotFound(f"Method not found: {method!r} (this server did not announce the {capability!r} capability)")
        return session.connection.rules  # type: ignore[return-value]

    def _context(self, session: Session, params: dict[str, Any], ev: RequestReceived | None) -> Context:
        return Context(self, session, ev.id if ev else None, params.get("_meta"))

    async def _initialize(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        conn = session.connection
        rules = conn.rules
        assert rules is not None
        self._loop = asyncio.get_running_loop()  # where list_changed notifications are sent from
        caps = self.capabilities(rules)
        session.state["capabilities"] = caps
        result: dict[str, Any] = {"protocolVersion": conn.version, "capabilities": caps, "serverInfo": self.server_info(rules)}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    async def _ping(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        return {}

    async def _tools_list(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        rules = self._gate(session, "tools", "tools/list")
        page, nxt = paginate(list(self._tools.values()), params, self.page_size, "tools")
        return _page("tools", [t.definition(rules) for t in page], nxt)

    async def _tools_call(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        rules = self._gate(session, "tools", "tools/call")
        name = params.get("name")
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name!r}; call tools/list for the tools this server offers")
        return await tool.call(params.get("arguments"), self._context(session, params, ev), rules)

    async def _resources_list(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        rules = self._gate(session, "resources", "resources/list")
        page, nxt = paginate(list(self._resources.values()), params, self.page_size, "resources")
        return _page("resources", [r.definition(rules) for r in page], nxt)

    async def _templates_list(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        rules = self._gate(session, "resources", "resources/templates/list")
        page, nxt = paginate(list(self._templates.values()), params, self.page_size, "templates")
        return _page("resourceTemplates", [r.definition(rules) for r in page], nxt)

    async def _resources_read(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        rules = self._gate(session, "resources", "resources/read")
        uri = _uri_param(params)
        try:
            contents = await self._read_resource_contents(uri, self._context(session, params, ev))
        except ResourceNotFound as exc:
            exc.code = rules.resource_not_found_code
            raise
        return {"contents": contents}

    async def _read_resource_contents(self, uri: str, ctx: Context | None) -> list[dict[str, Any]]:
        res = self._resources.get(uri)
        if res is not None:
            return await res.read(uri, {}, ctx)
        for tmpl in self._templates.values():
            kwargs = tmpl.match(uri)
            if kwargs is not None:
                return await tmpl.read(uri, kwargs, ctx)
        raise ResourceNotFound(uri)

    async def _subscribe(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        self._gate(session, "resources", "resources/subscribe")
        session.state.setdefault("subscriptions", set()).add(_uri_param(params))
        return {}

    async def _unsubscribe(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        self._gate(session, "resources", "resources/unsubscribe")
        session.state.setdefault("subscriptions", set()).discard(_uri_param(params))
        return {}

    async def _prompts_list(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        rules = self._gate(session, "prompts", "prompts/list")
        page, nxt = paginate(list(self._prompts.values()), params, self.page_size, "prompts")
        return _page("prompts", [p.definition(rules) for p in page], nxt)

    async def _prompts_get(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        rules = self._gate(session, "prompts", "prompts/get")
        name = params.get("name")
        prompt = self._prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {name!r}; call prompts/list for the prompts this server offers")
        return await prompt.render(params.get("arguments"), self._context(session, params, ev), rules)

    async def _complete(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        rules = session.connection.rules
        if rules is not None and rules.completions_capability:  # 2024-11-05 had no such capability
            self._gate(session, "completions", "completion/complete")
        return await complete(self, params)

    async def _set_level(self, session: Session, params: dict[str, Any], ev: RequestReceived) -> dict[str, Any]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise InvalidParams(f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}, got {level!r}")
        session.state["log_level"] = level
        return {}

    async def _on_notification(self, session: Session, ev: NotificationReceived) -> None:
        hooks = self._notification_hooks.get(ev.method)
        if hooks:
            loop = asyncio.get_running_loop()
            ctx = self._context(session, ev.params or {}, None)
            for hook in hooks:
                # A task, so a hook may itself send requests (e.g. roots/list) without
                # blocking the loop that must read their answers.
                self._spawn(loop, _run_hook(hook, ctx, ev.params or {}))

    # ================================================================ serving
    def session(self, transport: Transport) -> Session:
        """A server-role Session for ``transport`` (``await session.run()`` serves it)."""
        s = Session(
            transport, Connection("server"), on_request=self._on_request,
            on_notification=self._on_notification, max_in_flight=self.max_in_flight,
        )
        self._sessions.add(s)
        return s

    @contextlib.asynccontextmanager
    async def running(self) -> Any:
        """Enter the lifespan (once) for the duration of serving."""
        if self.lifespan is None:
            yield self
            return
        async with self.lifespan(self) as value:
            self._lifespan_value = value
            try:
                yield self
            finally:
                self._lifespan_value = None

    async def serve(self, transport: Transport) -> None:
        """Serve one connection on ``transport`` until it ends (lifespan included), then close
        ``transport`` so the peer sees end of stream (``aclose`` is idempotent)."""
        try:
            async with self.running():
                await self.session(transport).run()
        finally:
            await transport.aclose()

    async def serve_stdio(self) -> None:
        """Serve on this process's stdin/stdout until EOF, SIGTERM or the parent's death."""
        from .._transports._stdio import StdioServerTransport

        transport = StdioServerTransport(max_line_size=self.max_message_size)
        trace_path = os.environ.get("MCPIO_TRACE")
        if trace_path:
            transport.trace = _tracer(trace_path)
        await transport.open()
        loop = asyncio.get_running_loop()
        session = self.session(transport)

        def on_signal() -> None:
            session._drain_timeout = 2.0
            transport._feed_eof()

        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGTERM, on_signal)
        try:
            async with self.running():
                await session.run()
        finally:
            await transport.aclose()

    def run(self, transport: str = "stdio") -> None:
        """Serve until the client goes away. ``transport``: "stdio" (the default)."""
        if transport != "stdio":
            raise ValueError(f"unknown transport {transport!r}; this version serves 'stdio'")
        _configure_logging()
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(self.serve_stdio())


async def _run_hook(hook: Callable[..., Any], ctx: Context, params: dict[str, Any]) -> None:
    try:
        r = hook(ctx, params)
        if asyncio.iscoroutine(r):
            await r
    except Exception:
        log.exception("notification hook %r failed", getattr(hook, "__name__", hook))


def _page(key: str, items: list[Any], next_cursor: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {key: items}
    if next_cursor is not None:
        out["nextCursor"] = next_cursor
    return out


def _uri_param(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams('Invalid params: "uri" must be a string')
    return uri


def _tracer(path: str) -> Callable[[str, bytes], None]:
    f = open(path, "a", buffering=1, encoding="utf-8", errors="replace")  # noqa: SIM115

    def trace(direction: str, frame: bytes) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z"
        f.write(f"{stamp} {direction} {bytes(frame).decode('utf-8', 'replace')}\n")

    return trace


def _configure_logging() -> None:
    root = logging.getLogger("mcpio")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(os.environ.get("MCPIO_LOG_LEVEL", "WARNING").upper())
