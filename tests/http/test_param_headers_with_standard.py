"""check_standard_headers with ``param_headers`` gives what the app did before with two calls
(issue 17: one): the standard headers' verdict, then a tools/call's Mcp-Param-* (check_param_headers)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import pytest

from mcpio._protocol import _http as h
from mcpio._versions import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION

META = {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}}
DECLARED = {"lookup": {"region": ("region",), "deep": ("opts", "level")}, "plain": {}}


def declared_of(name: str) -> Mapping[str, tuple[str, ...]] | None:
    return DECLARED.get(name)


def reference(headers: Mapping[str, str], message: dict[str, Any]) -> h.Refusal | None:
    """The app's two steps before (``_http_server._post``)."""
    refusal = h.check_standard_headers(headers, message)
    if refusal is None and message.get("method") == "tools/call":
        params = message.get("params") or {}
        name = params.get("name")
        declared = declared_of(name) if isinstance(name, str) else None
        if declared:
            refusal = h.check_param_headers(headers, declared, params.get("arguments"), message.get("id"))
    return refusal


def call(name: Any, arguments: Any, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"_meta": META, **extra}
    if name is not ...:
        params["name"] = name
    if arguments is not ...:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


MESSAGES = [
    call("lookup", {"region": "eu", "opts": {"level": 3}}),
    call("lookup", {"region": "eu"}),
    call("lookup", {}),
    call("lookup", ...),
    call("lookup", "not an object"),
    call("plain", {"region": "eu"}),
    call("unknown", {"region": "eu"}),
    call(5, {"region": "eu"}),
    call(..., {"region": "eu"}),
    {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": META}},
    {"jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": {"name": "lookup", "_meta": META}},
    {"jsonrpc": "2.0", "method": "tools/call"},
]
VALUES: dict[str, list[str | None]] = {
    h.MCP_METHOD: ["tools/call", "tools/list", "prompts/get", None],
    h.MCP_NAME: ["lookup", "plain", "=?base64?bG9va3Vw?=", "x", None],
    h.MCP_PARAM + "region": ["eu", " eu ", "us", "=?base64?ZXU=?=", "=?base64?!!?=", None],
    h.MCP_PARAM + "deep": ["3", "4", None],
}


@pytest.mark.parametrize("message", MESSAGES)
def test_same_verdicts_as_the_two_steps(message: dict[str, Any]) -> None:
    for combo in itertools.product(*VALUES.values()):
        headers = {k: v for k, v in zip(VALUES, combo, strict=True) if v is not None}
        headers[h.PROTOCOL_VERSION] = "2026-07-28"
        assert h.check_standard_headers(headers, message, declared_of) == reference(headers, message), headers
        assert h.check_standard_headers(headers, message, None) == h.check_standard_headers(headers, message)
