"""Resources (static URIs and RFC 6570 templates) and prompts: definitions and handlers.

A resource function's return value becomes ``contents``: str → text (``mime_type`` or
text/plain), bytes → base64 blob (or application/octet-stream), an
:class:`~mcpio.EmbeddedResource` or a contents dict passes through, a list of those → several
contents; anything else → its JSON as application/json. Template variables are matched by
``_uritemplate`` and converted to the parameter types by the signature (``{id}`` with
``id: int`` gets an int; a value that does not convert is "not found", not a crash).

Template variables refuse values with ``/``, ``\\``, ``..`` or NUL (the rules of
``_uritemplate``: such a URI is "not found") unless the parameter is declared a path with
``Annotated[str, PathParam]``; a :class:`~mcpio.SafePathError` raised by the function (a path
outside its SafePath roots) is "not found" too, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin

from .._content import CONTENT_TYPES, EmbeddedResource, b64, cut_annotations, json_text, to_blocks
from .._errors import InvalidParams, ResourceNotFound, SafePathError
from .._schema import ArgumentError, analyze_function, prompt_arguments
from .._versions import Rules
from ._context import Context
from ._tools import injected, invoke


def _meta_fields(
    d: dict[str, Any],
    rules: Rules,
    title: str | None,
    icons: list[dict[str, Any]] | None,
    annotations: dict[str, Any] | None,
    meta: dict[str, Any] | None,
) -> None:
    """Add the optional members ``rules.version`` has: title and _meta (2025-06-18+), icons
    (2025-11-25+), annotations (always; ``lastModified`` in them from 2025-06-18)."""
    if title is not None and rules.titles:
        d["title"] = title
    annotations = cut_annotations(annotations, rules)
    if annotations:
        d["annotations"] = annotations
    if icons and rules.icons:
        d["icons"] = icons
    if meta and rules.titles:
        d["_meta"] = meta


_SCHEME = r"^[A-Za-z][A-Za-z0-9+.-]*:"  # RFC 3986 §3.1: a URI starts with its scheme


def check_uri(uri: Any) -> None:
    """Refuse what cannot be a resource's URI (or URI template) at registration: a function
    (``@server.resource`` without its URI), a non-string, a string without a scheme."""
    import re

    if callable(uri) and not isinstance(uri, str):
        name = getattr(uri, "__name__", "fn")
        raise TypeError(
            f'@server.resource needs the resource\'s URI: write @server.resource("notes://{name}") '
            f'above def {name}(...) (or a template such as "notes://{{id}}")'
        )
    if not isinstance(uri, str) or not re.match(_SCHEME, uri):
        raise ValueError(
            f'resource URI {uri!r}: a URI starts with its scheme, such as "notes://all" or "file:///a.txt"'
        )


class Resource:
    """A static resource (fixed URI) or a resource template (URI with ``{variables}``)."""

    # Catalog shaping (_catalog): the item's tags; for an item mounted from another server, that
    # server (whose lifespan value and completer serve it) and the item's name or URI there, and
    # the namespaces its URI gained by mounting, outermost first.
    tags: frozenset[str] = frozenset()
    owner: Any = None
    source: str | None = None
    namespaces: tuple[str, ...] = ()

    def __init__(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        ttl_ms: int | None = None,
        cache_scope: str | None = None,
    ) -> None:
        if (ttl_ms is not None and ttl_ms < 0) or cache_scope not in (None, "public", "private"):
            raise ValueError(f"resource {uri!r}: ttl_ms must be >= 0 and cache_scope 'public' or 'private'")
        self.ttl_ms = ttl_ms  # 2026-07-28 caching hints for resources/read (None: the server's)
        self.cache_scope = cache_scope
        check_uri(uri)
        self.fn = fn
        self.uri = uri
        from .._uritemplate import UriTemplate  # with the first resource, not at start-up

        self.template = UriTemplate(uri)
        self.sig = analyze_function(fn, injected=injected(), content_types=CONTENT_TYPES)
        if self.sig.provided:  # Depends(...) parameters (_deps)
            from ._deps import wrap

            self.fn, self.sig = wrap(fn, self.sig, uri, False)
        params = {p.name for p in self.sig.parameters}
        if self.template.is_template:
            missing = set(self.template.variables) - params
            if missing:
                raise TypeError(
                    f"resource template {uri!r}: function {self.sig.name}() has no parameter for "
                    f"{', '.join(sorted(missing))}; add one per template variable"
                )
        elif any(p.required for p in self.sig.parameters):
            raise TypeError(f"static resource {uri!r}: function {self.sig.name}() must not need arguments")
        self.path_params = frozenset(p.name for p in self.sig.parameters if _is_path(p.annotation))
        self.name = name or self.sig.name
        self.title = title
        self.description = description or self.sig.description
        self.mime_type = mime_type
        self.size = size
        self.annotations = annotations
        self.icons = icons
        self.meta = meta

    @property
    def is_template(self) -> bool:
        return self.template.is_template

    def definition(self, rules: Rules) -> dict[str, Any]:
        key = "uriTemplate" if self.is_template else "uri"
        d: dict[str, Any] = {key: self.uri, "name": self.name}
        _meta_fields(d, rules, self.title, self.icons, self.annotations, self.meta)
        if self.description:
            d["description"] = self.description
        if self.mime_type:
            d["mimeType"] = self.mime_type
        if self.size is not None and not self.is_template:
            d["size"] = self.size
        return d

    def match(self, uri: str) -> dict[str, Any] | None:
        """Arguments for ``uri`` (converted to the parameter types), or None if it does not match."""
        if not self.is_template:
            return {} if uri == self.uri else None
        raw = self.template.match(uri, self.path_params)
        if raw is None:
            return None
        try:
            return self.sig.bind(raw)
        except ArgumentError:
            return None

    async def subscribed(self, uri: str, on: bool) -> None:
        """A client subscribed to ``uri`` (``on``) or left (not ``on``): nothing to do for a
        resource served here; a forwarded one subscribes upstream (``mcpio._gateway``)."""

    async def read(self, uri: str, kwargs: dict[str, Any], ctx: Context | None) -> list[dict[str, Any]]:
        try:
            value = await invoke(self.sig, self.fn, kwargs, ctx, owner=self.owner)
        except (SafePathError, ResourceNotFound) as exc:
            # a path outside the function's SafePath roots, or its own ``raise ResourceNotFound(...)``
            raise not_found(uri, exc, ctx) from None
        return self.contents(uri, value)

    def contents(self, uri: str, value: Any) -> list[dict[str, Any]]:
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, (EmbeddedResource, dict)) for v in value):
            return [self._one(uri, v) for v in value]
        return [self._one(uri, value)]

    def _one(self, uri: str, value: Any) -> dict[str, Any]:
        if isinstance(value, EmbeddedResource):
            return value.contents()
        if isinstance(value, dict) and "uri" in value and ("text" in value or "blob" in value):
            return value
        if isinstance(value, str):
            return {"uri": uri, "mimeType": self.mime_type or "text/plain", "text": value}
        if isinstance(value, (bytes, bytearray, memoryview)):
            return {"uri": uri, "mimeType": self.mime_type or "application/octet-stream", "blob": b64(bytes(value))}
        return {"uri": uri, "mimeType": self.mime_type or "application/json", "text": json_text(value)}


def _is_path(annotation: Any) -> bool:
    """``Annotated[str, PathParam]`` (also inside ``Optional``)."""
    from .._safepath import PathParam  # with the first template, not at start-up

    if get_origin(annotation) is Annotated:
        return any(m is PathParam for m in get_args(annotation)[1:])
    return any(_is_path(a) for a in get_args(annotation))


def not_found(uri: str, exc: SafePathError | ResourceNotFound, ctx: Context | None) -> ResourceNotFound:
    """The answer to a read of ``uri`` that ``exc`` says is not found, whoever says so (a resource
    function, its SafePath roots, a proxy's upstream): the era's code (legacy -32002, 2026-07-28
    -32602) and the URI read, whatever ``exc`` gave."""
    rules = ctx.rules if ctx is not None else None
    said = (exc.message, f"Resource not found: {exc.uri}") if isinstance(exc, ResourceNotFound) else (str(exc), "")
    reason = "" if said[0] in (said[1], "Resource not found") else f" ({said[0]})"
    code = rules.resource_not_found_code if rules is not None else None
    return ResourceNotFound(uri, f"Resource not found: {uri}{reason}", code=code)


class Prompt:
    """A prompt template: arguments from the signature, messages from the return value."""

    # Catalog shaping (_catalog): the item's tags; for an item mounted from another server, that
    # server (whose lifespan value and completer serve it) and the item's name or URI there, and
    # (mounted under a namespace) the ``_catalog.Links`` that name its results' resources as served here.
    tags: frozenset[str] = frozenset()
    owner: Any = None
    source: str | None = None
    links: Any = None

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.fn = fn
        self.sig = analyze_function(fn, injected=injected(), content_types=CONTENT_TYPES, name=name)
        if self.sig.provided:  # Depends(...) parameters (_deps)
            from ._deps import wrap

            self.fn, self.sig = wrap(fn, self.sig, self.sig.name, False)
        self.name = name or self.sig.name
        self.title = title
        self.description = description or self.sig.description
        self.icons = icons
        self.meta = meta
        self.arguments = prompt_arguments(self.sig)

    def definition(self, rules: Rules) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        _meta_fields(d, rules, self.title, self.icons, None, self.meta)
        if self.description:
            d["description"] = self.description
        if self.arguments:
            d["arguments"] = self.arguments
        return d

    async def render(self, arguments: Any, ctx: Context, rules: Rules) -> dict[str, Any]:
        try:
            kwargs = self.sig.bind(arguments)
        except ArgumentError as exc:
            raise InvalidParams(str(exc)) from None
        value = await invoke(self.sig, self.fn, kwargs, ctx, owner=self.owner)
        result: dict[str, Any] = {}
        if self.description:
            result["description"] = self.description
        result["messages"] = _messages(value, rules)
        return result


class Message:
    """One prompt message: ``Message("assistant", "text")`` or with content helpers."""

    __slots__ = ("content", "role")

    def __init__(self, role: str, content: Any) -> None:
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', not {role!r}")
        self.role = role
        self.content = content


def _messages(value: Any, rules: Rules) -> list[dict[str, Any]]:
    items = value if isinstance(value, (list, tuple)) else [value]
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Message):
            role, content = item.role, item.content
        elif isinstance(item, dict) and "role" in item and "content" in item:
            role, content = item["role"], item["content"]
        else:
            role, content = "user", item
        for block in to_blocks(content, rules) if not (isinstance(content, dict) and "type" in content) else [content]:
            out.append({"role": role, "content": block})
    return out
