"""The client's Streamable HTTP rules (``_protocol/_http_client_rules``): pure functions, no I/O."""

from __future__ import annotations

import json

import pytest

from mcpio._protocol import _http_client_rules as rules

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def modern(method: str, **params) -> dict:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": META}}


def test_legacy_headers_carry_the_session_and_the_negotiated_version():
    msg = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    assert rules.post_headers(msg) == {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
    }
    later = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    h = rules.post_headers(later, session_id="abc", protocol_version="2025-06-18")
    assert h["mcp-session-id"] == "abc" and h["mcp-protocol-version"] == "2025-06-18"
    assert "mcp-method" not in h  # a legacy request has no standard headers


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("tools/call", {"name": "get_weather"}, "get_weather"),
        ("prompts/get", {"name": "greet"}, "greet"),
        ("resources/read", {"uri": "file:///projects/myapp/config.json"}, "file:///projects/myapp/config.json"),
        ("resources/read", {"uri": "file:///Résumé.txt"}, "=?base64?ZmlsZTovLy9Sw6lzdW3DqS50eHQ=?="),
        ("tools/list", {}, None),
    ],
)
def test_modern_standard_headers(method, params, name):
    h = rules.post_headers(modern(method, **params))
    assert h["mcp-method"] == method and h["mcp-protocol-version"] == "2026-07-28"
    assert h.get("mcp-name") == name


@pytest.mark.parametrize(
    ("value", "header"),
    [  # the spec's encoding table (2026-07-28 transports)
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        (42, "42"),
        (-7, "-7"),
        (True, "true"),
        (False, "false"),
        ("", ""),
    ],
)
def test_param_headers_are_encoded(value, header):
    msg = modern("tools/call", name="t", arguments={"v": value})
    assert rules.post_headers(msg, params_for=lambda name: {"v": ("v",)})["mcp-param-v"] == header


def test_param_headers_follow_nested_paths_and_omit_null_or_absent_values():
    paths = {"region": ("where", "region"), "verbose": ("verbose",), "missing": ("nope",)}
    msg = modern("tools/call", name="t", arguments={"where": {"region": "eu"}, "verbose": None})
    h = rules.post_headers(msg, params_for=lambda name: paths if name == "t" else None)
    assert h["mcp-param-region"] == "eu"
    assert "mcp-param-verbose" not in h and "mcp-param-missing" not in h
    assert not any(
        k.startswith("mcp-param-")
        for k in rules.post_headers(modern("tools/call", name="other"), params_for=lambda name: None)
    )


def _tool(**props) -> dict:
    return {"name": "t", "inputSchema": {"type": "object", "properties": props}}


@pytest.mark.parametrize(
    ("tool", "problem"),
    [
        (_tool(region={"type": "string", "x-mcp-header": "Region"}), None),
        (_tool(n={"type": "integer", "x-mcp-header": "N"}, b={"type": "boolean", "x-mcp-header": "B"}), None),
        (_tool(n={"type": ["string", "null"], "x-mcp-header": "N"}), None),
        (_tool(outer={"type": "object", "properties": {"inner": {"type": "string", "x-mcp-header": "Inner"}}}), None),
        (_tool(v={"type": "string", "x-mcp-header": ""}), "not an HTTP token"),
        (_tool(v={"type": "string", "x-mcp-header": "My Region"}), "not an HTTP token"),
        (_tool(v={"type": "string", "x-mcp-header": "Region:Primary"}), "not an HTTP token"),
        (_tool(v={"type": "string", "x-mcp-header": "Région"}), "not an HTTP token"),
        (_tool(v={"type": "string", "x-mcp-header": "Region\t1"}), "not an HTTP token"),
        (_tool(v={"type": "string", "x-mcp-header": 5}), "not an HTTP token"),
        (_tool(d={"type": "object", "x-mcp-header": "Data"}), "type 'object'"),
        (_tool(a={"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}), "type 'array'"),
        (_tool(n={"type": "null", "x-mcp-header": "Nil"}), "type 'null'"),
        (_tool(s={"type": "number", "x-mcp-header": "Score"}), "type 'number'"),
        (_tool(s={"x-mcp-header": "Untyped"}), "type None"),
        (
            _tool(a={"type": "string", "x-mcp-header": "Region"}, b={"type": "string", "x-mcp-header": "Region"}),
            "used twice",
        ),
        (
            _tool(a={"type": "string", "x-mcp-header": "MyField"}, b={"type": "string", "x-mcp-header": "myfield"}),
            "used twice",
        ),
        (_tool(a={"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}), "not reachable"),
        (_tool(a={"anyOf": [{"type": "string", "x-mcp-header": "X"}]}), "not reachable"),
        (
            {"name": "t", "inputSchema": {"type": "object", "$defs": {"r": {"type": "string", "x-mcp-header": "R"}}}},
            "not reachable",
        ),
        (
            {
                "name": "t",
                "inputSchema": {"type": "object", "if": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}},
            },
            "not reachable",
        ),
        ({"name": "no schema"}, None),
    ],
)
def test_tools_with_invalid_x_mcp_header_annotations_are_named(tool, problem):
    found = rules.tool_header_problem(tool)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


@pytest.mark.parametrize(
    ("status", "body", "fallback"),
    [
        (405, b"Method Not Allowed", True),
        (404, b"", True),
        (
            400,
            json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "no session"}}).encode(),
            True,
        ),
        (
            400,
            json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x", "data": {}}}).encode(),
            False,
        ),
        (400, json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "x"}}).encode(), False),
        (404, json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}}).encode(), False),
        (400, json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}}).encode(), True),
        (500, b"", False),
        (200, b"{}", False),
    ],
)
def test_when_initialize_falls_back_to_http_sse(status, body, fallback):
    assert rules.use_http_sse(status, body) is fallback


def test_http_failures_become_non_modern_json_rpc_errors():
    err = rules.http_failure(503, "Service Unavailable", b"try later\n")
    assert err == {"code": -32000, "message": "HTTP 503 Service Unavailable: try later", "data": {"status": 503}}
    assert rules.http_failure(None, "connection reset") == {"code": -32000, "message": "connection reset"}
    assert rules.error_in(b'{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}') == (
        3,
        {"code": -32602, "message": "bad"},
    )
    assert rules.error_in(b"not json") is None and rules.error_in(b'{"result": {}}') is None
    assert rules.is_json(b"[1]") and not rules.is_json(b"<html>")


def test_the_http_sse_endpoint_must_be_on_the_same_origin():
    assert rules.endpoint_url("http://h:1/sse", "/messages/?session_id=a") == "http://h:1/messages/?session_id=a"
    assert rules.endpoint_url("http://h:1/x/sse", "messages") == "http://h:1/x/messages"
    with pytest.raises(ValueError, match="not on the server's origin"):
        rules.endpoint_url("http://h:1/sse", "http://evil.example/messages")


def test_retry_delays():
    assert rules.retry_delay(500, 3) == 0.5  # the server's retry wins
    assert [rules.retry_delay(None, a) for a in range(7)] == [1, 2, 4, 8, 16, 30, 30]
