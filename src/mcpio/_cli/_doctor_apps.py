"""``mcpio doctor``'s MCP Apps checks (ext-apps specification 2026-01-26).

Connected as a host that renders apps (declaring ``io.modelcontextprotocol/ui``, so app-only
tools are listed too), for every tool whose ``_meta.ui.resourceUri`` links a view:

* problem: the view does not exist (``resources/read`` fails), is not a ``ui://`` URI, or is not
  served as ``text/html;profile=mcp-app`` (§UI Resource Format: "Resource MUST exist", "mimeType
  MUST be");
* problem: the tool, called, returns no text content: hosts without apps show only that
  (§Graceful Degradation: "Tools MUST return meaningful content array"). A tool is called only
  when it declares ``readOnlyHint: true`` and its required arguments can be made up from its
  ``inputSchema`` (a number, a string, a boolean, an enum's first value); otherwise a warning says
  it was not called.
"""

from __future__ import annotations

from typing import Any

from .._client._client import Client
from .._errors import MCPError
from .._versions import UI_MIME_TYPE

_SAMPLES = {"integer": 1, "number": 1, "string": "a", "boolean": True}


def sample_arguments(schema: Any) -> dict[str, Any] | None:
    """Arguments for the required properties of ``schema``, or None when one cannot be made up."""
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = props.get(name) if isinstance(props, dict) else None
        if not isinstance(prop, dict):
            return None
        if isinstance(prop.get("enum"), list) and prop["enum"]:
            args[name] = prop["enum"][0]
        elif prop.get("type") in _SAMPLES:
            args[name] = _SAMPLES[prop["type"]]
        else:
            return None
    return args


async def check_apps(client: Client) -> tuple[list[str], list[str], int]:
    """(problems, warnings, how many UI tools) of the server ``client`` is connected to."""
    problems: list[str] = []
    warnings: list[str] = []
    views: dict[str, str | None] = {}  # uri -> problem (None: fine)
    ui_tools = 0
    for tool in await client.list_tools():
        meta = tool.get("_meta")
        ui = meta.get("ui") if isinstance(meta, dict) else None
        uri = ui.get("resourceUri") if isinstance(ui, dict) else None
        if uri is None:
            continue
        ui_tools += 1
        label = f"tool {tool['name']!r}"
        if uri not in views:
            views[uri] = await _view_problem(client, uri)
        if views[uri] is not None:
            problems.append(f"{label}: its view {uri!r} {views[uri]}")
        problems_, warnings_ = await _text_fallback(client, tool, label)
        problems += problems_
        warnings += warnings_
    return problems, warnings, ui_tools


async def _view_problem(client: Client, uri: Any) -> str | None:
    if not isinstance(uri, str) or not uri.startswith("ui://"):
        return "is not a ui:// URI (MCP Apps views are ui:// resources)"
    try:
        contents = await client.read_resource(uri)
    except MCPError as exc:
        return f"cannot be read ({exc.message}); serve it, e.g. server.ui_resource({uri!r}, html=...)"
    if not contents:
        return "has no contents"
    mime = contents[0].get("mimeType")
    if mime != UI_MIME_TYPE:
        return f"is served as {mime!r}; MCP Apps views MUST be {UI_MIME_TYPE!r}"
    return None


async def _text_fallback(client: Client, tool: Any, label: str) -> tuple[list[str], list[str]]:
    annotations = tool.get("annotations") or {}
    args = sample_arguments(tool.get("inputSchema"))
    if not annotations.get("readOnlyHint") or args is None:
        why = "it is not readOnlyHint" if not annotations.get("readOnlyHint") else "its arguments cannot be made up"
        return [], [f"{label}: not called ({why}); it MUST return text content for hosts without apps"]
    try:
        result = await client.call_tool(tool["name"], args)
    except MCPError as exc:
        return [], [f"{label}: calling it with {args} failed ({exc.message}); its text fallback is unchecked"]
    if result.get("isError"):
        return [], [f"{label}: called with {args}, it answered an error; its text fallback is unchecked"]
    if not any(c.get("type") == "text" and c.get("text") for c in result.get("content") or []):
        return [f"{label}: returns no text content; hosts without MCP Apps show nothing (the spec's MUST)"], []
    return [], []
