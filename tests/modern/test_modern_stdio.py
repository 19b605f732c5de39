"""The stateless 2026-07-28 era over stdio, on real server subprocesses that also serve the
legacy era. Every message either side writes is validated against the 2026-07-28 schema."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.support.stdio_peer import StdioPeer

QUICKSTART = [sys.executable, str(EXAMPLES / "quickstart.py")]
DYNAMIC = [sys.executable, str(ROOT / "tests" / "servers" / "dynamic_server.py")]
MODERN = "2026-07-28"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUB_ID = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture
def quick(wire_validator):
    with StdioPeer.spawn(QUICKSTART) as p:
        p.modern()
        yield p
        assert p.close() == 0


@pytest.fixture
def dynamic(wire_validator):
    with StdioPeer.spawn(DYNAMIC) as p:
        p.modern()
        yield p
        assert p.close() == 0


def test_discover(quick):
    r = quick.call("server/discover")
    assert r["resultType"] == "complete"
    assert r["supportedVersions"][0] == MODERN and "2025-11-25" in r["supportedVersions"]
    assert set(r["capabilities"]) >= {"tools", "resources", "prompts"}
    assert r["instructions"] == "Arithmetic and greetings."
    assert r["_meta"][SERVER_INFO] == {"name": "demo", "version": "1.0.0"}
    assert r["ttlMs"] == 0 and r["cacheScope"] == "private"


def test_every_result_is_decorated_and_cacheable_ones_carry_hints(quick):
    tools = quick.call("tools/list")
    assert tools["resultType"] == "complete" and tools["ttlMs"] == 0 and tools["cacheScope"] == "private"
    assert tools["_meta"][SERVER_INFO]["name"] == "demo"
    assert {t["name"] for t in tools["tools"]} == {"add", "slow_sum"}
    call = quick.call("tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})
    assert call["resultType"] == "complete" and call["structuredContent"] == {"result": 42}
    assert "ttlMs" not in call and call["_meta"][SERVER_INFO]["version"] == "1.0.0"
    for method in ("prompts/list", "resources/list", "resources/templates/list"):
        r = quick.call(method)
        assert r["resultType"] == "complete" and "ttlMs" in r and "cacheScope" in r
    read = quick.call("resources/read", {"uri": "greeting://Ada"})
    assert read["contents"][0]["text"] == "Hello, Ada!" and read["ttlMs"] == 0
    got = quick.call("prompts/get", {"name": "review_code", "arguments": {"code": "x"}})
    assert got["resultType"] == "complete" and "ttlMs" not in got


def test_cache_hints_per_server_and_per_resource(dynamic):
    assert dynamic.call("tools/list")["ttlMs"] == 5000
    assert dynamic.call("tools/list")["cacheScope"] == "public"
    memo = dynamic.call("resources/read", {"uri": "memo://a"})
    assert (memo["ttlMs"], memo["cacheScope"]) == (60000, "private")
    info = dynamic.call("server/discover")["_meta"][SERVER_INFO]
    assert info == {"name": "dynamic", "version": "2.0.0", "title": "Dynamic"}  # no description in 2026


@pytest.mark.parametrize(
    "meta,code,needle",
    [
        (
            {"io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": {}},
            -32022,
            "1900-01-01",
        ),
        (
            {"io.modelcontextprotocol/protocolVersion": "2025-11-25", "io.modelcontextprotocol/clientCapabilities": {}},
            -32022,
            "2025-11-25",
        ),
        ({"io.modelcontextprotocol/protocolVersion": MODERN}, -32602, "clientCapabilities"),
        (
            {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": []},
            -32602,
            "clientCapabilities",
        ),
        ({"io.modelcontextprotocol/clientCapabilities": {}}, -32602, "protocolVersion"),
        (
            {"io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {}},
            -32602,
            "protocolVersion",
        ),
        (
            {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/logLevel": "loud",
            },
            -32602,
            "logLevel",
        ),
    ],
)
def test_meta_validation(wire_validator, meta, code, needle):
    with StdioPeer.spawn(QUICKSTART) as p:
        p.version = MODERN  # validate replies as 2026-07-28, but send this _meta exactly
        msg = p.request_msg("tools/list", {"_meta": meta})
        p.send_raw(__import__("json").dumps(msg).encode() + b"\n")
        err = p.response(msg["id"])["error"]
        assert err["code"] == code and needle in err["message"], err
        if code == -32022:
            assert err["data"] == {
                "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                "requested": meta["io.modelcontextprotocol/protocolVersion"],
            }
        assert p.close() == 0


@pytest.mark.parametrize(
    "method,params",
    [
        ("initialize", {"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
        ("ping", None),
        ("logging/setLevel", {"level": "debug"}),
        ("resources/subscribe", {"uri": "greeting://Ada"}),
        ("resources/unsubscribe", {"uri": "greeting://Ada"}),
        ("no/such/method", None),
    ],
)
def test_removed_and_unknown_methods_are_method_not_found(quick, method, params):
    quick.validate = False  # these requests are not 2026-07-28 messages by construction
    err = quick.request(method, params)["error"]
    assert err["code"] == -32601 and method in err["message"]


def test_resource_not_found_is_invalid_params_with_uri(quick):
    err = quick.request("resources/read", {"uri": "nothing://here"})["error"]
    assert err["code"] == -32602 and err["data"] == {"uri": "nothing://here"}


def test_unknown_tool_and_bad_arguments(quick):
    assert quick.request("tools/call", {"name": "nope", "arguments": {}})["error"]["code"] == -32602
    r = quick.call("tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}})
    assert r["isError"] is True and r["resultType"] == "complete"


def test_logging_only_when_the_request_asks_at_or_above_its_level(dynamic):
    others: list = []
    dynamic.call("tools/call", {"name": "chatty", "arguments": {}}, others=others)
    assert not [m for m in others if m.get("method") == "notifications/message"]
    others.clear()
    dynamic.call(
        "tools/call",
        {"name": "chatty", "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": "warning"}},
        others=others,
    )
    levels = [m["params"]["level"] for m in others if m.get("method") == "notifications/message"]
    assert levels == ["warning", "error"]


def test_progress(quick):
    others: list = []
    r = quick.call(
        "tools/call",
        {"name": "slow_sum", "arguments": {"values": [1, 2]}, "_meta": {"progressToken": 7}},
        others=others,
    )
    assert r["content"][0]["text"] == "3.0"
    assert [m["params"]["progress"] for m in others if m.get("method") == "notifications/progress"] == [0, 1]


def test_missing_client_capability_is_32021(dynamic):
    err = dynamic.request("tools/call", {"name": "my_roots", "arguments": {}})["error"]
    assert err["code"] == -32021
    assert err["data"] == {"requiredCapabilities": {"roots": {}}}


def test_roots_via_input_required(wire_validator):
    with StdioPeer.spawn(DYNAMIC) as p:
        p.modern(capabilities={"roots": {}})
        first = p.call("tools/call", {"name": "my_roots", "arguments": {}})
        assert first["resultType"] == "input_required"
        [(key, req)] = first["inputRequests"].items()
        assert req == {"method": "roots/list"}
        done = p.call(
            "tools/call",
            {
                "name": "my_roots",
                "arguments": {},
                "inputResponses": {key: {"roots": [{"uri": "file:///tmp/x"}]}},
                "requestState": first["requestState"],
            },
        )
        assert done["resultType"] == "complete" and done["structuredContent"] == {"result": ["file:///tmp/x"]}
        assert p.close() == 0


def test_both_eras_on_one_process(wire_validator):
    with StdioPeer.spawn(QUICKSTART) as p:
        p.initialize("2025-11-25")
        legacy = p.call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        assert "resultType" not in legacy and "_meta" not in legacy
        p.modern()
        modern = p.call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        assert modern["resultType"] == "complete"
        p.modern_meta = None
        p.version = "2025-11-25"
        assert p.call("ping") == {}
        assert p.close() == 0


def test_modern_requests_need_no_initialize_and_initialize_still_works_after(wire_validator):
    with StdioPeer.spawn(QUICKSTART) as p:
        p.modern()
        assert p.call("tools/list")["tools"]
        p.modern_meta = None
        r = p.initialize("2025-06-18")
        assert r["protocolVersion"] == "2025-06-18"
        assert p.close() == 0


# ---------------------------------------------------------------- subscriptions/listen
def _listen(peer: StdioPeer, notifications: dict) -> tuple[int, dict]:
    msg = peer.request_msg("subscriptions/listen", {"notifications": notifications})
    peer.send(msg)
    ack = peer.recv()
    assert ack["method"] == "notifications/subscriptions/acknowledged", ack
    assert ack["params"]["_meta"] == {SUB_ID: msg["id"]}
    return msg["id"], ack["params"]["notifications"]


def test_listen_acknowledges_honoured_subset_then_sends_only_opted_in(dynamic):
    sub, kept = _listen(
        dynamic,
        {
            "toolsListChanged": True,
            "promptsListChanged": False,
            "resourceSubscriptions": ["memo://a"],
            "somethingElse": True,
        },
    )
    assert kept == {"toolsListChanged": True, "resourceSubscriptions": ["memo://a"]}
    others: list = []
    dynamic.call("tools/call", {"name": "add_tool", "arguments": {"name": "shiny"}}, others=others)
    dynamic.call("tools/call", {"name": "write_memo", "arguments": {"key": "a", "text": "new"}}, others=others)
    dynamic.call("tools/call", {"name": "write_memo", "arguments": {"key": "b", "text": "other"}}, others=others)
    dynamic.call("tools/list")  # a barrier: list_changed was sent before this answer
    notes = [m for m in others if "method" in m]
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {SUB_ID: sub}}} in notes
    updated = [m["params"] for m in notes if m["method"] == "notifications/resources/updated"]
    assert updated == [{"uri": "memo://a", "_meta": {SUB_ID: sub}}]
    assert "shiny" in {t["name"] for t in dynamic.call("tools/list")["tools"]}


def test_listen_ends_on_cancel_with_nothing_more(dynamic):
    sub, _ = _listen(dynamic, {"toolsListChanged": True})
    dynamic.notify("notifications/cancelled", {"requestId": sub, "reason": "done"})
    others: list = []
    dynamic.call("tools/call", {"name": "add_tool", "arguments": {"name": "after_cancel"}}, others=others)
    dynamic.call("tools/list")
    assert not [m for m in others if m.get("method") == "notifications/tools/list_changed"]
    assert not [m for m in others if m.get("id") == sub]


def test_listen_ends_gracefully_at_eof(wire_validator):
    with StdioPeer.spawn(DYNAMIC) as p:
        p.modern()
        sub, _ = _listen(p, {"toolsListChanged": True})
        p.proc.stdin.close()
        final = p.response(sub)
        assert final["result"]["resultType"] == "complete"
        assert final["result"]["_meta"][SUB_ID] == sub
        assert p.proc.wait(10) == 0
