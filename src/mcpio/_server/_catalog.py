"""What a server serves, once it is shaped: mounted servers, disabled names and tags, transformed tools.

A plain server (none of these) has no :class:`Catalog`: the tables of its
:class:`~._registry.Registry` are what it registered, and ``add_*`` writes them directly. The
first ``mount``, ``disable`` or ``transform_tool`` gives it a Catalog, which keeps the server's
*own* registrations and makes the registry's served tables from them on every change:

    served = (every mounted child's served items, renamed by ``_naming``)
             + own items (an own item wins over a mounted one of the same name)
             → transforms (tools) → minus disabled names and tags

The served tables are flat dicts swapped in whole (a reader sees the old table or the new one,
never half of one), so serving a mounted tool costs the one lookup a plain server's does (spec:
no chaining through the child at call time). A child tells its parents when it changes (a tool
added later shows in the parent, with ``list_changed``), so mounting is live.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from .. import _log, _naming
from .._content import for_era
from ._apps import relinked
from ._registry import KINDS, NOTIFY, SCOPE_METHOD, Registry
from ._tools import Tool

if TYPE_CHECKING:
    from .._versions import Rules
    from ._changes import Changes
    from ._resources import Resource
    from ._server import Server

log = _log.logger("mcpio.server", globals())  # logging loads with a first record (a gateway answers before it)


_MISSING: Any = object()


class Arg(msgspec.Struct, frozen=True):  # a Struct, not a dataclass: dataclasses is not imported at start-up
    """How :meth:`Server.transform_tool` republishes one argument: a new ``name``, a new
    ``description``, a ``default`` (the argument becomes optional), or ``hide=True`` (absent from
    the input schema; the call always gets the default, the Arg's or the function's own)."""

    name: str | None = None
    description: str | None = None
    default: Any = _MISSING
    hide: bool = False


class Mount:
    __slots__ = ("child", "exclude", "include", "namespace")

    def __init__(
        self,
        child: Server,
        namespace: str | None,
        include: frozenset[str] | None = None,
        exclude: frozenset[str] = frozenset(),
    ) -> None:
        self.child = child
        self.namespace = namespace
        self.include = include  # the child's names (or URIs) served; None: all
        self.exclude = exclude

    def serves(self, key: str) -> bool:
        return key not in self.exclude and (self.include is None or key in self.include)

    def link(self, uri: str) -> str | None:
        """The URI the parent serves the child's resource ``uri`` under, or None: the child does not
        serve it (neither lists it nor matches it with a template, nor reads it unlisted, as a
        proxy reads its upstream's: ``Server.unlisted``, but an ``http(s)`` URI there: a link to
        the web, which the client opens itself), or this mount leaves it out."""
        child = self.child
        found = child.registry.find_resource(uri)
        if found is not None:
            key = found[0].uri  # the child's key: its URI or its template
        elif uri.partition(":")[0].lower() in ("http", "https") or child.unlisted(uri) is None:
            return None
        else:
            key = uri
        return self.key("resources", uri) if self.serves(key) else None

    def key(self, kind: str, key: str) -> str:
        """The parent's name (tools, prompts) or URI (resources, templates) of the child's ``key``."""
        ns = self.namespace
        if ns is None:
            return key
        return _naming.join_name(ns, key) if kind in ("tools", "prompts") else _naming.join_uri(ns, key)

    def rename_skill(self, skill: Any) -> Any:
        """The child's ``skill`` with every URI under this mount's namespace."""
        if self.namespace is None:
            return skill
        from ._skills import Skill

        return Skill(
            self.key("resources", skill.uri),
            skill.frontmatter,
            {self.key("resources", u): b for u, b in skill.files.items()},
        )

    def adopt(self, kind: str, key: str, item: Any) -> tuple[str, Any]:
        """The parent's key and copy of the child's served ``item`` (the child's own stays as it is)."""
        new_key = self.key(kind, key)
        item = copy.copy(item)
        # Whose handler it is: ctx.lifespan and completion ask that server (the innermost child).
        if item.owner is None:
            item.owner, item.source = self.child, key
        if kind == "tools":
            item.name = new_key
            item._definitions = {}
            if self.namespace is not None:  # MCP Apps: its view, as served here
                item.meta = relinked(item.meta, lambda uri: self.key("resources", uri))
        elif kind == "prompts":
            item.name = new_key
        else:
            from .._uritemplate import UriTemplate

            item.uri = new_key
            item.template = UriTemplate(new_key)
            if self.namespace is not None:
                item.namespaces = (self.namespace, *item.namespaces)
            return new_key, item
        if self.namespace is not None:  # the resource URIs in its results, as served here (Links)
            item.links = Links((self,) if item.links is None else (*item.links.mounts, self))
        return new_key, item


_WITH_LINKS: dict[str, Rules] = {}  # a version's rules with resource links (Links.made_under)


class Links:
    """The resource URIs in the results of a tool or prompt mounted under a namespace (a
    gateway's are), as the serving server names them: the URI of every ``resource_link`` block
    (2025-06-18+) and embedded ``resource`` block of a ``tools/call`` result's content and of a
    ``prompts/get`` result's messages that the child serves (:meth:`Mount.link`) becomes the one
    the parent serves it under, one mount after the other (a mount of a mount: innermost first),
    so a client reads it here with ``resources/read``; for a version without resource links the
    link is then the text ``_content.for_era`` makes of it. Only those blocks: other text,
    ``structuredContent`` and ``_meta`` are the tool's own and go as they are. A tool or prompt
    mounted without a namespace has none."""

    __slots__ = ("mounts",)

    def __init__(self, mounts: tuple[Mount, ...]) -> None:
        self.mounts = mounts  # innermost first

    def uri(self, uri: str) -> str:
        for mount in self.mounts:
            uri = mount.link(uri) or uri
        return uri

    @staticmethod
    def made_under(rules: Rules) -> Rules:
        """The rules a result is made under for :meth:`result`: with resource links, so that a link
        is a block to rewrite before :meth:`result` makes it the text of a version without them
        (``_content.for_era``), naming the URI served here (it named the child's)."""
        if rules.resource_links:
            return rules
        made = _WITH_LINKS.get(rules.version)
        if made is None:  # once per version
            made = _WITH_LINKS[rules.version] = msgspec.structs.replace(rules, resource_links=True)
        return made

    def result(self, result: dict[str, Any], rules: Rules) -> dict[str, Any]:
        """``result`` (a CallToolResult or GetPromptResult made under :meth:`made_under`) with its
        links as served here, in the shape of ``rules``' version: a copy where one changed, else
        ``result`` itself (a result without resource blocks costs a scan)."""
        era = None if rules.resource_links else rules  # a link rewritten goes as text (for_era)
        content = result.get("content")
        if type(content) is list:
            blocks = self.blocks(content, era)
            if blocks is not content:
                result = {**result, "content": blocks}
        messages = result.get("messages")
        if type(messages) is list:
            made = None
            for i, message in enumerate(messages):
                if type(message) is dict and "content" in message:
                    was = message["content"]
                    now = self.blocks(was, era) if type(was) is list else self.block(was, era)
                    if now is not was:
                        made = made or list(messages)
                        made[i] = {**message, "content": now}
            if made is not None:
                result = {**result, "messages": made}
        return result

    def blocks(self, blocks: list[Any], era: Rules | None = None) -> list[Any]:
        made = None
        for i, block in enumerate(blocks):
            now = self.block(block, era)
            if now is not block:
                made = made or list(blocks)
                made[i] = now
        return blocks if made is None else made

    def block(self, block: Any, era: Rules | None = None) -> Any:
        kind = block.get("type") if type(block) is dict else None
        if kind == "resource_link":
            uri = block.get("uri")
            if type(uri) is str and (now := self.uri(uri)) != uri:
                block = {**block, "uri": now}
        elif kind == "resource":
            inner = block.get("resource")
            uri = inner.get("uri") if type(inner) is dict else None
            if type(uri) is str and (now := self.uri(uri)) != uri:
                block = {**block, "resource": {**inner, "uri": now}}
        return block if era is None or kind is None else for_era(block, era)


class Catalog:
    """The shaping of one server (see the module docstring)."""

    def __init__(self, registry: Registry, changes: Changes) -> None:
        self.registry = registry  # whose served tables this catalog makes
        self.changes = changes  # the server's notifiers (list_changed, resources/updated)
        # The server's own registrations, taken over from its tables when it is first shaped.
        self.own: dict[str, dict[str, Any]] = {kind: dict(registry.table(kind)) for kind in KINDS}
        self.mounts: list[Mount] = []
        self.disabled_names: set[str] = set()
        self.disabled_tags: set[str] = set()
        self.transforms: dict[str, Any] = {}  # served tool name -> _Transform
        self.derived_scopes: dict[str, set[tuple[str, str]]] = {kind: set() for kind in KINDS}
        self.own_skills: dict[str, Any] = dict(registry.skills)  # SKILL.md URI -> Skill (the skills extension)

    def unmount(self, mount: Mount) -> None:
        """Serve ``mount`` no more (a child mounted while serving whose lifespan failed to start:
        ``_running.LateMounts``); its items leave, with ``list_changed``."""
        if mount not in self.mounts:
            return
        self.mounts.remove(mount)
        if all(other.child is not mount.child for other in self.mounts):
            mount.child.registry.parents.remove(self)
        self.rebuild()

    def rebuild(self, kinds: Iterable[str] = KINDS) -> None:
        """Make the served tables of ``kinds`` again and tell clients (``list_changed``)."""
        registry = self.registry
        served_scopes = registry.scopes
        notified: set[str] = set()
        for kind in kinds:
            table, scopes = self.made(kind, self.transforms)
            for derived in self.derived_scopes[kind]:
                served_scopes.pop(derived, None)
            served_scopes.update(scopes)
            self.derived_scopes[kind] = set(scopes)
            registry.swap(kind, table)  # swapped whole: a concurrent reader sees one table or the other
            notified.add(NOTIFY[kind])
        if "resources" in kinds:  # skills are resources too: their entries follow the same names
            skills = dict(self.own_skills)
            for mount in self.mounts:
                for uri, skill in mount.child.registry.skills.items():
                    skills.setdefault(mount.key("resources", uri), mount.rename_skill(skill))
            registry.skills = skills
        for notify in notified:
            self.changes.changed(notify)

    def made(
        self, kind: str, transforms: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[tuple[str, str], frozenset[str]]]:
        """The served table of ``kind`` with ``transforms`` (tools), and the scopes its items
        have by their served names here (those the own items were registered with aside)."""
        served_scopes = self.registry.scopes
        method = SCOPE_METHOD[kind]
        own = self.own[kind]
        table: dict[str, Any] = {}
        scopes: dict[tuple[str, str], frozenset[str]] = {}
        for mount in self.mounts:
            child = mount.child.registry
            for key, item in child.table(kind).items():
                if not mount.serves(key):
                    continue
                new_key, adopted = mount.adopt(kind, key, item)
                if new_key in own or new_key in table:
                    log.warning("%s %r is served twice; keeping the first", kind[:-1], new_key)
                    continue
                table[new_key] = adopted
                needed = child.scopes.get((method, key))
                if needed:
                    scopes[(method, new_key)] = needed
        table.update(own)
        if kind == "tools" and transforms:
            for source, transform in transforms.items():
                tool = table.pop(source, None)
                if tool is None:
                    continue
                try:
                    made = transform.apply(tool)
                except ValueError as exc:  # registered again since, without an argument the transform names
                    log.warning("tool %r is not served: it no longer fits its transform_tool (%s)", source, exc)
                    continue  # nor as it is: an argument the transform hides would be open to clients
                table[made.name] = made
                if (method, source) in served_scopes or (method, source) in scopes:
                    scopes[(method, made.name)] = scopes.get((method, source)) or served_scopes[(method, source)]
        if self.disabled_names or self.disabled_tags:
            table = {k: v for k, v in table.items() if not self.is_disabled(k, v)}
        return table, scopes

    def unlisted(self, uri: str) -> Resource | None:
        """A mounted child's resource it does not list (``Server.unlisted``, as a proxy reads its
        upstream's) at this server's ``uri``, as served here, or None. Never a URI that an own
        resource or template, or a child's listed one, serves (:meth:`owns`): what a mount's
        include/exclude or a disable leaves out is not served, listed or not."""
        if self.owns(uri):
            return None
        for mount in self.mounts:
            inner = uri if mount.namespace is None else _naming.strip_uri(uri, mount.namespace)
            if inner is None or not mount.serves(inner) or mount.child.registry.find_resource(inner) is not None:
                continue  # (a child's listed resource is served here as listed, unless left out)
            found = mount.child.unlisted(inner)
            if found is not None:
                key, adopted = mount.adopt("resources", inner, found)
                if not self.is_disabled(key, adopted):
                    return adopted  # type: ignore[no-any-return]
        return None

    def owns(self, uri: str) -> bool:
        """Whether one of this server's own resources or templates, served or disabled, is ``uri``'s:
        it is read as that item (when served), never as an unlisted resource."""
        if uri in self.own["resources"]:
            return True
        return any(t.match(uri) is not None for t in self.own["templates"].values())

    async def child_updated(self, child: Registry, uri: str, turn: str | None) -> None:
        """``child``'s resource ``uri`` was updated: tell this server's subscribers, under each URI
        this server serves it by (one per mount of it); ``turn``: :meth:`Changes.resource_updated`."""
        for m in self.mounts:
            if m.child.registry is child and m.serves(uri):
                await self.changes.resource_updated(m.key("resources", uri), turn)

    def is_disabled(self, key: str, item: Any) -> bool:
        return key in self.disabled_names or not self.disabled_tags.isdisjoint(item.tags)


class PublishedSignature:
    """A transformed tool's signature as its clients know it (:attr:`Tool.sig` of a
    :class:`TransformedTool`): ``bind`` checks the arguments by their published names (an
    unknown one, a missing required one) and names them so in every error, then maps them to the
    function's (renamed back, hidden ones set: a client's value for one is dropped, published
    defaults filled in) for the original signature to bind. Everything else is the original's."""

    def __init__(
        self,
        sig: Any,
        name: str,
        schema: dict[str, Any],
        renames: dict[str, str],
        fixed: dict[str, Any],
        defaults: dict[str, Any],
    ) -> None:
        self.sig, self.name = sig, name
        self.published: list[str] = list(schema.get("properties", {}))
        self.required: list[str] = list(schema.get("required", []))
        self.renames, self.fixed, self.defaults = renames, fixed, defaults  # published -> function's; by function's
        self.names = {param: published for published, param in renames.items()}  # function's -> published

    def __getattr__(self, attr: str) -> Any:  # injected, is_async, output_schema, to_structured …
        return getattr(self.sig, attr)

    def bind(self, arguments: Any, copy: bool = True) -> dict[str, Any]:
        from .._schema import ArgumentError, UnknownArguments
        from .._schema_errors import json_type, rename_argument, unknown

        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            raise ArgumentError(f"expected an object, got {json_type(arguments)}", self.name)
        published, renames, fixed = self.published, self.renames, self.fixed
        extra = {k: v for k, v in arguments.items() if k not in published and k not in fixed}
        if extra:
            raise UnknownArguments(unknown(extra, published), self.name)
        for name in self.required:
            if name not in arguments:
                raise ArgumentError(f"{name!r} is required", self.name)
        out: dict[str, Any] = {renames.get(k, k): v for k, v in arguments.items() if k in published}
        for param, value in fixed.items():  # hidden (never a published name's function name)
            if value is not _MISSING:  # else the function's own default
                out[param] = value
        for param, value in self.defaults.items():
            out.setdefault(param, value)
        try:
            return self.sig.bind(out, copy)  # type: ignore[no-any-return]
        except ArgumentError as exc:  # named as the client knows them
            raise type(exc)(rename_argument(exc.detail, self.names), self.name) from None


class Transform:
    """A tool republished by :meth:`Server.transform_tool`."""

    def __init__(
        self,
        source: str,
        new_name: str | None,
        title: str | None,
        description: str | None,
        args: dict[str, Arg],
        tags: frozenset[str] | None,
    ) -> None:
        for name, arg in args.items():
            if not isinstance(arg, Arg):
                raise TypeError(f"transform_tool({source!r}): args[{name!r}] must be an mcpio.Arg, not {arg!r}")
        self.source, self.new_name, self.title, self.description = source, new_name, title, description
        self.args, self.tags = args, tags

    def apply(self, tool: Tool) -> Tool:
        """A copy of ``tool`` with the new name, description and arguments."""
        schema = copy.deepcopy(tool.input_schema)
        props: dict[str, Any] = schema.setdefault("properties", {})
        required: list[str] = list(schema.get("required", []))
        renames: dict[str, str] = {}  # published name -> the function's
        fixed: dict[str, Any] = {}  # hidden: the function's name -> the value every call gets
        defaults: dict[str, Any] = {}  # the function's name -> the value when the call omits it
        for name, arg in self.args.items():
            if name not in props:
                known = ", ".join(sorted(props)) or "none"
                raise ValueError(
                    f"transform_tool({self.source!r}): the tool has no argument {name!r} (it has: {known})"
                )
            prop = props.pop(name)
            is_required = name in required
            if is_required:
                required.remove(name)
            if arg.hide:
                if arg.default is not _MISSING:
                    fixed[name] = arg.default
                elif is_required:
                    raise ValueError(
                        f"transform_tool({self.source!r}): argument {name!r} is required; give it a default "
                        f"to hide it: Arg(hide=True, default=...)"
                    )
                else:  # the function's own default, whatever a client sends
                    fixed[name] = _MISSING
                continue
            published = arg.name or name
            if published in props:
                raise ValueError(f"transform_tool({self.source!r}): argument {published!r} exists already")
            if arg.description is not None:
                prop = {**prop, "description": arg.description}
            if arg.default is not _MISSING:
                prop = {**prop, "default": arg.default}
                defaults[name] = arg.default
            elif is_required:
                required.append(published)
            renames[published] = name
            props[published] = prop
        if required:
            schema["required"] = required
        else:
            schema.pop("required", None)
        name = self.new_name or tool.name
        made = TransformedTool.of(tool, schema, PublishedSignature(tool.sig, name, schema, renames, fixed, defaults))
        made.name = name
        if self.title is not None:
            made.title = self.title
        if self.description is not None:
            made.description = self.description
        if self.tags is not None:
            made.tags = self.tags
        return made


class TransformedTool(Tool):
    """A tool republished with other argument names, defaults or hidden arguments: its
    :class:`PublishedSignature` binds a call's arguments for the original tool's function."""

    @classmethod
    def of(cls, tool: Tool, input_schema: dict[str, Any], sig: PublishedSignature) -> TransformedTool:
        made = cls.__new__(cls)
        made.__dict__.update(tool.__dict__)
        made.__dict__.pop("param_headers", None)  # made again from the new schema when read
        made.input_schema = input_schema
        made._definitions = {}
        made.sig = sig  # type: ignore[assignment]  # the same duck as the original's
        return made
