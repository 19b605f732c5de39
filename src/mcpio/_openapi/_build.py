"""``Server.from_openapi`` / ``Server.from_fastapi``: a Server whose tools are an API's operations.

Each operation the ``route_map`` keeps becomes a tool registered through the server's public path
(``server.add_tool(Tool.from_schema(...))``), its HTTP request made by :class:`._call.Caller`; a
GET the ``route_map`` sends to ``"resource"`` becomes a resource (or an RFC 6570 resource template
when it has parameters: ``{id}`` path parameters, ``{?q,limit}`` query parameters) whose read makes
the request. Operations that cannot be served are skipped, each logged with its reason
(``mcpio doctor --openapi`` lists them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from .. import _log
from .._server._server import Server
from .._server._tools import NAME_PROBLEM, NAME_RULE, Tool
from .._shown import shown
from ._call import Caller, Credentials, api_client, on_a_thread
from ._load import TOO_DEEP, OpenAPIError, load
from ._operations import Converted, Operation, convert
from ._schemas import obj

log = _log.logger("mcpio.openapi", globals())

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
_KINDS = ("tool", "resource", "skip")
# Headers that carry credentials by definition (RFC 9110 §11.6.2, §11.7.2; RFC 6265 §5.4): never public_headers=
_CREDENTIAL_HEADERS = frozenset(("authorization", "proxy-authorization", "cookie"))

RouteMap = Mapping[str, str] | Callable[[Operation], str]


def _route(route_map: RouteMap | None, op: Operation) -> str:
    """ "tool", "resource" or "skip" for ``op``: by operationId, "METHOD /path" or "METHOD" in a mapping, or a function's answer."""
    if route_map is None:
        return "tool"
    if callable(route_map):
        kind = route_map(op)
    else:
        kind = route_map.get(op.operation_id or "") or route_map.get(op.label) or route_map.get(op.method) or "tool"
    if kind not in _KINDS:
        raise OpenAPIError(f"route_map sends {op.label} to {kind!r}; use one of {', '.join(_KINDS)}")
    if kind == "resource" and op.method != "GET":
        raise OpenAPIError(f"route_map sends {op.label} to a resource; only GET operations can be resources")
    return kind


