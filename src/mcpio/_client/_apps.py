"""The host side of MCP Apps for a client: fetch the view a tool comes with.

A tool links its view with ``_meta.ui.resourceUri`` (ext-apps specification 2026-01-26,
§Resource Discovery; the deprecated flat ``_meta["ui/resourceUri"]`` is read too); the host
MUST fetch it with ``resources/read``. :func:`app_view` does both and returns an
:class:`AppView`: the HTML, its mimeType, and the contents' ``_meta.ui`` (§UI Resource Format:
``csp``, ``permissions``, ``domain``, ``prefersBorder``), which is what a host needs to render the
view in its sandbox. It raises :class:`AppViewError` saying what is missing and whose fault it is.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._errors import MCPError
from .._versions import APPS_HOST as APPS_HOST  # what a host that renders apps declares
from .._versions import UI_EXTENSION, UI_MIME_TYPE

if TYPE_CHECKING:
    from ._client import Client


class AppViewError(LookupError):
    """The tool has no view, or its view cannot be had (the message says which, and why)."""


@dataclass(frozen=True)
class AppView:
    """A tool's view: the ``ui://`` resource read, with its ``_meta.ui``."""

    tool: str
    uri: str
    html: str
    mime_type: str
    ui: dict[str, Any] = field(default_factory=dict)  # the contents' _meta.ui, as sent
    visibility: tuple[str, ...] = ("model", "app")  # the tool's _meta.ui.visibility

    @property
    def csp(self) -> dict[str, list[str]]:
        """``connectDomains``, ``resourceDomains``, ``frameDomains``, ``baseUriDomains`` (those
        sent, as lists of strings); empty: the spec's restrictive default applies."""
        csp = self.ui.get("csp")
        if not isinstance(csp, dict):
            return {}
        return {k: [d for d in v if isinstance(d, str)] for k, v in csp.items() if isinstance(v, list)}

    @property
    def permissions(self) -> list[str]:
        """The permissions the view asks for (``camera``, ``microphone``, ``geolocation``, ``clipboardWrite``)."""
        perms = self.ui.get("permissions")
        return sorted(perms) if isinstance(perms, dict) else []

    @property
    def domain(self) -> str | None:
        domain = self.ui.get("domain")
        return domain if isinstance(domain, str) else None

    @property
    def prefers_border(self) -> bool | None:
        border = self.ui.get("prefersBorder")
        return border if isinstance(border, bool) else None


def view_uri(tool: Any) -> str | None:
    """The ``ui://`` URI a tool definition (a dict) links to, or None."""
    meta = tool.get("_meta") if isinstance(tool, dict) else None
    if not isinstance(meta, dict):
        return None
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, dict) else None
    if uri is None:
        uri = meta.get("ui/resourceUri")  # deprecated flat form (§Resource Discovery)
    return uri if isinstance(uri, str) else None


async def app_view(client: Client, tool: str) -> AppView:
    """Find ``tool`` in ``tools/list`` and read its view (see the module's docstring)."""
    found = next((t for t in await client.list_tools() if t.name == tool), None)
    if found is None:
        hint = (
            ""
            if UI_EXTENSION in client.extensions
            else f" (a tool only views may call is listed only to a client that declared {UI_EXTENSION}: "
            f"Client(..., extensions={APPS_HOST!r}))"
        )
        raise AppViewError(f"the server lists no tool named {tool!r}{hint}")
    definition = found.model_dump()
    uri = view_uri(definition)
    if uri is None:
        raise AppViewError(f"the tool {tool!r} has no view: its definition has no _meta.ui.resourceUri")
    if not uri.startswith("ui://"):
        raise AppViewError(f"the server's tool {tool!r} links its view to {uri!r}, which is not a ui:// URI")
    try:
        contents = await client.read_resource(uri)
    except MCPError as exc:
        raise AppViewError(f"the server could not read the view {uri!r} of the tool {tool!r}: {exc}") from exc
    content = next((c for c in contents if c.uri == uri), contents[0] if len(contents) == 1 else None)
    if content is None:
        raise AppViewError(f"the server's resources/read of {uri!r} returned no contents for that URI")
    mime = content.mime_type or ""
    if mime.replace(" ", "").lower() != UI_MIME_TYPE:
        raise AppViewError(f"the server serves the view {uri!r} as {mime or 'no mimeType'!r}, not {UI_MIME_TYPE!r}")
    try:
        html = content.text if content.text is not None else base64.b64decode(content.blob or "").decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise AppViewError(f"the server's view {uri!r} is a blob that is not base64 UTF-8 HTML: {exc}") from None
    meta = content.meta or {}
    ui = meta.get("ui")
    tool_ui = (definition.get("_meta") or {}).get("ui")
    visibility = tool_ui.get("visibility") if isinstance(tool_ui, dict) else None
    return AppView(
        tool=tool,
        uri=uri,
        html=html,
        mime_type=mime,
        ui=dict(ui) if isinstance(ui, dict) else {},
        visibility=tuple(v for v in visibility if isinstance(v, str))
        if isinstance(visibility, list)
        else ("model", "app"),
    )
