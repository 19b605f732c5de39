"""MCP Apps on the server (``io.modelcontextprotocol/ui``, ext-apps specification 2026-01-26).

A tool may come with an interactive HTML view that the host renders in a sandboxed iframe:

* ``server.ui_resource("ui://weather/view", html=..., connect_domains=[...])`` (or ``file=``)
  serves a *UI resource*: mimeType ``text/html;profile=mcp-app``, its ``_meta.ui`` (``csp``:
  connect/resource/frame/base-uri domains; ``permissions``; ``domain``; ``prefersBorder``) both
  on the ``resources/list`` entry and on the ``resources/read`` contents (§UI Resource Format);
* ``@server.app_tool(view="ui://weather/view")`` registers a tool whose definition carries
  ``_meta.ui.resourceUri`` and ``visibility`` (default ``["model", "app"]``; ``["app"]``: a tool
  only the view calls, §Visibility);
* both declare the extension ``io.modelcontextprotocol/ui`` (advertised in ``server/discover``).

A host that does not support apps sees plain tools (§Graceful Degradation): a tool's result is
its content, as always — the spec requires every UI tool to return meaningful ``content``
(``mcpio doctor`` checks it). A tool whose visibility lacks ``"model"`` is left out of
``tools/list`` for a client that did not declare the extension (legacy: at initialize;
2026-07-28: in the request's client capabilities), since such a host would show it to the
model; it stays callable by name. Tool and contents ``_meta`` exist from 2025-06-18: older
versions get the tools and the HTML without it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .._versions import UI_EXTENSION, UI_MIME_TYPE
from ._context import Context

if TYPE_CHECKING:
    from ._resources import Resource
    from ._server import Server
    from ._tools import Tool

PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
# An origin of a view's CSP (§UI Resource Format: McpUiResourceCsp) as one CSP host source: a
# scheme, a host (a leading "*." allowed), a port or ":*", a path; no quote, space, comma or
# semicolon, so it cannot add a keyword or a directive to a host's policy. The inspector keeps
# only these (``_inspect._sandbox``).
CSP_SOURCE = r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:(\d{1,5}|\*))?(/[^\s;,'\"]*)?$"
VISIBILITIES = ("model", "app")


def declare(server: Any) -> None:
    """Declare the extension (once; no server settings are defined by the spec)."""
    if UI_EXTENSION not in server.registry.extensions:
        server.extension(UI_EXTENSION)


def client_supports_apps(ctx: Context) -> bool:
    """Whether the client declared MCP Apps with the HTML profile (§Client (Host) Capabilities:
    ``mimeTypes`` is required; a declaration without it is taken as the HTML profile)."""
    settings = ctx.client_extension(UI_EXTENSION)
    if settings is None:
        return False
    mimes = settings.get("mimeTypes")
    return not isinstance(mimes, list) or UI_MIME_TYPE in mimes


def ui_meta(
    *,
    connect_domains: Sequence[str] | None = None,
    resource_domains: Sequence[str] | None = None,
    frame_domains: Sequence[str] | None = None,
    base_uri_domains: Sequence[str] | None = None,
    permissions: Iterable[str] = (),
    domain: str | None = None,
    prefers_border: bool | None = None,
) -> dict[str, Any]:
    """The ``_meta.ui`` object of a UI resource (``UIResourceMeta``); empty members left out."""
    csp = {
        key: _origins(option, value)
        for key, option, value in (
            ("connectDomains", "connect_domains", connect_domains),
            ("resourceDomains", "resource_domains", resource_domains),
            ("frameDomains", "frame_domains", frame_domains),
            ("baseUriDomains", "base_uri_domains", base_uri_domains),
        )
        if value
    }
    ui: dict[str, Any] = {}
    if csp:
        ui["csp"] = csp
    perms = list(permissions)
    unknown = [p for p in perms if p not in PERMISSIONS]
    if isinstance(permissions, str) or unknown:
        raise ValueError(f"permissions takes a list of {', '.join(PERMISSIONS)}; not {unknown or permissions!r}")
    if perms:
        ui["permissions"] = {p: {} for p in perms}
    if domain is not None:
        if not isinstance(domain, str) or not domain:
            raise TypeError(f"domain takes the host's name for the view's origin (a string), not {domain!r}")
        ui["domain"] = domain
    if prefers_border is not None:
        if not isinstance(prefers_border, bool):
            raise TypeError(f"prefers_border takes True or False, not {prefers_border!r}")
        ui["prefersBorder"] = prefers_border
    return ui


def _origins(option: str, value: Sequence[str]) -> list[str]:
    import re  # with the first view that declares origins

    if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
        raise TypeError(f"{option} takes a list of origins such as ['https://api.example.com'], not {value!r}")
    bad = [v for v in value if not re.fullmatch(CSP_SOURCE, v)]
    if bad:
        raise ValueError(
            f"{option} takes origins such as 'https://api.example.com' or 'https://*.example.com', one per entry; "
            f"not {bad[0]!r}"
        )
    return list(value)


def ui_resource(
    server: Server,
    uri: str,
    html: str | None = None,
    *,
    file: str | os.PathLike[str] | None = None,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    **options: Any,
) -> Resource:
    """Serve the view ``uri`` (``ui://…``) from ``html`` or from ``file`` (read at each
    ``resources/read``, so edits show without a restart). ``options``: those of :func:`ui_meta`
    (``connect_domains``, ``resource_domains``, ``frame_domains``, ``base_uri_domains``,
    ``permissions``, ``domain``, ``prefers_border``) and ``scopes`` as for any resource."""
    if not isinstance(uri, str) or not uri.startswith("ui://") or "{" in uri:
        raise ValueError(f"a UI resource URI must start with 'ui://' and name one view, not {uri!r} (MCP Apps)")
    if (html is None) == (file is None):
        raise TypeError(f"ui_resource({uri!r}): give the view's HTML as html= or file=, exactly one")
    scopes = options.pop("scopes", None)
    meta = {"ui": ui_meta(**options)}
    path = os.fspath(file) if file is not None else None
    if path is not None and not os.path.isfile(path):
        raise ValueError(f"ui_resource({uri!r}): {path!r} is not a file")

    def read() -> dict[str, Any]:
        if path is not None:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        else:
            text = html or ""
        out: dict[str, Any] = {"uri": uri, "mimeType": UI_MIME_TYPE, "text": text}
        if meta["ui"]:
            out["_meta"] = meta
        return out

    read.__name__ = name or uri.removeprefix("ui://").replace("/", "_") or "view"
    declare(server)
    return server.add_resource(
        read,
        uri,
        name=name,
        title=title,
        description=description,
        mime_type=UI_MIME_TYPE,
        meta=meta if meta["ui"] else None,
        scopes=scopes,
    )


def app_tool(server: Server, fn: Callable[..., Any], view: str, **options: Any) -> Callable[..., Any]:
    """Register ``fn`` as a tool linked to ``view`` (``_meta.ui.resourceUri``); ``visibility``
    (default ``("model", "app")``) and the options of ``server.tool`` (``meta`` merged)."""
    if not isinstance(view, str) or not view.startswith("ui://"):
        raise ValueError(f"app_tool: view must be a 'ui://' resource URI, not {view!r}")
    raw = options.pop("visibility", VISIBILITIES)
    visibility = [raw] if isinstance(raw, str) else list(raw)
    if isinstance(raw, str) or not visibility or any(v not in VISIBILITIES for v in visibility):
        raise ValueError(f"app_tool: visibility takes a non-empty list of 'model' and 'app', not {visibility!r}")
    meta = dict(options.pop("meta", None) or {})
    meta["ui"] = {**meta.get("ui", {}), "resourceUri": view, "visibility": visibility}
    declare(server)
    server.add_tool(fn, meta=meta, **options)
    return fn


def relinked(meta: dict[str, Any] | None, rename: Callable[[str], str]) -> dict[str, Any] | None:
    """A tool's ``meta`` with its view's URI renamed by ``rename`` (a mount's namespace): in
    ``ui.resourceUri`` and in the deprecated flat ``ui/resourceUri`` (§Resource Discovery; the
    ext-apps SDK sends both), whichever is a string; anything else is left as it is."""
    if not meta:
        return meta
    out = dict(meta)
    ui = out.get("ui")
    if isinstance(ui, dict) and isinstance(ui.get("resourceUri"), str):
        out["ui"] = {**ui, "resourceUri": rename(ui["resourceUri"])}
    if isinstance(out.get("ui/resourceUri"), str):
        out["ui/resourceUri"] = rename(out["ui/resourceUri"])
    return out


def app_only(tool: Tool) -> bool:
    """A tool whose ``_meta.ui.visibility`` lacks ``"model"``: for the view alone."""
    ui = (tool.meta or {}).get("ui")
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return isinstance(visibility, list) and "model" not in visibility


def model_tools(ctx: Context, tools: list[Any]) -> list[Any]:
    """``tools`` as ``tools/list`` shows them to this client: without the app-only ones unless it
    declared MCP Apps (a host that renders apps filters them for its model itself, §Visibility),
    when the server declares MCP Apps (itself, or a server mounted in it)."""
    if client_supports_apps(ctx) or all(e.id != UI_EXTENSION for e in ctx.server.active_extensions()):
        return tools
    return [t for t in tools if not app_only(t)]