def analyze(
    spec: Any,
    *,
    names: Mapping[str, str] | None = None,
    route_map: RouteMap | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[dict[str, Any], str, Converted, dict[str, str]]:
    """(document, where it came from (:func:`.load`'s), the conversion, each served operation's
    kind by tool name)."""
    for key, wanted in (names or {}).items():  # checked here: registration's error would say "pass name=…"
        if not isinstance(wanted, str) or not re.match(NAME_RULE, wanted):
            raise OpenAPIError(f"names= renames {key!r} to {wanted!r}: {NAME_PROBLEM}")
    doc, where = load(spec, timeout)
    kinds: dict[int, str] = {}

    def include(op: Operation) -> bool:
        kinds[id(op)] = kind = _route(route_map, op)
        return kind != "skip"

    try:
        converted = convert(doc, names, include)
    except RecursionError:  # a dict passed in, or YAML nested within what its parser takes
        raise OpenAPIError(f"{shown(where)}: {TOO_DEEP}") from None
    return doc, where, converted, {op.name: kinds[id(op)] for op in converted.operations}


def server_url(doc: dict[str, Any], where: str) -> str | None:
    """The first ``servers`` entry with its variables' defaults, resolved against ``where`` (a URL)."""
    servers = doc.get("servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], dict):
        url = "/"
    else:
        url = str(servers[0].get("url") or "/")
        for var, spec in (servers[0].get("variables") or {}).items():
            if isinstance(spec, dict) and "default" in spec:
                url = url.replace("{" + var + "}", str(spec["default"]))
    if url.startswith(("http://", "https://")):
        return url
    if where.startswith(("http://", "https://")):
        return urljoin(where, url)
    return None


def _check_base(base: str, what: str) -> None:
    """An http(s) URL with a host and no ``{variable}`` left (a server variable without a default),
    checked once here rather than failing every call."""
    parts = urlsplit(base)
    if "{" in base or "}" in base:
        raise OpenAPIError(
            f"{what} {shown(base)!r} has a {{variable}} without a default; pass base_url= (--base-url) with the API's root URL"
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OpenAPIError(
            f"{what} {shown(base)!r} is not an http(s) URL with a host; pass the API's root URL, such as https://api.example.com"
        )


def from_openapi(
    spec: Any,
    *,
    base_url: str | None = None,
    client: Any = None,
    headers: Mapping[str, str] | None = None,
    public_headers: Iterable[str] = (),
    secrets: Mapping[str, str] | None = None,
    credentials: Callable[[Any], Any] | None = None,
    route_map: RouteMap | None = None,
    names: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    output_schemas: bool = True,
    name: str | None = None,
    version: str | None = None,
    **server_options: Any,
) -> Server:
    """An MCP server whose tools call the HTTP API ``spec`` describes (docs/guides/openapi.md)."""
    if client is None:  # every call makes a request with httpx: refused now, not at each call
        from importlib.machinery import PathFinder  # looks on sys.path; importing is left to the first call

        if PathFinder.find_spec("httpx") is None:
            raise ModuleNotFoundError(
                "Server.from_openapi needs httpx to call the API: pip install 'mcpio[openapi]'", name="httpx"
            )
    public = frozenset(h.lower() for h in ([public_headers] if isinstance(public_headers, str) else public_headers))
    if always := sorted(public & _CREDENTIAL_HEADERS):
        raise OpenAPIError(f"public_headers= names {', '.join(always)}: a credential's header, always redacted")
    doc, where, converted, kinds = analyze(spec, names=names, route_map=route_map, timeout=timeout)
    base = base_url or server_url(doc, where)  # resolved against the URL as given, shown without credentials
    if base is None:
        raise OpenAPIError(
            f"{shown(where)}: its servers URL is relative or missing, so the API's address is unknown; pass base_url= "
            "(--base-url) with the API's root URL"
        )
    _check_base(base, "base_url" if base_url else f"{shown(where)}: its servers URL")
    info = obj(doc.get("info"))
    server = Server(
        name or str(info.get("title") or "openapi"),
        version or str(info.get("version") or "0.1.0"),
        **({"description": info["description"]} if isinstance(info.get("description"), str) else {}),
        **server_options,
    )

    def make_client() -> Any:  # on a thread of its own (Caller): what it loads, no request waits for
        client = api_client(timeout)
        import anyio  # httpx's: the first request imports its asyncio backend (20-40 ms on the loop), ...

        anyio.run(anyio.lowlevel.checkpoint)  # ... which running anyio once here imports instead
        return client

    caller = Caller(
        base,
        client=client,
        make_client=make_client,
        headers=headers,
        credentials=Credentials(doc, secrets, os.environ),
        auth_hook=credentials,
        max_response_bytes=max_response_bytes,
        timeout=timeout,
        public_headers=public,
    )
    for label, reason in converted.skipped:
        log.warning("skipped %s: %s", label, reason)
    for op in converted.operations:
        if not output_schemas:  # an API that answers outside its document: plain text results
            op.output_schema, op.wrap_output = None, False
        if kinds[op.name] == "resource":
            from ._resources import add_resource

            if add_resource(server, op, caller, shown(base)):  # a URI names, it does not log in
                continue
            log.warning("%s stays a tool: its header or cookie parameters cannot be part of a URI", op.label)
        server.add_tool(_tool(op, caller))
    return server


async def from_openapi_async(spec: Any, **options: Any) -> Server:
    """:func:`from_openapi` in a coroutine: run on a thread of its own (the download on an event
    loop of its own there, the reading and converting too: GitHub's 13 MB document is seconds of
    CPU), so no task on the running loop waits for it; not on the loop's default executor, which
    the application's ``to_thread`` calls may hold whole. Cancelled, it returns at once; the
    thread ends by ``timeout``."""
    import asyncio

    server: Server = await on_a_thread(asyncio.get_running_loop(), lambda: from_openapi(spec, **options), "load")
    return server


def _tool(op: Operation, caller: Caller) -> Tool:
    async def call(arguments: dict[str, Any], ctx: Any) -> Any:
        return await caller.call(op, arguments, ctx)

    summary = op.raw.get("summary")
    read_only = op.method in ("GET", "HEAD", "OPTIONS")
    annotations: dict[str, Any] = {"readOnlyHint": read_only, "openWorldHint": True}
    if not read_only:
        annotations["destructiveHint"] = op.method == "DELETE"
        annotations["idempotentHint"] = op.method in ("PUT", "DELETE")
    if isinstance(summary, str) and summary.strip():
        annotations["title"] = summary.strip()[:200]
    return Tool.from_schema(
        call,
        name=op.name,
        input_schema=op.input_schema,
        output_schema=op.output_schema,
        description=op.description,
        annotations=annotations,
    )


def from_fastapi(app: Any, *, base_url: str = "http://fastapi", **options: Any) -> Server:
    """:func:`from_openapi` of a FastAPI (or any ASGI app with ``openapi()``) app's own document,
    its requests sent to the app in-process (httpx's ASGI transport: no network, no port)."""
    openapi = getattr(app, "openapi", None)
    if not callable(openapi):
        raise TypeError(f"from_fastapi takes a FastAPI app (with .openapi()), not {type(app).__name__}")
    import httpx

    timeout = options.pop("timeout", DEFAULT_TIMEOUT)
    client = options.pop("client", None) or api_client(timeout, transport=httpx.ASGITransport(app=app))
    options.setdefault("name", getattr(app, "title", None))
    return from_openapi(openapi(), base_url=base_url, client=client, timeout=timeout, **options)


__all__ = ["OpenAPIError", "analyze", "from_fastapi", "from_openapi", "from_openapi_async"]
