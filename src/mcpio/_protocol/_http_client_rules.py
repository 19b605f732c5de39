"""Streamable HTTP rules of the client side, as pure functions (no I/O, no asyncio).

The rules both sides share — header names, the ``=?base64?…?=`` value encoding, which
``x-mcp-header`` annotations a tool declares, the SSE parser — live in ``_http`` (the server's
module) and are imported from there; this module adds what only a client decides. Sources:
spec-notes §7, §9a, §9b; spec 2026-07-28 basic/transports/streamable-http.

* **Request headers** — :func:`post_headers`: ``Accept`` and ``Content-Type`` always; legacy
  (≤ 2025-11-25): ``Mcp-Session-Id`` and the negotiated ``MCP-Protocol-Version`` once known;
  modern (a message with 2026-07-28 ``_meta``): ``MCP-Protocol-Version`` equal to the
  ``_meta`` version, ``Mcp-Method``, ``Mcp-Name`` (tools/call, prompts/get, resources/read)
  and one ``Mcp-Param-{Name}`` per ``x-mcp-header`` argument of a ``tools/call`` with a value
  (null or absent: no header), every value encoded by ``_http.encode_header_value``.
* **Tool definitions** — :func:`tool_header_problem`: why a tool's ``x-mcp-header``
  annotations make it unusable over HTTP (a client MUST drop such a tool from ``tools/list``):
  empty or not a token, case-insensitive duplicates, a type other than string/integer/boolean,
  an annotation not reachable from the schema root through ``properties`` alone.
* **Responses** — :func:`error_in` reads a JSON-RPC error out of an HTTP body;
  :func:`http_failure` is the JSON-RPC error for an HTTP failure that carried none (code
  -32000, never a modern one, so era detection reads it as "not modern");
  :func:`use_http_sse` says when a POSTed ``initialize`` that failed means the server speaks
  the deprecated 2024-11-05 HTTP+SSE transport (400/404/405 without a recognised modern
  error); :func:`endpoint_url` checks that transport's ``endpoint`` event.
* **Reconnection** — :func:`retry_delay`: the server's SSE ``retry`` (milliseconds), else an
  exponential backoff, capped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from .._errors import CONNECTION_CLOSED, INVALID_REQUEST, METHOD_NOT_FOUND, MODERN_ERROR_CODES
from .._jsonrpc import decode_json
from .._shown import shown
from .._versions import META_PROTOCOL_VERSION
from ._http import (
    _TOKEN,
    JSON,
    MCP_METHOD,
    MCP_NAME,
    MCP_PARAM,
    NAME_FIELDS,
    PROTOCOL_VERSION,
    SESSION_ID,
    SSE,
    encode_header_value,
    header_text,
    modern_meta,
    param_headers,
)

ACCEPT = f"{JSON}, {SSE}"
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
# Keywords whose subschemas an x-mcp-header must not hide in (only "properties" chains count).
_NESTING = (
    "items",
    "prefixItems",
    "additionalProperties",
    "patternProperties",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "anyOf",
    "oneOf",
    "allOf",
    "$defs",
    "definitions",
    "dependentSchemas",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)

_SCHEMA_MAPS = frozenset({"$defs", "definitions", "patternProperties", "dependentSchemas"})  # name -> schema

ParamPaths = Mapping[str, tuple[str, ...]]  # Mcp-Param suffix (lower case) -> argument path


def post_headers(
    message: Mapping[str, Any],
    *,
    session_id: str | None = None,
    protocol_version: str | None = None,
    params_for: Callable[[str], ParamPaths | None] | None = None,
) -> dict[str, str]:
    """The headers of the POST that carries ``message`` (see the module docstring)."""
    headers = {"accept": ACCEPT, "content-type": JSON}
    meta = modern_meta(message)
    if meta is None:  # legacy
        if session_id is not None:
            headers[SESSION_ID] = session_id
        if protocol_version is not None:
            headers[PROTOCOL_VERSION] = protocol_version
        return headers
    version = meta.get(META_PROTOCOL_VERSION)
    if isinstance(version, str):
        headers[PROTOCOL_VERSION] = version
    method = message.get("method")
    if not isinstance(method, str):
        return headers
    headers[MCP_METHOD] = method
    params = message.get("params")
    params = params if isinstance(params, Mapping) else {}
    name_field = NAME_FIELDS.get(method)
    name = params.get(name_field) if name_field else None
    if isinstance(name, str):
        headers[MCP_NAME] = encode_header_value(name)
    if method == "tools/call" and isinstance(name, str) and params_for is not None:
        for suffix, path in (params_for(name) or {}).items():
            value: Any = params.get("arguments")
            for key in path:
                value = value.get(key) if isinstance(value, Mapping) else None
            text = header_text(value)
            if text is not None:
                headers[MCP_PARAM + suffix] = encode_header_value(text)
    return headers


def unsendable(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """The error answering request ``message`` at once when its 2026-07-28 POST cannot be made:
    ``Mcp-Method`` carries the method as it is (:func:`post_headers`), and a header field value
    holds no control character and nothing beyond Latin-1 (RFC 9110 §5.5); else None."""
    method = message.get("method")
    if type(method) is str and method.isascii() and method.isprintable():  # every MCP method: one C-speed test
        return None
    if modern_meta(message) is None or not isinstance(method, str):
        return None
    if all(" " <= c <= "~" or c == "\t" or "\xa0" <= c <= "\xff" for c in method):  # (obs-text: Latin-1)
        return None
    return {
        "code": INVALID_REQUEST,
        "message": f"the method {method!r:.80} cannot be sent over Streamable HTTP: an Mcp-Method header "
        "cannot carry a control character or one beyond Latin-1",
    }


def accepted_tools(
    tools: list[Any], headers: dict[str, dict[str, tuple[str, ...]]]
) -> tuple[list[Any], list[tuple[Any, str]]]:
    """The ``tools/list`` items a 2026-07-28 client may use, and (name, why) of each dropped: a
    client MUST drop a tool whose ``x-mcp-header`` annotations are invalid. ``headers`` (tool name
    -> the argument paths its ``Mcp-Param-*`` headers carry) is brought up to date."""
    kept: list[Any] = []
    dropped: list[tuple[Any, str]] = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        problem = tool_header_problem(tool)
        if problem is not None:
            dropped.append((name, problem))
            continue
        if isinstance(name, str):
            paths = param_headers(tool.get("inputSchema"))
            if paths:
                headers[name] = paths
            else:
                headers.pop(name, None)
        kept.append(tool)
    return kept, dropped


def tool_header_problem(tool: Any) -> str | None:
    """Why ``tool``'s ``x-mcp-header`` annotations are invalid (it must be dropped), or None."""
    schema = tool.get("inputSchema") if isinstance(tool, Mapping) else None
    seen: set[str] = set()

    def walk(node: Any, reachable: bool, where: str) -> str | None:
        if not isinstance(node, Mapping):
            return None
        if "x-mcp-header" in node:
            name = node["x-mcp-header"]
            if not reachable:
                return f"the x-mcp-header at {where or '/'} is not reachable through 'properties' alone"
            if not isinstance(name, str) or not name or not _TOKEN.fullmatch(name):
                return f"x-mcp-header {name!r} at {where} is not an HTTP token (1*tchar: no spaces, colons, control or non-ASCII characters)"
            if name.lower() in seen:
                return f"x-mcp-header {name!r} is used twice (names are case-insensitive)"
            seen.add(name.lower())
            kinds = node.get("type")
            kinds = [kinds] if isinstance(kinds, str) else kinds
            typed = [k for k in kinds if k != "null"] if isinstance(kinds, list) else []
            if not typed or not set(typed) <= _HEADER_TYPES:
                return f"x-mcp-header {name!r} at {where} is on a parameter of type {node.get('type')!r}; only string, integer and boolean may be mirrored"
        props = node.get("properties")
        if isinstance(props, Mapping):
            for key, sub in props.items():
                found = walk(sub, reachable, f"{where}/properties/{key}")
                if found:
                    return found
        for keyword in _NESTING:
            sub = node.get(keyword)
            if isinstance(sub, list):
                items = sub
            elif isinstance(sub, Mapping) and keyword in _SCHEMA_MAPS:
                items = list(sub.values())
            else:
                items = [sub]
            for item in items:
                found = walk(item, False, f"{where}/{keyword}")
                if found:
                    return found
        return None

    return walk(schema, True, "")


