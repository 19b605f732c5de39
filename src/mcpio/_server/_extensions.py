"""The public extension API (SEP-2133): declare an extension, add its methods, wrap tool calls.

An extension has an identifier (``"com.acme/search"``: a ``_meta``-style key with a prefix) and
settings (a JSON object, ``{}`` for none). ``server.extension(id, settings)`` declares it and
returns its :class:`Extension` (``active=``: a predicate of the server, for an extension declared
only while it has something to serve, as the built-in skills and tasks extensions at the end of
this module); on it (or on the server, naming no extension)

* ``@ext.method("acme/search")`` serves a custom request: its parameters are validated from the
  function's signature by the same machinery as a tool's arguments (-32602 naming the argument
  that does not fit), the return value is encoded as the result (an object; a dataclass, Struct
  or TypedDict becomes one; None an empty result; a value annotated as something else than an
  object is wrapped as ``{"result": value}``, as a tool's structured output), exceptions go
  through the one exception-to-wire mapping (``MCPError`` as itself, anything else -32603).
  Declare a :class:`~mcpio.Context` parameter to get the request's context;
* ``@ext.notification("acme/changed")`` runs a typed handler for a notification the client sends;
* ``@ext.wrap_tools`` registers ``async def wrap(request, call_next)`` around every ``tools/call``
  (it is middleware, run only for tool calls: one chain, see ``_middleware``).

Advertising (spec 2026-07-28 ``ServerCapabilities.extensions``): a declared extension appears
under ``capabilities.extensions`` of ``server/discover``. The legacy versions' schemas define no
``extensions`` member, so a legacy ``initialize`` result does not carry it; a legacy client's
own ``capabilities.extensions`` (which hosts send, e.g. MCP Apps) is read all the same. A server
mounted in another brings its extensions along: the parent announces and serves them.
``legacy=False`` serves the extension's methods only to 2026-07-28 requests.

In a handler, ``ctx.client_supports(id)`` says whether the client declared the extension (legacy:
at ``initialize``; 2026-07-28: in the request's ``_meta`` client capabilities) and
``ctx.client_extension(id)`` gives its settings. ``await server.notify_extension(id, method,
params)`` sends a notification to every connected client that declared the extension.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .. import _log
from .._content import CONTENT_TYPES
from .._errors import InvalidParams, MethodNotFound
from .._schema import ArgumentError, analyze_function
from .._versions import SKILLS_EXTENSION, TASKS_EXTENSION, UI_EXTENSION, checked_extension
from ._context import Context
from ._tools import invoke

if TYPE_CHECKING:
    from .._session import Session
    from .._versions import Rules
    from ._changes import Changes
    from ._registry import Forwarding, Registry
    from ._server import Server

log = _log.logger("mcpio.server", globals())  # logging loads with a first record

Handler = Callable[["Server", Context, dict[str, Any]], Awaitable[dict[str, Any]]]

# The methods of MCP itself: an extension may not take them over.
_RESERVED_PREFIXES = ("notifications/", "ui/")
_CUSTOM = "mcpio/custom"  # the holder of a server's methods of no extension: never announced


class Extension:
    """One declared extension: its identifier, settings and what it adds (module docstring)."""

    def __init__(
        self,
        server: Server | None,
        id: str,
        settings: dict[str, Any] | None = None,
        legacy: bool = True,
        active: Callable[[Any], bool] | None = None,
    ) -> None:
        self.server = server  # None: a built-in extension, declared on every server it is active on
        self.id = id
        self.settings: dict[str, Any] = checked_extension(id, settings, "server.extension")
        self.legacy = legacy  # its methods are served to legacy requests too
        self.active = active  # None: always declared; else while ``active(server)`` holds
        self.methods: dict[str, Handler] = {}

    def serves(self, rules: Rules | None) -> bool:
        """Whether this extension's methods are served under ``rules``."""
        return self.legacy or (rules is not None and rules.stateless)

    def method(self, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Serve request ``name`` with the decorated function (module docstring)."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add_handler(name, typed_handler(name, fn))
            return fn

        return register

    def add_handler(self, name: str, handler: Handler) -> None:
        """Serve request ``name`` with ``handler(server, ctx, params) -> result`` (the form of the
        built-in method table): for extensions that read their params themselves."""
        _check_name(name, "method")
        for other in all_extensions(self.server.registry) if self.server is not None else ():
            if other is not self and name in other.methods:
                whose = "of no extension (@server.method)" if other.id == _CUSTOM else f"of the {other.id} extension"
                raise ValueError(f"{name!r} is already a method {whose}; a method has one handler")
        self.methods[name] = handler

    def notification(self, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Run the decorated function (typed parameters, optional Context) when the client sends
        notification ``name`` (named as a method is: :func:`_check_name`); a failure is logged (a
        notification has no answer)."""
        _check_name(name, "notification")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            sig = analyze_function(fn, injected=(Context,))

            async def hook(ctx: Context, params: dict[str, Any]) -> None:
                kwargs = sig.bind({k: v for k, v in params.items() if k != "_meta"})
                await invoke(sig, fn, kwargs, ctx)

            self._server().on_notification(name)(hook)
            return fn

        return register

    def wrap_tools(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``async def wrap(request, call_next)`` around every ``tools/call`` (middleware
        that other requests pass by; the first registered is the outermost)."""

        async def only_tool_calls(request: Any, call_next: Any) -> dict[str, Any]:
            if request.method != "tools/call":
                return dict(await call_next(request))
            return dict(await fn(request, call_next))

        only_tool_calls.__name__ = getattr(fn, "__name__", "wrap_tools")
        self._server().middleware(only_tool_calls)
        return fn

    def _server(self) -> Server:
        if self.server is None:
            raise TypeError(f"the built-in {self.id} extension takes no hooks")
        return self.server

    def __repr__(self) -> str:
        return f"<Extension {self.id} {self.settings}>"


def _check_name(name: str, what: str) -> None:
    """ValueError unless ``name`` may be the name of an extension's own ``what`` (a method or a
    notification): ``prefix/name``, outside MCP's ``notifications/`` and ``ui/``, no MCP method."""
    if not isinstance(name, str) or "/" not in name or name.startswith(_RESERVED_PREFIXES):
        raise ValueError(f"custom {what} {name!r} needs a 'prefix/name' form outside notifications/ and ui/")
    if not is_custom(name):
        raise ValueError(f"{name!r} is an MCP method; an extension adds {what}s of its own")


def is_custom(name: str) -> bool:
    """Whether ``name`` may be an extension's own method or notification (:func:`_check_name`;
    the skills extension's methods are: it is built on this API)."""
    from .._versions import ALL_CLIENT_REQUESTS, SERVER_REQUESTS, SKILLS_METHODS

    if "/" not in name or name.startswith(_RESERVED_PREFIXES) or name in SERVER_REQUESTS:
        return False
    return name not in ALL_CLIENT_REQUESTS or name in SKILLS_METHODS


def typed_handler(name: str, fn: Callable[..., Any]) -> Handler:
    """A method-table handler for ``fn``: params bound by its signature, the value encoded."""
    sig = analyze_function(fn, injected=(Context,), content_types=CONTENT_TYPES)

    async def handler(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        try:
            kwargs = sig.bind({k: v for k, v in params.items() if k != "_meta"})
        except ArgumentError as exc:
            raise InvalidParams(f"Invalid params: {exc}") from None
        value = await invoke(sig, fn, kwargs, ctx)
        return {} if value is None else sig.to_structured(value)  # None: an empty result (an acknowledgement)

    handler.__name__ = handler.__qualname__ = getattr(fn, "__name__", name)
    return handler


def client_extension(capabilities: dict[str, Any], extension: str) -> dict[str, Any] | None:
    """The settings a client with ``capabilities`` declared for ``extension``, or None."""
    declared = capabilities.get("extensions")
    settings = declared.get(extension) if isinstance(declared, dict) else None
    return settings if isinstance(settings, dict) else None


def all_extensions(registry: Registry) -> list[Extension]:
    """The built-in extensions, those declared in ``registry`` and the holder of its custom
    methods, then those of the servers mounted in it (their methods are served here too)."""
    return [*BUILTIN, *_own(registry), *_mounted(registry)]


def _own(registry: Registry) -> list[Extension]:
    custom = registry.custom
    return [*registry.extensions.values(), *([custom] if custom is not None else [])]


def _mounted(registry: Registry) -> list[Extension]:
    """The extensions (and custom methods) of every server mounted in ``registry``'s, nearest first:
    a mount serves them as it serves the child's tools (methods keep their names: an extension's
    protocol names them; ``mount`` refuses a second server bringing one served already, see
    :func:`method_clashes`; one a child adds later: the parent's own win, then the first mount's)."""
    found: list[Extension] = []
    for mount in registry.catalog.mounts if registry.catalog is not None else ():
        found += _own(mount.child.registry)
    for mount in registry.catalog.mounts if registry.catalog is not None else ():
        found += _mounted(mount.child.registry)
    return found


def method_clashes(parent: Registry, child: Registry) -> list[str]:
    """The custom methods ``child``'s server (with what is mounted in it) would bring to
    ``parent``'s that another extension there already serves (the same extension, mounted
    twice, is no clash)."""
    served = {name: ext for ext in all_extensions(parent) for name in ext.methods}
    return [
        name
        for ext in (*_own(child), *_mounted(child))
        for name in ext.methods
        if name in served and served[name] is not ext
    ]


def custom_methods(registry: Registry, server: Any) -> Extension:
    """The holder of ``server``'s methods added with no extension: never advertised (not declared)."""
    holder = registry.custom
    if holder is None:
        holder = registry.custom = Extension(server, _CUSTOM)
    return holder


def extension_handler(registry: Registry, method: str) -> Handler | None:
    """The handler of custom request ``method`` of the server serving ``registry``, or None. It
    refuses with -32601 a request its extension does not serve: under legacy rules
    (``legacy=False``), or while inactive."""
    if _disabled(registry, method):  # server.disable("acme/history"): served no more
        return None
    forward = _forwarded(registry, method)
    for ext in all_extensions(registry):
        handler = ext.methods.get(method)
        if handler is not None:
            break
    else:
        return forward
    if ext.server is not None and _disabled(ext.server.registry, method):  # its own server disabled it
        return None

    async def gated(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        owner = ext.server or server  # a mounted server's extension: that server's
        if ext.active is not None and not ext.active(owner):
            if forward is not None and ext.server is None:  # a built-in it does not serve itself: its
                return await forward(server, ctx, params)  # upstream's (a proxy of skills); an owner's stays refused
            raise MethodNotFound(f"Method not found: {method!r} (this server did not declare the {ext.id} extension)")
        if not ext.serves(ctx.rules):
            raise MethodNotFound(
                f"Method not found: {method!r} (the {ext.id} extension serves 2026-07-28 requests only; "
                "connect with era='modern')"
            )
        return await handler(owner, ctx, params)

    return gated


def _disabled(registry: Registry, method: str) -> bool:
    """Whether ``disable()`` of the server of ``registry`` names custom method ``method``."""
    catalog = registry.catalog
    return catalog is not None and method in catalog.disabled_names


def routes(registry: Registry, *, mounted: bool = False) -> list[Registry]:
    """The registries of the proxies whose upstreams the custom requests of ``registry``'s server
    may go to: a proxy's own (``Registry.upstream``);
    else, in a server proxies are mounted in (a gateway), each mounted one, deeper too, whose
    upstream declares an extension (tasks and MCP Apps aside: the proxy serves the first itself,
    the second has no custom method). Custom methods are not namespaced: with one such upstream
    the server announces its extensions and forwards to it (:func:`sole_route`); with several,
    none of theirs is announced and a custom request is refused naming them (:func:`_forwarded`)."""
    upstream = registry.upstream
    if upstream is not None:
        return [registry] if not mounted or any(e.id != UI_EXTENSION for e in upstream.extensions) else []
    mounts = registry.catalog.mounts if registry.catalog is not None else ()
    return [found for mount in mounts for found in routes(mount.child.registry, mounted=True)]


def sole_route(registry: Registry) -> Forwarding | None:
    """The one upstream of :func:`routes`, or None (none, or several)."""
    found = routes(registry)
    return found[0].upstream if len(found) == 1 else None


def _forwarded(registry: Registry, method: str) -> Handler | None:
    """The handler of custom request ``method`` that no extension here serves: the upstream's
    answer (:func:`routes`: a proxy's, or a mounted proxy's but where that proxy disabled it),
    a -32601 naming the upstreams when several could serve it (logged once for them), or None."""
    found = routes(registry) if is_custom(method) else []
    if len(found) > 1:
        names = ", ".join(repr(r.upstream.label) for r in found if r.upstream is not None)

        async def ambiguous(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
            if registry.ambiguous != names:  # once for these upstreams
                registry.ambiguous = names
                log.warning("custom requests are refused: the upstreams %s all declare extensions", names)
            raise MethodNotFound(
                f"Method not found: {method!r} (the upstreams {names} declare extensions and custom "
                "methods are not namespaced: which one serves it is ambiguous)"
            )

        return ambiguous
    upstream = found[0].upstream if found and (found[0] is registry or not _disabled(found[0], method)) else None
    if upstream is None:
        return None

    async def forwarded(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await upstream.custom(ctx, method, params)
        return result

    return forwarded


class ExtensionsMixin:
    """The extension API of :class:`~mcpio.Server` (its methods live here: ``_server`` is full);
    what it declares is kept in the server's :class:`~._registry.Registry`."""

    if TYPE_CHECKING:
        registry: Registry
        changes: Changes

        def open_sessions(self) -> list[Session]: ...

    def extension(
        self,
        id: str,
        settings: dict[str, Any] | None = None,
        *,
        legacy: bool = True,
        active: Callable[[Any], bool] | None = None,
    ) -> Extension:
        """Declare extension ``id`` with ``settings`` (again: its settings are replaced) and return
        it; ``active(server)``, when given, says whether it is declared now (read at each
        ``server/discover``, after any change to the server's tools, resources or prompts)."""
        checked = checked_extension(id, settings, "server.extension")  # the identifier too: before anything
        declared = self.registry.extensions
        ext = declared.get(id)
        if ext is None:
            server: Any = self
            ext = declared[id] = Extension(server, id, checked, legacy, active)
        else:
            ext.settings, ext.legacy, ext.active = checked, legacy, active
        self.registry.changed()
        return ext

    def method(self, name: str, *, extension: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """``@server.method("acme/search")``: serve a custom request (see :meth:`Extension.method`),
        as part of ``extension`` when given (declared with no settings if it is not yet)."""
        ext = self.registry.extensions.get(extension) if extension is not None else None
        if ext is None:
            ext = self.extension(extension) if extension is not None else custom_methods(self.registry, self)
        return ext.method(name)

    def active_extensions(self) -> list[Extension]:
        """The extensions this server declares now (``capabilities.extensions`` of 2026-07-28): its
        own, those its mounted servers declare (it serves their tools and methods; by
        identifier, its own settings win), and those of the upstream it forwards their methods
        to (:func:`sole_route`)."""
        found: dict[str, Extension] = {}
        upstream = sole_route(self.registry)  # a proxy's, or a mounted one's: those its upstream declares too
        for ext in (
            *BUILTIN,
            *self.registry.extensions.values(),
            *_mounted(self.registry),
            *(upstream.extensions if upstream is not None else ()),
        ):
            if ext.id not in found and ext.id != _CUSTOM and (ext.active is None or ext.active(ext.server or self)):
                found[ext.id] = ext
        return list(found.values())

    async def notify_extension(self, extension: str, method: str, params: dict[str, Any] | None = None) -> int:
        """Send notification ``method`` to every connected client that declared ``extension``
        (legacy sessions; a 2026-07-28 client has no connection to send it on), on every process
        that shares this server's state backend (``http_app(state=...)``): told to every copy of
        a shared session, as a list change is, and sent by the one holding its GET stream.
        Returns how many of this process's sessions it was told to."""
        from .._transports._base import change, new_change

        token = change.set(new_change())
        try:
            sent = await self.notify_extension_here(extension, method, params)
            bus = self.changes.bus
            if bus is not None:
                from ._http import EXTENSION, publish

                message = {"type": EXTENSION, "extension": extension, "method": method, "params": params}
                await publish(bus, {**message, "change": change.get()})
        finally:
            change.reset(token)
        return sent

    async def notify_extension_here(self, extension: str, method: str, params: dict[str, Any] | None = None) -> int:
        """What :meth:`notify_extension` does on this process (another process's arrives by the
        state backend's bus): not published again. Returns how many sessions it was told to."""
        sent = 0
        for session in self.open_sessions():
            if client_extension(session.connection.peer_capabilities, extension) is None:
                continue
            await self.changes.tell(session, method, params)
            sent += 1
        return sent

    # ---------------------------------------------------------------- MCP Apps (``_apps``)
    def ui_resource(self, uri: str, html: str | None = None, **options: Any) -> Any:
        """Serve an MCP Apps view at ``ui://…``: see :func:`mcpio._server._apps.ui_resource`."""
        from ._apps import ui_resource

        server: Any = self
        return ui_resource(server, uri, html, **options)

    def app_tool(self, fn: Callable[..., Any] | None = None, /, *, view: str, **options: Any) -> Any:
        """A tool whose results a host renders in ``view``: see :func:`mcpio._server._apps.app_tool`."""
        from ._apps import app_tool

        server: Any = self
        if fn is None:
            return lambda f: app_tool(server, f, view, **options)
        return app_tool(server, fn, view, **options)


# ---------------------------------------------------------------------- built-in extensions
def _skills_method(name: str) -> Handler:
    """A skills method, its module (pathlib, mimetypes) loaded with the first skills request."""

    async def handler(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        from . import _skills

        result: dict[str, Any] = await getattr(_skills, name)(server, ctx, params)
        return result

    handler.__name__ = handler.__qualname__ = name
    return handler


def _builtins() -> tuple[Extension, ...]:
    """The extensions mcpio declares itself, on the same API: skills (SEP-2640) while the server
    serves a skill (its own or a mounted server's: ``registry.skills``), the tasks extension of
    2026-07-28 while a tool may run as a task (its methods are in the method table: they serve
    2025-11-25's core tasks too)."""
    skills = Extension(
        None, SKILLS_EXTENSION, {"directoryRead": True}, legacy=False, active=lambda s: bool(s.registry.skills)
    )
    for method, name in (
        ("skills/list", "skills_list"),
        ("skills/get", "skills_get"),
        ("resources/directory/read", "directory_read"),
    ):
        skills.add_handler(method, _skills_method(name))
    tasks = Extension(None, TASKS_EXTENSION, legacy=False, active=lambda s: s.registry.has_task_tools())
    return skills, tasks


BUILTIN = _builtins()
