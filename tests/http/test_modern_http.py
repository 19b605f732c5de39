"""Streamable HTTP, modern era (2026-07-28) on the same endpoint: POST only, standard and custom
headers, error statuses, request-scoped SSE, cancellation by closing the stream, and
``subscriptions/listen`` as a long-lived stream — real uvicorn server, httpx client."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from tests.http.app import state
from tests.http.conftest import MODERN, messages, modern, modern_headers, read_events, rpc


def test_a_request_is_answered_statelessly_and_no_session_is_minted(srv, http):
    r = http.post(
        srv.url, json=modern(1, "tools/list"), headers=modern_headers("tools/list", **{"mcp-session-id": "x"})
    )
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in r.headers
    result = r.json()["result"]
    assert result["resultType"] == "complete" and "ttlMs" in result and "cacheScope" in result
    assert {t["name"] for t in result["tools"]} >= {"add", "progress"}
    r = http.post(
        srv.url,
        json=modern(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
        headers=modern_headers("tools/call", "add"),
    )
    assert r.json()["result"]["structuredContent"] == {"result": 3}
    assert srv.call(lambda: len(srv.mcp_app.sessions)) == 0


@pytest.mark.parametrize(
    "headers,why",
    [
        (modern_headers("tools/list"), "Mcp-Method"),
        (modern_headers("tools/call"), "Mcp-Name"),
        (modern_headers("tools/call", "sub"), "Mcp-Name"),
        (modern_headers("tools/call", "add", **{"mcp-protocol-version": "2025-11-25"}), "MCP-Protocol-Version"),
    ],
)
def test_header_mismatch_is_400_with_32020(srv, http, headers, why):
    r = http.post(
        srv.url, json=modern(4, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}), headers=headers
    )
    assert r.status_code == 400
    body = r.json()
    assert body["id"] == 4 and body["error"]["code"] == -32020 and why in body["error"]["message"]


def test_mcp_param_headers_are_validated_including_base64(srv, http):
    call = modern(5, "tools/call", {"name": "regional", "arguments": {"region": "Zürich"}})
    base = modern_headers("tools/call", "regional")
    r = http.post(srv.url, json=call, headers=base)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32020  # the header is missing
    r = http.post(srv.url, json=call, headers={**base, "mcp-param-region": "=?base64?WsO8cmljaA==?="})
    assert r.status_code == 200 and r.json()["result"]["content"][0]["text"] == "region Zürich"
    r = http.post(srv.url, json=call, headers={**base, "mcp-param-region": "=?base64?WsO8cmljaA?="})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32020  # bad padding


def test_protocol_errors_set_the_status(srv, http):
    r = http.post(
        srv.url,
        json=modern(1, "server/discover", meta={"io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
        headers=modern_headers("server/discover", **{"mcp-protocol-version": "2099-01-01"}),
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == -32022
    assert MODERN in r.json()["error"]["data"]["supported"]
    r = http.post(srv.url, json=rpc(2, "server/discover", {}), headers=modern_headers("server/discover"))
    assert r.status_code == 400 and r.json()["error"]["code"] == -32602  # no _meta
    for method in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "no/such"):
        r = http.post(srv.url, json=modern(3, method), headers=modern_headers(method))
        assert r.status_code == 404 and r.json()["error"]["code"] == -32601 and r.json()["id"] == 3, method
    r = http.post(
        srv.url,
        json=modern(4, "tools/call", {"name": "ask_llm", "arguments": {"prompt": "x"}}),
        headers=modern_headers("tools/call", "ask_llm"),
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == -32021
    assert r.json()["error"]["data"]["requiredCapabilities"] == {"sampling": {}}


def test_get_and_delete_without_session_are_405_and_notifications_202(srv, http):
    assert http.get(srv.url, headers={"mcp-protocol-version": MODERN}).status_code == 405
    assert http.delete(srv.url, headers={"mcp-protocol-version": MODERN}).status_code == 405
    r = http.post(
        srv.url,
        json={
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 1, "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}},
        },
        headers=modern_headers("notifications/cancelled"),
    )
    assert r.status_code == 202


def test_input_required_round_trip_over_http(srv, http):
    caps = {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
    call = modern(6, "tools/call", {"name": "ask_llm", "arguments": {"prompt": "hi"}}, meta=caps)
    first = http.post(srv.url, json=call, headers=modern_headers("tools/call", "ask_llm")).json()["result"]
    assert first["resultType"] == "input_required"
    [key] = first["inputRequests"]
    retry = modern(
        7,
        "tools/call",
        {
            "name": "ask_llm",
            "arguments": {"prompt": "hi"},
            "requestState": first["requestState"],
            "inputResponses": {key: {"role": "assistant", "model": "m", "content": {"type": "text", "text": "yo"}}},
        },
        meta=caps,
    )
    second = http.post(srv.url, json=retry, headers=modern_headers("tools/call", "ask_llm")).json()["result"]
    assert second["content"][0]["text"] == "LLM said: yo"


def test_request_scoped_sse_carries_progress_then_the_answer(srv, http):
    call = modern(
        8,
        "tools/call",
        {"name": "progress", "arguments": {"steps": 2}},
        meta={"progressToken": "t", "io.modelcontextprotocol/logLevel": "info"},
    )
    with http.stream("POST", srv.url, json=call, headers=modern_headers("tools/call", "progress")) as r:
        assert r.headers["content-type"] == "text/event-stream"
        assert r.headers["x-accel-buffering"] == "no"
        events = read_events(r)
    assert all(e.data and e.id is None for e in events)  # no priming, no ids: no resumability in 2026
    msgs = messages(events)
    assert [m["method"] for m in msgs[:-1]] == ["notifications/progress", "notifications/message"] * 2
    assert msgs[-1]["id"] == 8 and msgs[-1]["result"]["resultType"] == "complete"


def test_logs_only_when_the_request_asks(srv, http):
    call = modern(9, "tools/call", {"name": "progress", "arguments": {"steps": 1}}, meta={"progressToken": 1})
    with http.stream("POST", srv.url, json=call, headers=modern_headers("tools/call", "progress")) as r:
        msgs = messages(read_events(r))
    assert "notifications/message" not in [m.get("method") for m in msgs]


def test_closing_the_stream_cancels_the_request(serve, http):
    srv = serve(sse_after=0.05)
    state.pop("slow_cancelled", None)
    state.pop("slow_started", None)
    call = modern(10, "tools/call", {"name": "slow", "arguments": {"seconds": 5}})
    with http.stream("POST", srv.url, json=call, headers=modern_headers("tools/call", "slow")) as r:
        for _ in r.iter_raw():
            break  # the stream is open (a keep-alive or priming byte came): hang up
    deadline = time.monotonic() + 3
    while not state.get("slow_cancelled") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert state.get("slow_started") and state.get("slow_cancelled")


def test_subscriptions_listen_is_a_long_lived_stream(serve, http):
    srv = serve(keepalive=0.2)
    got: list[dict] = []
    raw: list[bytes] = []
    acked = threading.Event()
    listen = modern(
        11, "subscriptions/listen", {"notifications": {"toolsListChanged": True, "promptsListChanged": True}}
    )

    def reader() -> None:
        with (
            httpx.Client(timeout=10) as c,
            c.stream("POST", srv.url, json=listen, headers=modern_headers("subscriptions/listen")) as r,
        ):
            from mcpio._protocol._http import SSEParser

            p = SSEParser()
            for chunk in r.iter_raw():
                raw.append(chunk)
                for e in p.feed(chunk):
                    got.append(json.loads(e.data))
                    acked.set()
                if len(got) >= 2 and b"keep-alive" in b"".join(raw):
                    return

    t = threading.Thread(target=reader)
    t.start()
    assert acked.wait(5)
    r = http.post(
        srv.url,
        json=modern(12, "tools/call", {"name": "toggle", "arguments": {}}),
        headers=modern_headers("tools/call", "toggle"),
    )
    assert r.status_code == 200
    t.join(5)
    assert got[0]["method"] == "notifications/subscriptions/acknowledged"
    assert got[0]["params"]["notifications"] == {"toolsListChanged": True}  # no prompts here: not honoured
    assert got[1]["method"] == "notifications/tools/list_changed"
    assert got[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 11
    assert b": keep-alive" in b"".join(raw)


def test_json_only_client_gets_the_answer_alone(srv, http):
    call = modern(13, "tools/call", {"name": "progress", "arguments": {"steps": 2}}, meta={"progressToken": 2})
    r = http.post(srv.url, json=call, headers=modern_headers("tools/call", "progress", accept="application/json"))
    assert r.headers["content-type"] == "application/json" and r.json()["id"] == 13