def decoded(body: bytes) -> tuple[Any, bool]:
    """``(document, True)`` when ``body`` is JSON as the session decodes it, else ``(None, False)``
    (msgspec's errors are ValueErrors; a document nested too deep, a RecursionError)."""
    try:
        return decode_json(body), True
    except (ValueError, RecursionError):
        return None, False


def is_json(body: bytes) -> bool:
    return decoded(body)[1]


def error_of(doc: Any) -> tuple[Any, dict[str, Any]] | None:
    """(id, error object) when ``doc`` (decoded) is a JSON-RPC error response, else None."""
    if isinstance(doc, dict) and isinstance(doc.get("error"), dict) and isinstance(doc["error"].get("code"), int):
        return doc.get("id"), doc["error"]
    return None


def error_in(body: bytes) -> tuple[Any, dict[str, Any]] | None:
    """:func:`error_of` the decoded ``body`` (None when it is not JSON)."""
    return error_of(decoded(body)[0])


def is_modern_error(status: int, error: Mapping[str, Any] | None) -> bool:
    """A recognised modern JSON-RPC error: -32020/-32021/-32022, or a 404 carrying -32601 (a
    modern server's answer to an unknown method; a plain 404 is a legacy server's)."""
    if error is None:
        return False
    code = error.get("code")
    return code in MODERN_ERROR_CODES or (status == 404 and code == METHOD_NOT_FOUND)


