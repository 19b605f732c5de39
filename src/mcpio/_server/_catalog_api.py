"""The catalog shaping API of :class:`~mcpio.Server` (``mount``, ``disable``/``enable``,
``transform_tool``, ``replace_own``): where an item is registered (its
:class:`~._registry.Registry`, or the catalog's own items once it is shaped) is
:class:`~._changes.Changes`'s rule.

The shaping itself (how served tables are made from own items and mounts) is ``_catalog``,
imported with the first shaping call: a plain server never loads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._mrtr import ROUND_TIMEOUT
from ._registry import NOTIFY, Registry

if TYPE_CHECKING:
    from ._catalog import Arg
    from ._changes import Changes
    from ._resources import Resource
    from ._running import LateMounts
    from ._server import Server


def tags_of(tags: Any) -> frozenset[str]:
    """``tags=`` of a registration as a frozenset; TypeError for anything but strings."""
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise TypeError(f"tags= takes a set of strings, e.g. tags={{'admin'}}, not {tags!r}")
    return frozenset(tags)


def _names(value: str | Iterable[str] | None) -> set[str]:
    if value is None:
        return set()
    return {value} if isinstance(value, str) else set(tags_of(value))


class CatalogMixin:
    """The registering and shaping methods of :class:`~mcpio.Server`: they change its
    :class:`~._registry.Registry` through its :class:`~._changes.Changes` (``server.changes``)."""

    if TYPE_CHECKING:
        registry: Registry
        changes: Changes
        late_mounts: LateMounts

    def replace_own(self, items: dict[str, dict[str, Any]], owned: Callable[[Any], bool]) -> None:
        """For each kind of ``items``: the own items that ``owned`` selects give way to
        ``items[kind]`` (an own item ``owned`` does not select keeps its key), as ONE change: each
        table swapped whole, the served tables made once, one ``list_changed`` per list kind."""
        kinds = tuple(items)
        catalog = self.registry.catalog
        for kind, new in items.items():
            table = self.registry.table(kind) if catalog is None else catalog.own[kind]
            kept = {key: item for key, item in table.items() if not owned(item)}
            made = {**{k: v for k, v in new.items() if k not in kept}, **kept}
            if catalog is None:
                self.registry.swap(kind, made)  # a concurrent reader sees one table or the other
            else:
                catalog.own[kind] = made
        if catalog is not None:
            catalog.rebuild(kinds)  # tells clients and parents, once per list kind
            return
        for notify in dict.fromkeys(NOTIFY[kind] for kind in kinds):
            self.changes.changed(notify)

    def override(self, provider: Callable[..., Any], replacement: Callable[..., Any]) -> Any:
        """Make ``Depends(provider)`` use ``replacement`` (tests); the handle's ``undo()`` (or its ``with``) restores it."""
        from ._deps import override

        return override(self.registry, provider, replacement)

    def find_resource(self, uri: str) -> tuple[Resource, dict[str, Any]] | None:
        """The resource serving ``uri`` and its template arguments, or None: a listed resource, a
        template's match, else what :meth:`unlisted` reads."""
        found = self.registry.find_resource(uri)
        if found is None and (unlisted := self.unlisted(uri)) is not None:
            return unlisted, {}
        return found

    def unlisted(self, uri: str) -> Resource | None:
        """The resource read at ``uri`` though no listed resource or template serves it: a
        mounted child's under its namespace (a proxy reads any URI from its upstream, which says
        whether it serves it: the spec does not promise a tool's resource links in
        ``resources/list``), or None (a server that mounts none)."""
        catalog = self.registry.catalog
        return None if catalog is None else catalog.unlisted(uri)

    # ------------------------------------------------------------ shaping
    def mount(
        self,
        child: Server,
        namespace: str | None = None,
        *,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
    ) -> None:
        """Serve ``child``'s tools, prompts, resources and templates (with their scopes, task
        support, icons, ``_meta``, completion, skills, extensions and their methods) in this
        server, under ``namespace``:
        tool and prompt ``add`` → ``math__add``, resource ``greeting://{name}`` →
        ``greeting://math/{name}`` (the one naming rule, ``mcpio._naming``).

        Live: what the child adds or removes later is served here too, with ``list_changed``.
        The child's lifespan runs inside this server's (mounted while this one serves: entered at
        once, left before this one's ends); ``ctx.lifespan`` in a child's handler is
        the child's value; the child's ``on_notification`` hooks hear this server's clients. This
        server's middleware wraps the child's items; the child's own middleware does not run here.
        ``include`` / ``exclude`` name the child's items (its own names or URIs) to serve / leave
        out. ValueError when a name would be served twice.
        """
        from .._naming import check_namespace
        from ._catalog import Mount
        from ._extensions import method_clashes
        from ._registry import KINDS

        if child is self or self.registry.serves_into(child.registry):
            raise ValueError(f"cannot mount server {child.name!r} in itself (directly or through its mounts)")
        mount = Mount(
            child,
            None if namespace is None else check_namespace(namespace),
            None if include is None else frozenset(_names(include)),
            frozenset(_names(exclude)),
        )
        clashes = [
            mount.key(kind, key)
            for kind in KINDS
            for key in child.registry.table(kind)
            if mount.serves(key) and mount.key(kind, key) in self.registry.table(kind)
        ]
        if clashes:
            shown = ", ".join(repr(k) for k in clashes[:5])
            raise ValueError(
                f"mounting {child.name!r}{'' if namespace is None else f' under {namespace!r}'} would serve "
                f"{shown} twice; mount it under {'a' if namespace is None else 'another'} namespace: "
                "server.mount(child, namespace='...')"
            )
        methods = method_clashes(self.registry, child.registry)
        if methods:
            raise ValueError(
                f"mounting {child.name!r} would serve the method {methods[0]!r} twice (methods are not namespaced): "
                "serve it from one of the two servers"
            )
        if child.registry.middleware:
            import logging

            logging.getLogger("mcpio.server").warning(
                "server %r has middleware, which does not run for its items mounted in %r; register it on %r",
                child.name,
                getattr(self, "name", "?"),
                getattr(self, "name", "?"),
            )
        with self.late_mounts.lock:  # entered by a start under way, or held late: never neither (LateMounts.enter)
            catalog = self.changes.shaped()
            catalog.mounts.append(mount)
            if catalog not in child.registry.parents:  # once, however often it is mounted here: each
                child.registry.parents.append(catalog)  # change is told to all its mounts here at once
            catalog.rebuild()
            # serving already: its lifespan starts now, ends with this one's (failing to start: unmounted)
            self.late_mounts.add(child, lambda: catalog.unmount(mount))
        if self.registry.first_starts():  # its upstream, its lifespan now (late_mounts): requests wait for them
            self.registry.hold()

    @classmethod
    def proxy(
        cls,
        target: Any,
        *,
        name: str | None = None,
        round_timeout: float = ROUND_TIMEOUT,
        method_scopes: Mapping[str, Iterable[str]] | None = None,
        **client_options: Any,
    ) -> Server:
        """A server that serves what ``target`` serves (a URL, a command line, a ``.py`` file, a
        :class:`~mcpio.ServerSpec`): every list, call, read, prompt and completion, list_changed,
        progress, cancellation, and sampling/elicitation/roots asked during a call, forwarded.
        The upstream connects when the proxy starts serving and again after it dies.
        ``round_timeout``: seconds a call the upstream asked something during waits for its
        2026-07-28 client's next ``input_required`` round before the upstream call is cancelled.
        ``method_scopes``: the OAuth scopes a custom request it forwards needs over HTTP with auth,
        by method (``"*"``: every other custom method), as ``scopes=`` is for a tool.
        ``client_options`` go to its :class:`~mcpio.Client` (``headers``, ``auth``, ``env`` …).
        Guide: docs/guides/gateways.md."""
        from .._gateway import proxy

        return proxy(target, name=name, round_timeout=round_timeout, method_scopes=method_scopes, **client_options)

    @classmethod
    def from_config(
        cls,
        config: Any,
        *,
        name: str = "gateway",
        names: list[str] | None = None,
        round_timeout: float = ROUND_TIMEOUT,
        method_scopes: Mapping[str, Iterable[str]] | None = None,
        **client_options: Any,
    ) -> Server:
        """One server for every enabled entry of an ``mcpServers`` file (a path, or a host alias
        such as ``"claude"``), each proxied (``round_timeout``, ``method_scopes``: :meth:`proxy`'s)
        and mounted under its entry name; an entry's ``"tools": {"allow": [...], "deny": [...]}``
        chooses its tools. Guide: docs/guides/gateways.md."""
        from .._gateway import from_config

        return from_config(
            config, name=name, names=names, round_timeout=round_timeout, method_scopes=method_scopes, **client_options
        )

    def disable(self, names: str | Iterable[str] | None = None, *, tags: str | Iterable[str] | None = None) -> None:
        """Stop serving the tools, prompts and resources named (served names: ``math__add``, a
        URI or template) or carrying one of ``tags``; clients get ``list_changed``. Calls of a
        disabled tool get the unknown-tool error. A name may also be a custom method (an
        extension's ``acme/history``: this server's, a mounted one's, or on a proxy its
        upstream's): its requests get -32601. :meth:`enable` undoes it."""
        catalog = self.changes.shaped()
        catalog.disabled_names |= _names(names)
        catalog.disabled_tags |= _names(tags)
        catalog.rebuild()

    def enable(self, names: str | Iterable[str] | None = None, *, tags: str | Iterable[str] | None = None) -> None:
        """Serve again what :meth:`disable` stopped (by the same names or tags)."""
        catalog = self.changes.shaped()
        catalog.disabled_names -= _names(names)
        catalog.disabled_tags -= _names(tags)
        catalog.rebuild()

    def transform_tool(
        self,
        name: str,
        *,
        new_name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        args: dict[str, Arg] | None = None,
        tags: Iterable[str] | None = None,
    ) -> None:
        """Republish tool ``name`` (an own, mounted or proxied one, by its served name) with a
        new name, title, description, tags, or arguments renamed, re-described, defaulted or
        hidden (``args={"q": Arg(name="query", default="", hide=False)}``): a hidden argument
        takes its default and is absent from the input schema. The original name is no longer
        served. ValueError for a tool or argument that does not exist (nothing changes then)."""
        from ._catalog import Transform

        catalog = self.changes.shaped()
        # Judged against what would be served without a transform of ``name`` (transforming it
        # again replaces that one); nothing changes until it is judged good.
        others = {source: t for source, t in catalog.transforms.items() if source != name}
        tools, _ = catalog.made("tools", others)
        tool = tools.get(name)
        if tool is None:
            raise ValueError(f"transform_tool: no tool named {name!r} is served (call it with a name tools/list shows)")
        transform = Transform(
            name, new_name, title, description, dict(args or {}), None if tags is None else tags_of(tags)
        )
        made = transform.apply(tool)  # errors now, not at the next change
        if made.name != name and made.name in tools:
            raise ValueError(f"transform_tool: a tool named {made.name!r} is served already")
        catalog.transforms = {**others, name: transform}
        catalog.rebuild(("tools",))


def authorized(registry: Registry, kind: str, items: list[Any]) -> list[Any]:
    """``items`` of ``kind`` that the current request's token has the scopes for
    (``Server(hide_unauthorized=True)``); all of them without HTTP auth (no token to judge)."""
    import sys

    info_module = sys.modules.get("mcpio._auth._info")  # loaded by the HTTP auth guard only
    info = info_module.current() if info_module is not None else None
    return items if info is None else registry.permitted(kind, items, info.scopes)
