"""The header rules' faster forms (every request runs them) give the answers of the plain forms
kept below as the reference: ``header_map`` (one loop for the usual request),
``check_standard_headers`` (equal values taken as is), ``check_post`` (the exact
``application/json`` taken as is) and ``read_messages`` (one message, no loop)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from mcpio import _jsonrpc as rpc
from mcpio._protocol import _http as h
from mcpio._protocol._http_checks import Verdict, read_post
from mcpio._versions import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION


def read_messages(body: bytes) -> tuple[list[Any], list[int], bool]:
    """What ``read_post`` reads of a body: its messages, their kinds, whether it is a batch."""
    post = read_post(body, {}, Verdict(True, True, None, False))
    return post.messages, post.kinds, post.batch


# ---------------------------------------------------------------- the reference forms
def ref_header_map(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in raw:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


def ref_check_standard_headers(headers: Mapping[str, str], message: dict[str, Any]) -> h.Refusal | None:
    id_ = message.get("id")
    method = message.get("method")
    raw = headers.get(h.MCP_METHOD)
    if raw is None:
        return h._mismatch(f"the Mcp-Method header is required (it must be {method!r})", id_)
    if raw.strip(" \t") != method:
        return h._mismatch(f"Mcp-Method {raw.strip()!r} does not match the body's method {method!r}", id_)
    meta = h.modern_meta(message)
    body_version = meta.get(META_PROTOCOL_VERSION) if meta is not None else None
    if isinstance(body_version, str):
        hv = headers.get(h.PROTOCOL_VERSION)
        if hv is None or hv.strip(" \t") != body_version:
            return h._mismatch(
                f'MCP-Protocol-Version {hv!r} does not match _meta["{META_PROTOCOL_VERSION}"] {body_version!r}', id_
            )
    name_field = h.NAME_FIELDS.get(method) if isinstance(method, str) else None
    if name_field is not None:
        params = message.get("params")
        body_name = params.get(name_field) if type(params) is dict else None
        raw = headers.get(h.MCP_NAME)
        if raw is None:
            if body_name is not None:
                return h._mismatch(f"the Mcp-Name header is required for {method} (it must be {body_name!r})", id_)
        else:
            try:
                value = h.decode_header_value(raw)
            except ValueError as exc:
                return h._mismatch(f"Mcp-Name: {exc}", id_)
            if value != body_name:
                return h._mismatch(f"Mcp-Name {value!r} does not match the body's {name_field} {body_name!r}", id_)
    return None


def ref_check_post(headers: Mapping[str, str]) -> h.Refusal | None:
    ctype = headers.get("content-type")
    if ctype is None or ctype.split(";")[0].strip().lower() != h.JSON:
        got = "none" if ctype is None else repr(ctype)
        return h.refuse(415, f"Unsupported Media Type: a POST body must be sent with Content-Type: {h.JSON}, got {got}")
    json_ok, sse_ok = h.accepts(headers.get("accept"))
    if not (json_ok or sse_ok):
        return h.refuse(
            406, f"Not Acceptable: the Accept header must allow {h.JSON} or {h.SSE}, got {headers.get('accept')!r}"
        )
    return None


def ref_kinds(messages: list[Any]) -> list[int] | h.Refusal:
    out = []
    for msg in messages:
        try:
            out.append(rpc.classify(msg))
        except rpc.InvalidMessage as exc:
            return h.refuse(400, exc.message, exc.code, id=exc.id)
    return out


def ref_read_messages(body: bytes) -> Any:
    try:
        value = rpc.decode(body)
    except rpc.InvalidMessage as exc:
        return h.refuse(400, exc.message, h.PARSE_ERROR)
    if value == []:
        return h.refuse(400, "Invalid Request: empty batch")
    messages = value if isinstance(value, list) else [value]
    kinds = ref_kinds(messages)
    return kinds if isinstance(kinds, h.Refusal) else (messages, kinds, isinstance(value, list))


# ---------------------------------------------------------------- header_map
RAWS: list[Any] = [
    [],
    [(b"host", b"127.0.0.1:8000"), (b"accept", b"application/json, text/event-stream")],
    [(b"host", b"a"), (b"host", b"b")],  # repeated: joined
    [(b"Host", b"a"), (b"host", b"b")],  # not in lower case, then repeated
    [(b"x-other", b"1"), (b"accept", b"*/*")],  # a name not known in advance
    [(b"mcp-name", "caf\u00e9".encode()), (b"user-agent", b"\xff\xfe")],  # not ASCII: latin-1
    [(b"MCP-Method", b"tools/call"), (b"mcp-method", b" tools/call ")],
    [(b"content-length", b"12"), (b"accept-encoding", b"gzip"), (b"traceparent", b"00-ab-cd-01")],
    ((b"host", b"a"), (b"host", b"b")),  # a tuple, not a list
]


RAWS += [
    [(b"host", bytearray(b"a")), (b"accept", b"*/*")],  # a value not bytes: decoded all the same
    [(b"host", b"x"), (b"authorization", b"Bearer x"), (b"mcp-session-id", b"x")],  # a kept value, elsewhere
]


@pytest.mark.parametrize("raw", RAWS)
def test_header_map_same(raw: Any) -> None:
    kept: dict[bytes, str] = {}  # a memo, as RequestChecks.texts
    assert h.header_map(raw) == ref_header_map(raw)
    assert h.header_map(raw, kept) == ref_header_map(raw)
    assert h.header_map(raw, kept) == ref_header_map(raw)  # again: values kept by the first call
    assert h.header_map(iter(list(raw)), kept) == ref_header_map(raw)  # any iterable


def test_header_map_keeps_no_credential_and_no_long_value() -> None:
    secret, sid, long = b"Bearer secret-token-1", b"session-id-not-kept", b"x" * 257
    raw = [(b"host", b"kept.example"), (b"authorization", secret), (b"mcp-session-id", sid), (b"user-agent", long)]
    kept: dict[bytes, str] = {}
    assert h.header_map(raw, kept)["authorization"] == "Bearer secret-token-1"
    assert list(kept) == [b"kept.example"]


# ---------------------------------------------------------------- check_standard_headers
META = {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}}
MESSAGES: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "_meta": META}},
    {"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {"name": "caf\u00e9", "_meta": META}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"_meta": META}},  # no name
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}},
    {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "file:///a b"}},
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "add", "_meta": {"other": 1}}},
    {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "add", "_meta": []}},
    {"jsonrpc": "2.0", "id": 7, "method": "ping"},
    {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "add", "_meta": {META_PROTOCOL_VERSION: 3}}},
    {"jsonrpc": "2.0", "id": 9, "result": {}},  # a response: no method
    {"jsonrpc": "2.0", "method": "notifications/x", "params": None},
    {
        "jsonrpc": "2.0",
        "id": 10,
        "method": " tools/call",
        "params": {"name": " add", "_meta": {META_PROTOCOL_VERSION: " 2026-07-28"}},
    },
]
VALUES: dict[str, list[str | None]] = {
    h.MCP_METHOD: [None, "tools/call", " tools/call\t", " tools/call", "tools/list", "ping", "resources/read", ""],
    h.PROTOCOL_VERSION: [None, "2026-07-28", " 2026-07-28 ", " 2026-07-28", "2025-11-25"],
    h.MCP_NAME: [
        None,
        "add",
        " add ",
        " add",
        "=?base64?Y2Fmw6k=?=",
        "=?base64?!!?=",
        "caf\u00e9",
        "file:///a b",
        "x\x01",
    ],
}


@pytest.mark.parametrize("message", MESSAGES)
def test_check_standard_headers_same(message: dict[str, Any]) -> None:
    for combo in itertools.product(*VALUES.values()):
        headers = {k: v for k, v in zip(VALUES, combo, strict=True) if v is not None}
        assert h.check_standard_headers(headers, message) == ref_check_standard_headers(headers, message), headers


# ---------------------------------------------------------------- check_post, kinds
@pytest.mark.parametrize(
    "ctype",
    [
        None,
        "application/json",
        "Application/JSON",
        "application/json; charset=utf-8",
        " application/json ",
        "text/plain",
        "",
    ],
)
@pytest.mark.parametrize("accept", [None, "application/json", "text/event-stream", "text/html", "*/*;q=0"])
def test_check_post_same(ctype: str | None, accept: str | None) -> None:
    headers = {k: v for k, v in (("content-type", ctype), ("accept", accept)) if v is not None}
    assert h.check_post(headers) == ref_check_post(headers)


@pytest.mark.parametrize(
    "messages",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        [{"jsonrpc": "2.0", "method": "notifications/x"}],
        [{"jsonrpc": "2.0", "id": 1, "result": {}}],
        [{"jsonrpc": "1.0", "id": 1, "method": "ping"}],
        [[1]],
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "result": {}}],
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, "bad", {"jsonrpc": "2.0", "id": [], "method": "x"}],
    ],
)
def test_kinds_same(messages: list[Any]) -> None:
    for body in (rpc.encode(messages), rpc.encode(messages[0])):  # a batch; its first message alone
        try:
            got: Any = read_messages(body)
        except h.BadBody as exc:
            got = exc.refusal
        assert got == ref_read_messages(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b' [{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"result":{}}]',
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},"bad"]',
        b"[]",
        b"[[]]",
        b'{"jsonrpc":"1.0","id":7,"method":"x"}',
        b'{"jsonrpc":"2.0","id":[],"method":"x"}',
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}',
        b"{nope",
        b"",
        b"\xff",
        b"[" * 5000,
        b"7",
        b'"text"',
        b"null",
    ],
)
def test_read_messages_same(body: bytes) -> None:
    try:
        got: Any = read_messages(body)
    except h.BadBody as exc:
        got = exc.refusal
    assert got == ref_read_messages(body)


_ID_VALUES = [1, 0, -5, 2**70, "a", "", None, True, 1.5, [], {}]
_METHODS = ["ping", "", None, 7, ["x"]]
_PARAMS = [{}, {"a": 1}, None, [], "x", 0]


def _shapes() -> list[Any]:
    out: list[Any] = [None, [], "x", 7, {}]
    for jsonrpc in ("2.0", "1.0", None, 2.0):
        for method in _METHODS:
            for id_ in [*_ID_VALUES, "absent"]:
                for params in [*_PARAMS, "absent"]:
                    msg: dict[str, Any] = {"jsonrpc": jsonrpc, "method": method}
                    if jsonrpc is None:
                        del msg["jsonrpc"]
                    if method is None:
                        del msg["method"]
                    if id_ != "absent":
                        msg["id"] = id_
                    if params != "absent":
                        msg["params"] = params
                    out.append(msg)
        for key in ("result", "error"):
            for id_ in _ID_VALUES:
                out.append({"jsonrpc": jsonrpc, "id": id_, key: {}})
    return out


def test_classify_same() -> None:
    """``classify``'s fast path for a well-formed request or notification (issue 17) gives what its
    rules (``_classify``) give, for every shape: the kind, or the same refusal."""

    def outcome(f: Any, msg: Any) -> Any:
        try:
            return f(msg)
        except rpc.InvalidMessage as exc:
            return (exc.id, exc.code, exc.message)

    for msg in _shapes():
        assert outcome(rpc.classify, msg) == outcome(rpc._classify, msg), msg