def use_http_sse(status: int, body: bytes) -> bool:
    """Whether a POSTed ``initialize`` that got ``status`` means the deprecated HTTP+SSE
    transport (spec 2026-07-28 streamable-http §Backward Compatibility)."""
    if status not in (400, 404, 405):
        return False
    found = error_in(body)
    return not is_modern_error(status, found[1] if found else None)


def http_failure(status: int | None, reason: str, body: bytes = b"") -> dict[str, Any]:
    """The JSON-RPC error object for an HTTP exchange that failed without a JSON-RPC error."""
    text = body[:300].decode("utf-8", "replace").strip()
    what = f"HTTP {status} {reason}" if status is not None else reason
    err: dict[str, Any] = {"code": CONNECTION_CLOSED, "message": what + (f": {text}" if text else "")}
    if status is not None:
        err["data"] = {"status": status}
    return err


def endpoint_url(stream_url: str, data: str) -> str:
    """The POST URL an HTTP+SSE ``endpoint`` event names; ValueError unless same origin."""
    url = urljoin(stream_url, data.strip())
    a, b = urlsplit(stream_url), urlsplit(url)
    if (a.scheme, a.netloc) != (b.scheme, b.netloc):
        origin = shown(f"{a.scheme}://{a.netloc}")
        raise ValueError(f"the endpoint {shown(url)!r} is not on the server's origin {origin}")
    return url


def retry_delay(retry_ms: int | None, attempt: int, *, base: float = 1.0, cap: float = 30.0) -> float:
    """Seconds to wait before reconnecting attempt number ``attempt`` (0-based) of an SSE stream."""
    if retry_ms is not None:
        return retry_ms / 1000
    return min(cap, base * 2.0**attempt)
