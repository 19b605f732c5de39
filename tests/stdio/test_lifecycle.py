"""The whole legacy lifecycle against a real ``python examples/quickstart.py`` subprocess, for
each legacy protocol version; every message either side writes is validated against that
version's official schema (tests/support/wire.py)."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import EXAMPLES
from tests.support.stdio_peer import StdioPeer

LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
QUICKSTART = [sys.executable, str(EXAMPLES / "quickstart.py")]


@pytest.fixture(params=LEGACY)
def peer(request, wire_validator):
    with StdioPeer.spawn(QUICKSTART) as p:
        p.init_result = p.initialize(request.param)
        yield p
        assert p.close() == 0


def test_initialize_result(peer):
    r = peer.init_result
    assert r["protocolVersion"] == peer.version
    assert r["serverInfo"] == {"name": "demo", "version": "1.0.0"}
    assert r["instructions"] == "Arithmetic and greetings."
    caps = r["capabilities"]
    assert set(caps) >= {"tools", "resources", "prompts", "logging"}
    assert ("completions" in caps) == (peer.version != "2024-11-05")


def test_tools_list_and_call(peer):
    tools = {t["name"]: t for t in peer.call("tools/list")["tools"]}
    assert set(tools) == {"add", "slow_sum"}
    add = tools["add"]
    assert add["description"] == "Add two numbers."
    assert add["inputSchema"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,  # an argument add does not take is refused (issue 34)
    }
    structured = peer.version >= "2025-06-18"
    assert ("outputSchema" in add) == structured
    result = peer.call("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert result["content"] == [{"type": "text", "text": "5"}]
    assert not result.get("isError")
    if structured:
        assert result["structuredContent"] == {"result": 5}
    else:
        assert "structuredContent" not in result


def test_bad_arguments_are_tool_errors_and_unknown_tool_is_protocol_error(peer):
    r = peer.call("tools/call", {"name": "add", "arguments": {"a": "two", "b": 3}})
    assert r["isError"] is True
    assert "'a'" in r["content"][0]["text"]
    r = peer.call("tools/call", {"name": "add", "arguments": {"a": 1}})
    assert r["isError"] is True and "'b'" in r["content"][0]["text"]
    resp = peer.request("tools/call", {"name": "subtract", "arguments": {}})
    assert resp["error"]["code"] == -32602
    assert "subtract" in resp["error"]["message"]


def test_progress_and_logging(peer):
    others: list = []
    token = "tok-1"
    result = peer.call(
        "tools/call",
        {"name": "slow_sum", "arguments": {"values": [1, 2, 3.5]}, "_meta": {"progressToken": token}},
        others=others,
    )
    assert result["content"][0]["text"] == "6.5"
    progress = [m["params"] for m in others if m.get("method") == "notifications/progress"]
    assert [p["progress"] for p in progress] == [0, 1, 2]
    assert all(p["progressToken"] == token and p["total"] == 3 for p in progress)
    logs = [m["params"] for m in others if m.get("method") == "notifications/message"]
    assert [(m["level"], m["data"]) for m in logs] == [("info", "step 0"), ("info", "step 1"), ("info", "step 2")]
    # Raise the level: info messages stop.
    assert peer.call("logging/setLevel", {"level": "warning"}) == {}
    others.clear()
    peer.call("tools/call", {"name": "slow_sum", "arguments": {"values": [1]}}, others=others)
    assert not [m for m in others if m.get("method") == "notifications/message"]
    assert not [m for m in others if m.get("method") == "notifications/progress"]  # no token, no progress


def test_resources(peer):
    assert peer.call("resources/list") == {"resources": []}
    templates = peer.call("resources/templates/list")["resourceTemplates"]
    assert templates == [
        {"uriTemplate": "greeting://{name}", "name": "greeting", "description": "A personal greeting."}
    ]
    contents = peer.call("resources/read", {"uri": "greeting://Ada"})["contents"]
    assert contents == [{"uri": "greeting://Ada", "mimeType": "text/plain", "text": "Hello, Ada!"}]
    missing = peer.request("resources/read", {"uri": "nothing://here"})
    assert missing["error"]["code"] == -32002
    assert missing["error"]["data"] == {"uri": "nothing://here"}
    assert peer.call("resources/subscribe", {"uri": "greeting://Ada"}) == {}
    assert peer.call("resources/unsubscribe", {"uri": "greeting://Ada"}) == {}


def test_prompts_and_completion(peer):
    prompts = peer.call("prompts/list")["prompts"]
    assert prompts == [{"name": "review_code", "arguments": [{"name": "code", "required": True}]}]
    got = peer.call("prompts/get", {"name": "review_code", "arguments": {"code": "x = 1"}})
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Please review this code:\n\nx = 1"}}
    ]
    missing = peer.request("prompts/get", {"name": "review_code", "arguments": {}})
    assert missing["error"]["code"] == -32602 and "code" in missing["error"]["message"]
    if peer.version != "2024-11-05":
        c = peer.call(
            "completion/complete",
            {"ref": {"type": "ref/resource", "uri": "greeting://{name}"}, "argument": {"name": "name", "value": "A"}},
        )
        assert c["completion"]["values"] == []


def test_ping_both_states(peer):
    peer.ping()


def test_pagination_cursor_errors(peer):
    resp = peer.request("tools/list", {"cursor": "not-a-cursor"})
    assert resp["error"]["code"] == -32602


@pytest.mark.parametrize("asked", ["1999-01-01", "2026-07-28-not-a-version"])
def test_unsupported_version_gets_latest_legacy(asked, wire_validator):
    with StdioPeer.spawn(QUICKSTART) as p:
        resp = p.request(
            "initialize", {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        )
        assert resp["result"]["protocolVersion"] == "2025-11-25"
        assert p.close() == 0


def test_requests_before_initialize_get_clear_error_and_ping_works(wire_validator):
    with StdioPeer.spawn(QUICKSTART) as p:
        resp = p.request("tools/list")
        assert resp["error"]["code"] == -32600
        assert "initialize" in resp["error"]["message"]
        assert p.request("ping")["result"] == {}
        p.initialize("2025-11-25")
        assert p.call("tools/list")["tools"]
        assert p.close() == 0


def test_batch_only_in_2025_03_26(wire_validator):
    with StdioPeer.spawn(QUICKSTART) as p:
        p.initialize("2025-03-26")
        batch = [
            p.request_msg("ping"),
            p.request_msg("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}),
            {"jsonrpc": "2.0", "method": "notifications/whatever"},
        ]
        p.send(batch)
        reply = p.recv()
        assert isinstance(reply, list)
        by_id = {m["id"]: m for m in reply}
        assert by_id[batch[0]["id"]]["result"] == {}
        assert by_id[batch[1]["id"]]["result"]["content"][0]["text"] == "2"
        assert len(reply) == 2
        assert p.close() == 0
    with StdioPeer.spawn(QUICKSTART) as p:
        p.initialize("2025-06-18")
        p.send_raw(b'[{"jsonrpc":"2.0","id":77,"method":"ping"}]\n')
        err = p.recv()
        assert err["error"]["code"] == -32600 and err["id"] is None
        assert "batch" in err["error"]["message"].lower()
        p.ping()
        assert p.close() == 0


def test_eof_answers_every_request_already_received(wire_validator):
    with StdioPeer.spawn(QUICKSTART) as p:
        p.initialize("2025-11-25")
        ids = []
        for i in range(50):
            m = p.request_msg("tools/call", {"name": "slow_sum", "arguments": {"values": [i, 1]}})
            ids.append(m["id"])
            p.send(m)
        p.proc.stdin.close()
        got = {}
        while len(got) < len(ids):
            msg = p.recv()
            if "id" in msg and "method" not in msg:
                got[msg["id"]] = msg
        assert sorted(got) == sorted(ids)
        assert all(got[i]["result"]["content"][0]["text"] == str(float(n + 1)) for n, i in enumerate(ids))
        assert p.proc.wait(10) == 0


def test_requests_pipelined_behind_initialize_are_served_after_its_result(wire_validator):
    with StdioPeer.spawn(QUICKSTART) as p:
        p.version = "2025-11-25"
        init = p.request_msg(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "eager", "version": "1"}},
        )
        call = p.request_msg("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        p.send_raw((json.dumps(init) + "\n" + json.dumps(call) + "\n").encode())  # one write, no waiting
        first, second = p.recv(), p.recv()
        assert first["id"] == init["id"] and first["result"]["protocolVersion"] == "2025-11-25"
        assert second["id"] == call["id"] and second["result"]["content"][0]["text"] == "3"
        assert p.close() == 0
