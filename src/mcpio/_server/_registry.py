"""What a server serves: the one :class:`Registry` a :class:`~mcpio.Server` holds (``server.registry``).

The modules that serve requests (the method table, completion, the synchronous answer path,
capabilities, the catalog, middleware, telemetry) read what they serve here, not from the
Server: its tools, resources, templates and prompts (the *served* tables: what the server
registered, or, once it is shaped by ``mount``/``disable``/``transform_tool``, what ``_catalog``
made of its own items and its mounts), the OAuth scopes those items need, the middleware, the
completer, the skills, the notification hooks, the declared extensions and dependency overrides.

Contracts:

* a served table is swapped whole when it is made again (:meth:`Registry.swap`): a reader (the
  loop, while a worker thread registers a tool) sees the old table or the new one, never half of
  one; a plain server's ``add_*`` writes its table in place;
* :attr:`Registry.announced` memoizes the capabilities per protocol version; every change to
  what is served (:meth:`Registry.changed`) forgets them; a list capability announced once stays
  announced (:attr:`Registry.promised`): a client told ``list_changed`` lists again, and an empty
  list is its answer, never -32601;
* the Registry never notifies clients: the Server's :class:`~._changes.Changes` does, after
  changing it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Protocol

    from ._catalog import Catalog
    from ._context import Context
    from ._deps import Overrides
    from ._extensions import Extension
    from ._resources import Prompt, Resource
    from ._running import Starting
    from ._server import Server
    from ._skills import Skill
    from ._tools import Tool

    class Forwarding(Protocol):
        """Another server a server stands for (:attr:`Registry.upstream`: a proxy's ``Upstream``)."""

        #: The extensions it declares, announced as the server's own (``active_extensions``).
        extensions: list[Extension]
        label: str  #: its name (a gateway's entry name), in the messages that name it

        async def custom(self, ctx: Context, method: str, params: dict[str, Any]) -> Any:
            """Its answer to custom request ``method`` (``_extensions.extension_handler``)."""

        def heard(self, method: str, params: dict[str, Any]) -> None:
            """Tell it the client's custom notification ``method`` (``Server._hear``)."""


# The item kinds of a registry (its table attributes), the scope method of their items and the
# list_changed kind each belongs to.
KINDS = ("tools", "prompts", "resources", "templates")
SCOPE_METHOD = {
    "tools": "tools/call",
    "prompts": "prompts/get",
    "resources": "resources/read",
    "templates": "resources/read",
}
NOTIFY = {"tools": "tools", "prompts": "prompts", "resources": "resources", "templates": "resources"}
KINDS_OF = {"tools": ("tools",), "prompts": ("prompts",), "resources": ("resources", "templates")}

_NO_SCOPES: frozenset[str] = frozenset()
SCOPED = frozenset(SCOPE_METHOD.values())  # the methods whose scopes are an item's (its name or URI)
ANY_METHOD = "*"  # the key of the scopes of every custom method named nowhere (``scopes_for``)


#: The key of :attr:`Registry.notification_hooks` for a session's end (``Server.run_session``):
#: heard as a client's notifications are, under a key no client can send (a method is a string).
SESSION_ENDED = None


class Registry:
    """The tools, resources, templates, prompts and the hooks a server serves with (module docstring)."""

    __slots__ = (
        "ambiguous",
        "announced",
        "catalog",
        "completer",
        "custom",
        "extensions",
        "first_start",
        "held",
        "late",
        "middleware",
        "notification_hooks",
        "overrides",
        "parents",
        "promised",
        "prompts",
        "resources",
        "scopes",
        "skills",
        "templates",
        "tools",
        "upstream",
        "watchers",
    )

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}  # static, by URI
        self.templates: dict[str, Resource] = {}  # by template string
        self.prompts: dict[str, Prompt] = {}
        # OAuth scopes an item needs over HTTP with auth (``scopes=``), by (scope method, name or URI)
        self.scopes: dict[tuple[str, str], frozenset[str]] = {}
        self.middleware: list[Callable[..., Any]] = []  # the first is the outermost (``_middleware``)
        self.completer: Callable[..., Any] | None = None
        self.skills: dict[str, Skill] = {}  # the skills extension (SEP-2640): SKILL.md URI -> skill
        # By client notification method, and SESSION_ENDED (no method a client can send): a session's end
        self.notification_hooks: dict[str | None, list[Callable[..., Any]]] = {}
        self.extensions: dict[str, Extension] = {}  # declared (SEP-2133), by identifier
        self.custom: Extension | None = None  # the holder of custom methods of no extension (never announced)
        # The server this one stands for (a proxy's upstream): the custom requests and notifications
        # no extension here serves go to it, its extensions are announced here, and in the servers
        # it is mounted in when it is their sole route (``_extensions.routes``).
        self.upstream: Forwarding | None = None
        self.ambiguous = ""  # the upstreams last logged as no route for custom requests (_extensions.routes)
        self.overrides: Overrides | None = None  # replaced dependency providers (``_deps``), made at the first
        # Told (kind, None) of a list change ("tools"…, here or on another process), ("resources/updated", uri)
        self.watchers: list[Callable[[str, str | None], None]] = []
        self.announced: dict[str, dict[str, Any]] = {}  # capabilities by version (``_lifecycle.capabilities``)
        # The list kinds ("tools", "prompts", "resources") announced whatever is served now: each one
        # announced once (for good), and a proxy's its upstream announces (it may list nothing yet)
        self.promised: set[str] = set()
        # The catalogs of the servers these items are mounted in (``Server.mount``): told of every change.
        self.parents: list[Catalog] = []
        # What these items come from that starts once, as serving begins (a gateway's upstream): until
        # its first start has ended, requests but ``_running.AT_ONCE`` wait for it, here and in the
        # servers these items are mounted in (:meth:`first_starts`); None: nothing of the kind.
        self.first_start: Starting | None = None
        # The lifespans of the servers mounted here while it serves (``_running.LateMounts``): a first
        # start too, until each has been entered.
        self.late: Starting | None = None
        # Whether a first start here or deeper may be under way (:meth:`hold`, :meth:`release`): the one
        # test a request makes before it is served when nothing is starting (``_running.HeldUntilStarted``).
        self.held = False
        # How the served tables are made once the server is shaped (``mount``/``disable``/``transform_tool``):
        # from its own items (``catalog.own``) and its mounts; None: it serves what it registers, as it is.
        self.catalog: Catalog | None = None

    def table(self, kind: str) -> dict[str, Any]:
        """The served table of ``kind`` (one of :data:`KINDS`)."""
        return getattr(self, kind)  # type: ignore[no-any-return]

    def swap(self, kind: str, table: dict[str, Any]) -> None:
        """Serve ``table`` as ``kind`` from now on (whole: see the module docstring)."""
        setattr(self, kind, table)

    def changed(self) -> None:
        """What is served changed: the capabilities follow from it again (here, and in the servers
        this one is mounted in: they announce its extensions)."""
        self.announced.clear()
        for catalog in self.parents:
            catalog.registry.changed()

    def promised_kinds(self) -> set[str]:
        """:attr:`promised`, and that of every server mounted here (a mounted proxy's upstream's)."""
        kinds = set(self.promised)
        for mount in self.catalog.mounts if self.catalog is not None else ():
            kinds |= mount.child.registry.promised_kinds()
        return kinds

    def first_starts(self) -> list[Starting]:
        """:attr:`first_start` and :attr:`late` of this registry and of every one mounted in it,
        deeper too, while they have yet to end (a gateway's upstreams, a late mount's lifespan)."""
        found = [first for first in (self.first_start, self.late) if first is not None and first.starting]
        for mount in self.catalog.mounts if self.catalog is not None else ():
            found += mount.child.registry.first_starts()
        return found

    def wait_for(self, first: Starting) -> None:
        """Serve from ``first`` (:attr:`first_start`): requests wait for its first start."""
        self.first_start = first
        self.hold()

    def hold(self) -> None:
        """A first start here may be under way (:meth:`first_starts`, set or mounted before this
        call): requests wait for it here and in every server these items are mounted in."""
        self.held = True
        for catalog in self.mounted_in():
            catalog.registry.held = True

    def release(self) -> None:
        """Serve requests at once again if no first start here or deeper is under way any more.
        No lock: a thread that mounts one sets :attr:`held` after the mount is in place, so the
        second look finds that mount whenever the first one missed it and the clear came last."""
        if not self.first_starts():
            self.held = False
            if self.first_starts():
                self.held = True

    def tell(self, kind: str, uri: str | None) -> None:
        """Tell the watchers (``middleware.ResponseCache``…) that ``kind`` changed (``uri``: the
        resource of a ``resources/updated``); safe from any thread."""
        for watcher in self.watchers:
            watcher(kind, uri)

    def set_scopes(self, method: str, name: str, scopes: Any) -> None:
        """Record the OAuth scopes a ``method`` of ``name`` needs (``scopes=`` of a registration;
        None: none). TypeError for anything but a list of strings."""
        if scopes is None:
            self.scopes.pop((method, name), None)
            return
        if isinstance(scopes, str) or not all(isinstance(x, str) for x in scopes):
            raise TypeError(f"scopes= takes a list of scope strings, not {scopes!r}")
        self.scopes[(method, name)] = frozenset(scopes)

    def scopes_for(self, method: str, name: str) -> frozenset[str]:
        """The OAuth scopes a ``tools/call``/``prompts/get``/``resources/read`` of ``name`` needs;
        none for a name not served (its call fails as unknown). Any other ``method`` (``name``
        unread): a custom method's own (``proxy(method_scopes=)``, key ``(method, "")``), else
        those of ``"*"`` (every custom method named nowhere), none for one disabled (-32601) or
        for an MCP method."""
        if not self.scopes:
            return _NO_SCOPES
        if method not in SCOPED:
            from ._extensions import _disabled, is_custom

            if not is_custom(method) or _disabled(self, method):
                return _NO_SCOPES
            return self.scopes.get((method, ""), self.scopes.get((ANY_METHOD, ""), _NO_SCOPES))
        if method == "resources/read":
            found = self.find_resource(name)
            return self.scopes.get((method, found[0].uri), _NO_SCOPES) if found else _NO_SCOPES
        needed = self.scopes.get((method, name), _NO_SCOPES)
        if needed and name not in (self.tools if method == "tools/call" else self.prompts):
            return _NO_SCOPES  # not served (disabled): refused as unknown, never for the scopes it has
        return needed

    def permitted(self, kind: str, items: list[Any], granted: frozenset[str]) -> list[Any]:
        """``items`` of ``kind`` that a token holding ``granted`` scopes may use."""
        method = SCOPE_METHOD[kind]
        scopes = self.scopes
        return [
            item
            for item in items
            if scopes.get((method, item.uri if method == "resources/read" else item.name), _NO_SCOPES) <= granted
        ]

    def find_resource(self, uri: str) -> tuple[Resource, dict[str, Any]] | None:
        """The resource serving ``uri`` and its template arguments, or None."""
        res = self.resources.get(uri)
        if res is not None:
            return res, {}
        for tmpl in self.templates.values():
            kwargs = tmpl.match(uri)
            if kwargs is not None:
                return tmpl, kwargs
        return None

    def hooks_of(self, method: str | None) -> list[tuple[Server | None, Callable[..., Any]]]:
        """The hooks of client notification ``method`` (``Server.on_notification``; ``SESSION_ENDED``:
        of a session's end): this server's
        (None), then those of the servers mounted in it, deeper ones too, each with the server
        that registered it: a mounted server hears the clients of the servers it is mounted in."""
        found: list[tuple[Server | None, Callable[..., Any]]] = [
            (None, hook) for hook in self.notification_hooks.get(method, ())
        ]
        if self.catalog is not None:
            for mount in self.catalog.mounts:
                child = mount.child
                for owner, hook in child.registry.hooks_of(method):
                    if not any(h is hook for _, h in found):  # a server mounted twice hears it once
                        found.append((owner or child, hook))
        return found

    def mounted_in(self) -> Iterator[Catalog]:
        """The catalogs of the servers these items are mounted in, directly or deeper, each once
        (a server mounted in two servers that are both mounted in a third is in that one once;
        ``Server.mount`` refuses a cycle, and one would end here all the same)."""
        seen: set[int] = set()
        todo = list(self.parents)
        for catalog in todo:  # it grows as it goes: the parents, then theirs, and so on
            if id(catalog) not in seen:
                seen.add(id(catalog))
                yield catalog
                todo.extend(catalog.registry.parents)

    def serves_into(self, other: Registry) -> bool:
        """Whether these items are served by ``other`` too: mounted in it, directly or deeper."""
        return any(catalog.registry is other for catalog in self.mounted_in())

    def has_task_tools(self) -> bool:
        """Whether a tool may run as a task (the tasks capability and extension follow from it)."""
        return any(t.task_support != "forbidden" for t in self.tools.values())
