"""Streamable HTTP rules as pure functions: headers in, decisions out (no I/O, no asyncio).

Both the ASGI server (``_transports/_http_server``, through ``_http_checks.RequestChecks``) and
an HTTP client call these; each rule lives here once. Sources: spec-notes §9a (legacy shape,
2025-03-26 … 2025-11-25), §9b (modern shape, 2026-07-28), and DNS rebinding (a web page
reaching a server on localhost). Sections: security (Host, Origin), content negotiation, eras,
legacy session ids and versions, the modern standard and ``Mcp-Param-*`` headers, and the SSE
names re-exported from ``_sse`` / ``_sse_parser``.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import _jsonrpc as rpc
from .._errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from .._versions import LEGACY as _LEGACY
from .._versions import LEGACY_VERSIONS, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, RULES
from .._versions import MODERN as _MODERN

# Re-exported: the host and origin matching (_http_hosts), SSE written (_sse) and read (_sse_parser).
from ._http_hosts import host_allowed as host_allowed
from ._http_hosts import is_loopback as is_loopback
from ._http_hosts import origin_allowed as origin_allowed
from ._sse import event_id as event_id
from ._sse import parse_event_id as parse_event_id
from ._sse import sse_comment as sse_comment
from ._sse import sse_event as sse_event
from ._sse_parser import DEFAULT_MAX_EVENT_SIZE as DEFAULT_MAX_EVENT_SIZE
from ._sse_parser import SSEEvent as SSEEvent
from ._sse_parser import SSEParser as SSEParser
from ._sse_parser import SSETooLarge as SSETooLarge

# Header names, lower case (ASGI delivers them so; HTTP names are case-insensitive).
SESSION_ID = "mcp-session-id"
PROTOCOL_VERSION = "mcp-protocol-version"
MCP_METHOD = "mcp-method"
MCP_NAME = "mcp-name"
MCP_PARAM = "mcp-param-"
LAST_EVENT_ID = "last-event-id"

JSON = "application/json"
SSE = "text/event-stream"
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
LEGACY: str = _LEGACY  # the eras of the Rules table (select_era)
MODERN: str = _MODERN
# When no MCP-Protocol-Version header comes with a legacy request (spec 2025-06-18 transports).
DEFAULT_LEGACY_VERSION = "2025-03-26"
# Methods whose Mcp-Name header mirrors a body field (spec 2026-07-28 transports §Standard headers).
NAME_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


@dataclass(frozen=True, slots=True)
class Refusal:
    """An HTTP answer that ends a request before any MCP processing: status, a JSON-RPC error
    object for the body (``id`` when the request's id could be read), extra headers."""

    status: int
    error: dict[str, Any]
    id: Any = None
    headers: tuple[tuple[str, str], ...] = field(default=())

    def body(self) -> bytes:
        return rpc.encode(rpc.error_response(self.id, self.error))


def refuse(
    status: int,
    message: str,
    code: int = INVALID_REQUEST,
    *,
    id: Any = None,
    data: Any = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> Refusal:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return Refusal(status, err, id, headers)


def route_path(scope: Mapping[str, Any]) -> str:
    """The request's path below the ASGI ``root_path`` (where the app is mounted)."""
    path: str = scope.get("path", "/")
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :] or "/"
    return path


# The names requests carry, as ASGI servers deliver them (lower case), decoded once: one dict
# lookup each; any other spelling is decoded and lowered, to the same key.
_NAMES = {
    n.encode(): n
    for n in (
        "host",
        "origin",
        "accept",
        "content-type",
        "content-length",
        "user-agent",
        "authorization",
        "connection",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "traceparent",
        "tracestate",
        SESSION_ID,
        PROTOCOL_VERSION,
        MCP_METHOD,
        MCP_NAME,
        LAST_EVENT_ID,
    )
}


# The headers whose values header_map may keep in a caller's memo (a client repeats them): an
# allow-list, never a credential, a session id or a per-request value (trace context).
KEPT_NAMES = frozenset(("host", "origin", "accept", "content-type", "content-length", "user-agent", "connection"))
KEPT_NAMES |= {"accept-encoding", "accept-language", "cache-control", PROTOCOL_VERSION, MCP_METHOD, MCP_NAME}
KEPT_MAX = 512  # values a memo given to header_map holds (emptied when full), each of at most 256 bytes


def header_map(raw: Iterable[tuple[bytes, bytes]], kept: dict[bytes, str] | None = None) -> dict[str, str]:
    """ASGI headers as {lower-case name: value}; repeated headers are joined with ", ".
    ``kept``: the caller's memo of decoded values by their bytes (``RequestChecks`` owns one), for
    the names in KEPT_NAMES only, at most KEPT_MAX short ones."""
    if type(raw) is list and kept is not None:
        names = _NAMES
        out: dict[str, str] = {}
        try:  # the usual request: names known, none repeated; a loop, not a comprehension's frame
            for name, value in raw:
                key = names[name]
                text = kept.get(value)
                if text is None:  # not kept: decoded (and kept when its name is in KEPT_NAMES)
                    text = value.decode("latin-1")
                    if key in KEPT_NAMES and len(value) <= 256:
                        if len(kept) >= KEPT_MAX:
                            kept.clear()
                        kept[value] = text
                out[key] = text
        except (KeyError, TypeError):  # another name, or one not in lower case; a value not bytes
            return _header_map(raw)
        if len(out) == len(raw):
            return out
    return _header_map(raw)


def _header_map(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    out: dict[str, str] = {}
    names = _NAMES
    for name, value in raw:
        key = names.get(name) or name.decode("latin-1").lower()
        text = value.decode("latin-1")
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


# ---------------------------------------------------------------------------- security
def check_host(headers: Mapping[str, str], allowed: Collection[str]) -> Refusal | None:
    """DNS-rebinding protection, part 1: the ``Host`` header must name an allowed host."""
    host = headers.get("host")
    if host is None or not host_allowed(host, allowed):
        return _forbidden(f"Host header {host!r}", "hosts", allowed, "", "names")
    return None


def check_origin(headers: Mapping[str, str], allowed: Collection[str]) -> Refusal | None:
    """DNS-rebinding protection, part 2 (spec: servers MUST validate Origin): a present
    ``Origin`` must be allowed; a missing one (non-browser clients) is fine."""
    origin = headers.get("origin")
    if origin is not None and not origin_allowed(origin, allowed):
        return _forbidden(f"Origin {origin!r}", "origins", allowed, "http or https, ", "pages")
    return None


def _forbidden(what: str, kind: str, allowed: Collection[str], schemes: str, other: str) -> Refusal:
    """The 403 of a Host or Origin (``kind``) that is not ``allowed``, saying how to allow it."""
    return refuse(
        403,
        f"Forbidden: {what} is not allowed; allowed {kind}: {', '.join(sorted(allowed))} ({schemes}any port "
        f"unless one is given); configure allowed_{kind} to serve other {other}",
    )


# ---------------------------------------------------------------------------- negotiation
def accepts(accept: str | None) -> tuple[bool, bool]:
    """(JSON acceptable, SSE acceptable). Lenient (hosts send odd ones): a missing or empty header
    means both; ``*/*``, ``application/*``, ``text/*`` count; ``q=0`` excludes."""
    if not accept or not accept.strip():
        return True, True
    json_ok = sse_ok = False
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        if any(p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params):
            continue
        media = media.lower()
        if media in ("*/*", "application/*", JSON) or media.endswith("+json"):
            json_ok = True
        if media in ("*/*", "text/*", SSE):
            sse_ok = True
    return json_ok, sse_ok


def check_post(headers: Mapping[str, str], accepted: tuple[bool, bool] | None = None) -> Refusal | None:
    """A POST must say it carries JSON (415 otherwise) and accept JSON or SSE (406 otherwise);
    ``accepted``: :func:`accepts` of its ``Accept`` header, when the caller has it already.

    ``Content-Type: application/json`` is required, parameters allowed (``; charset=utf-8``):
    a missing one is refused too, because a web page can send a body without a CORS preflight
    only as ``text/plain`` or form data, or with no type at all."""
    ctype = headers.get("content-type")
    if ctype != JSON and (ctype is None or ctype.split(";")[0].strip().lower() != JSON):
        got = "none" if ctype is None else repr(ctype)
        return refuse(415, f"Unsupported Media Type: a POST body must be sent with Content-Type: {JSON}, got {got}")
    json_ok, sse_ok = accepts(headers.get("accept")) if accepted is None else accepted
    if not (json_ok or sse_ok):
        return refuse(
            406, f"Not Acceptable: the Accept header must allow {JSON} or {SSE}, got {headers.get('accept')!r}"
        )
    return None


def check_get(headers: Mapping[str, str]) -> Refusal | None:
    _, sse_ok = accepts(headers.get("accept"))
    if not sse_ok:
        return refuse(406, f"Not Acceptable: a GET opens an event stream; the Accept header must allow {SSE}")
    return None


class BadBody(Exception):
    """A POST body that is refused before any MCP processing (400): its :class:`Refusal`."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.error["message"])
        self.refusal = refusal


# ---------------------------------------------------------------------------- eras
def modern_meta(message: Any) -> dict[str, Any] | None:
    """The ``_meta`` of a request that carries the modern keys, else None."""
    params = message.get("params") if type(message) is dict else None
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and (META_PROTOCOL_VERSION in meta or META_CLIENT_CAPABILITIES in meta):
        return meta
    return None


def select_era(headers: Mapping[str, str], messages: list[Any]) -> str:
    """Which era serves this POST (spec-notes §7, §13): modern when a message carries modern
    ``_meta``, or when no session id came and ``MCP-Protocol-Version`` names no legacy version
    (so a stateless request without ``_meta`` gets the modern -32602, not "initialize first")."""
    if SESSION_ID not in headers:  # the headers first: cheaper than reading _meta
        version = headers.get(PROTOCOL_VERSION, "").strip()
        if version and version not in LEGACY_VERSIONS:
            return MODERN
    for m in messages:  # a loop, not any(genexpr): every POST comes here
        params = m.get("params") if type(m) is dict else None
        # modern_meta decides; only for params with a _meta (no call for the others)
        if type(params) is dict and "_meta" in params and modern_meta(m) is not None:
            return MODERN
    return LEGACY


def new_session_id() -> str:
    """A cryptographically secure session id of visible ASCII (spec: 0x21-0x7E)."""
    return secrets.token_urlsafe(32)


def priming(version: str) -> bool:
    """Whether a legacy POST stream of ``version`` starts with a priming event (SEP-1699 polling)."""
    rules = RULES.get(version)
    return rules is not None and rules.sse_polling


def check_legacy_version(headers: Mapping[str, str]) -> tuple[str, Refusal | None]:
    """The legacy version a request declares (``MCP-Protocol-Version``; missing = 2025-03-26),
    or a 400 when it names a version this server does not speak in the legacy era."""
    version = headers.get(PROTOCOL_VERSION)
    if version is None:
        return DEFAULT_LEGACY_VERSION, None
    version = version.strip()
    if version not in LEGACY_VERSIONS:
        return version, refuse(
            400,
            f"Bad Request: unsupported MCP-Protocol-Version {version!r}; "
            f"this session speaks {', '.join(LEGACY_VERSIONS)}",
        )
    return version, None


# ---------------------------------------------------------------------------- modern headers
_SENTINEL = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_FIELD_VALUE = re.compile(r"[\x20-\x7e\t]*")


def decode_header_value(value: str) -> str:
    """A header value as the body would hold it: whitespace around it trimmed (RFC 9110 OWS),
    ``=?base64?<b64>?=`` decoded as UTF-8. Raises ValueError for invalid Base64 (bad alphabet
    or padding), invalid UTF-8, or characters a header value may not carry."""
    value = value.strip(" \t")
    if value.isascii() and value.isprintable() and not value.startswith("=?"):
        return value  # the common case, without the two patterns: visible ASCII, no sentinel
    if not _FIELD_VALUE.fullmatch(value):
        raise ValueError("the value has characters outside visible ASCII; encode it as =?base64?…?=")
    m = _SENTINEL.fullmatch(value)
    if m is None:
        return value
    try:
        return base64.b64decode(m.group(1), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise ValueError(f"{value!r} is not valid Base64 of UTF-8 text") from None


def encode_header_value(value: str) -> str:
    """How a client sends ``value`` in Mcp-Name / Mcp-Param-*: as is when it is plain visible
    ASCII, else (non-ASCII, control characters, whitespace at either end, or a value that looks
    like the sentinel itself) as ``=?base64?…?=``."""
    plain = (
        _FIELD_VALUE.fullmatch(value) is not None
        and value == value.strip(" \t")
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    if plain:
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def header_text(value: Any) -> str | None:
    """The header form of a body value (spec: string as is, integer in decimal, boolean
    ``true``/``false``; null or absent means no header)."""
    if value is True or value is False:
        return "true" if value else "false"
    return str(value) if isinstance(value, (int, float, str)) else None


def _mismatch(message: str, id: Any) -> Refusal:
    return refuse(400, f"Header mismatch: {message}", HEADER_MISMATCH, id=id)


ParamHeadersOf = Callable[[str], Mapping[str, tuple[str, ...]] | None]  # a tool's Mcp-Param-* by its name


def check_standard_headers(
    headers: Mapping[str, str],
    message: dict[str, Any],
    param_headers: ParamHeadersOf | None = None,
    decode: Callable[[str], str] | None = None,
) -> Refusal | None:
    """Modern era: ``Mcp-Method`` must equal the body's method, ``Mcp-Name`` its name/uri (for the methods in
    NAME_FIELDS), ``MCP-Protocol-Version`` the ``_meta`` version; a missing, different or undecodable header is
    400 + -32020 (spec 2026-07-28 transports); then a tools/call's ``Mcp-Param-*`` (:func:`check_param_headers`)
    as ``param_headers(tool name)`` declares them. ``decode``: :func:`decode_header_value` or a memo of it."""
    method, rid = message.get("method"), message.get("id")
    raw = headers.get(MCP_METHOD)
    if raw is None:
        return _mismatch(f"the Mcp-Method header is required (it must be {method!r})", rid)
    if raw.strip(" \t") != method:
        return _mismatch(f"Mcp-Method {raw.strip()!r} does not match the body's method {method!r}", rid)
    params = message.get("params")
    if type(params) is not dict:
        params = None
    meta = params.get("_meta") if params is not None else None
    body_version = meta.get(META_PROTOCOL_VERSION) if type(meta) is dict else None  # modern_meta's version
    if type(body_version) is str:  # a decoded message's strings are str (no isinstance)
        hv = headers.get(PROTOCOL_VERSION)
        if hv is None or hv.strip(" \t") != body_version:
            why = f'MCP-Protocol-Version {hv!r} does not match _meta["{META_PROTOCOL_VERSION}"] {body_version!r}'
            return _mismatch(why, rid)
    name_field = NAME_FIELDS.get(method) if type(method) is str else None
    if name_field is not None:
        body_name = params.get(name_field) if params is not None else None
        raw = headers.get(MCP_NAME)
        if raw is None:
            if body_name is not None:
                return _mismatch(f"the Mcp-Name header is required for {method} (it must be {body_name!r})", rid)
        else:
            try:
                value = (decode or decode_header_value)(raw)
            except ValueError as exc:
                return _mismatch(f"Mcp-Name: {exc}", rid)
            if value != body_name:
                return _mismatch(f"Mcp-Name {value!r} does not match the body's {name_field} {body_name!r}", rid)
        if param_headers is not None and method == "tools/call" and type(body_name) is str:
            declared = param_headers(body_name)
            if declared:
                assert params is not None  # it holds body_name
                return check_param_headers(headers, declared, params.get("arguments"), rid)
    return None


def param_headers(input_schema: Any) -> dict[str, tuple[str, ...]]:
    """The ``Mcp-Param-*`` headers a tool declares: {lower-case header suffix: argument path},
    from ``x-mcp-header`` annotations reachable through ``properties`` (spec 2026-07-28
    transports §Custom headers). Invalid annotations (not a token, duplicates) are skipped —
    conforming clients drop such tools, so nothing would send them."""
    out: dict[str, tuple[str, ...]] = {}
    seen: set[str] = set()

    def walk(schema: Any, path: tuple[str, ...]) -> None:
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict):
            return
        for key, sub in props.items():
            if not isinstance(sub, dict):
                continue
            name = sub.get("x-mcp-header")
            if isinstance(name, str) and _TOKEN.fullmatch(name):
                low = name.lower()
                if low in seen:
                    out.pop(low, None)
                else:
                    seen.add(low)
                    out[low] = path + (key,)
            walk(sub, path + (key,))

    walk(input_schema, ())
    return out


def check_param_headers(
    headers: Mapping[str, str], declared: Mapping[str, tuple[str, ...]], arguments: Any, id: Any = None
) -> Refusal | None:
    """Each declared ``Mcp-Param-{Name}`` must mirror its argument: present with the same value
    when the body has one, absent when it has none; else 400 + -32020."""
    for suffix, path in declared.items():
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        expected = header_text(value)
        raw = headers.get(MCP_PARAM + suffix)
        if raw is None:
            if expected is not None:
                return _mismatch(
                    f"the Mcp-Param-{suffix} header is required (the body's {'.'.join(path)} is {value!r})", id
                )
            continue
        try:
            got = decode_header_value(raw)
        except ValueError as exc:
            return _mismatch(f"Mcp-Param-{suffix}: {exc}", id)
        if expected is None:
            return _mismatch(f"Mcp-Param-{suffix} is sent but the body has no {'.'.join(path)}", id)
        if got != expected:
            return _mismatch(f"Mcp-Param-{suffix} {got!r} does not match the body's {'.'.join(path)} {expected!r}", id)
    return None


# Modern era: JSON-RPC errors that are also HTTP statuses (spec 2026-07-28 transports).
_MODERN_STATUS = {
    METHOD_NOT_FOUND: 404,
    INVALID_PARAMS: 400,
    INVALID_REQUEST: 400,
    PARSE_ERROR: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}


# The eras whose JSON error responses carry an HTTP status of their own (status_for_error).
ERROR_STATUS_ERAS = frozenset({MODERN})


def status_for_error(code: Any, era: str) -> int:
    """The HTTP status of a JSON response carrying error ``code``: in the modern era -32601 is
    404 and the client's errors are 400; legacy responses are 200 whatever they carry."""
    return _MODERN_STATUS.get(code, 200) if era in ERROR_STATUS_ERAS else 200
