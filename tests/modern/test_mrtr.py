"""examples/trip_planner.py: one multi-round elicitation + sampling tool, the same code in both
eras — server→client requests in 2025-11-25, input_required round trips in 2026-07-28."""

from __future__ import annotations

import base64
import json
import sys

import pytest

from tests.conftest import EXAMPLES
from tests.support.stdio_peer import StdioPeer

PLANNER = [sys.executable, str(EXAMPLES / "trip_planner.py")]
CAPS = {"elicitation": {}, "sampling": {}}
PREFS = {"action": "accept", "content": {"budget": 80, "pace": "busy"}}
DRAFT = {
    "role": "assistant",
    "content": {"type": "text", "text": "Museum, lunch, river walk."},
    "model": "test-model",
    "stopReason": "endTurn",
}
EXPECTED = "Itinerary for Lyon (80 EUR, busy):\nMuseum, lunch, river walk."


def test_legacy_era_asks_the_client_directly(wire_validator):
    with StdioPeer.spawn(PLANNER) as p:
        p.initialize("2025-11-25", capabilities=CAPS)
        call = p.request_msg("tools/call", {"name": "plan_trip", "arguments": {"city": "Lyon"}})
        p.send(call)
        elicit = p.recv()
        assert elicit["method"] == "elicitation/create"
        assert elicit["params"]["mode"] == "form" and elicit["params"]["requestedSchema"]["required"] == ["budget"]
        p.send({"jsonrpc": "2.0", "id": elicit["id"], "result": PREFS})
        sample = p.recv()
        assert sample["method"] == "sampling/createMessage"
        assert "Lyon" in sample["params"]["messages"][0]["content"]["text"]
        p.send({"jsonrpc": "2.0", "id": sample["id"], "result": DRAFT})
        result = p.response(call["id"])["result"]
        assert result["content"][0]["text"] == EXPECTED
        assert p.close() == 0


@pytest.fixture
def planner(wire_validator):
    with StdioPeer.spawn(PLANNER) as p:
        p.modern(capabilities=CAPS)
        yield p
        assert p.close() == 0


def _call(p: StdioPeer, **extra) -> dict:
    return p.call("tools/call", {"name": "plan_trip", "arguments": {"city": "Lyon"}, **extra})


def test_modern_era_round_trips_until_complete(planner):
    first = _call(planner)
    assert first["resultType"] == "input_required"
    [(k1, req1)] = first["inputRequests"].items()
    assert req1["method"] == "elicitation/create" and req1["params"]["message"].startswith("Planning a day in Lyon")
    second = _call(planner, inputResponses={k1: PREFS}, requestState=first["requestState"])
    assert second["resultType"] == "input_required"
    [(k2, req2)] = second["inputRequests"].items()
    assert k2 != k1 and req2["method"] == "sampling/createMessage"
    assert req2["params"]["systemPrompt"] == "You are a concise travel planner."
    done = _call(
        planner, inputResponses={k2: DRAFT, "unasked": {"action": "cancel"}}, requestState=second["requestState"]
    )
    assert done["resultType"] == "complete"
    assert done["content"] == [{"type": "text", "text": EXPECTED}] and "structuredContent" not in done


def test_missing_or_malformed_answers_are_asked_again(planner):
    first = _call(planner)
    [k1] = first["inputRequests"]
    again = _call(planner, inputResponses={}, requestState=first["requestState"])
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == [k1]
    planner.validate = False  # a malformed ElicitResult, on purpose
    again = _call(planner, inputResponses={k1: {"action": "maybe"}}, requestState=again["requestState"])
    planner.validate = True
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == [k1]


def test_decline_ends_without_sampling(planner):
    first = _call(planner)
    [k1] = first["inputRequests"]
    done = _call(planner, inputResponses={k1: {"action": "decline"}}, requestState=first["requestState"])
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "No trip planned: the user chose to decline."


def _tamper(state: str) -> str:
    version, payload, mac = state.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body["a"]["elicit-0"] = {"action": "accept", "content": {"budget": 1_000_000}}
    forged = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    return f"{version}.{forged}.{mac}"


def test_tampered_or_foreign_state_is_invalid_params(planner):
    first = _call(planner)
    [k1] = first["inputRequests"]
    second = _call(planner, inputResponses={k1: PREFS}, requestState=first["requestState"])
    for bad in (_tamper(second["requestState"]), "garbage", second["requestState"][:-2] + "xx"):
        err = planner.request(
            "tools/call",
            {"name": "plan_trip", "arguments": {"city": "Lyon"}, "requestState": bad, "inputResponses": {}},
        )["error"]
        assert err["code"] == -32602 and "requestState" in err["message"]
    # state issued for one request is refused on another (other arguments)
    err = planner.request(
        "tools/call", {"name": "plan_trip", "arguments": {"city": "Paris"}, "requestState": second["requestState"]}
    )["error"]
    assert err["code"] == -32602 and "different request" in err["message"]


def test_state_from_another_server_secret_is_refused(wire_validator):
    states = []
    for _ in range(2):
        with StdioPeer.spawn(PLANNER) as p:
            p.modern(capabilities=CAPS)
            states.append((p, _call(p)))
            if len(states) == 2:
                err = p.request(
                    "tools/call",
                    {"name": "plan_trip", "arguments": {"city": "Lyon"}, "requestState": states[0][1]["requestState"]},
                )["error"]
                assert err["code"] == -32602
            assert p.close() == 0


def test_shared_secret_lets_another_process_continue(wire_validator):
    env = {"MCPIO_STATE_SECRET": "shared-by-the-deployment"}
    with StdioPeer.spawn(PLANNER, env=env) as p:
        p.modern(capabilities=CAPS)
        first = _call(p)
        assert p.close() == 0
    with StdioPeer.spawn(PLANNER, env=env) as p:
        p.modern(capabilities=CAPS)
        [k1] = first["inputRequests"]
        second = _call(p, inputResponses={k1: PREFS}, requestState=first["requestState"])
        assert second["inputRequests"] and "sample-1" in second["inputRequests"]
        assert p.close() == 0


def test_only_declared_capabilities_are_requested(wire_validator):
    with StdioPeer.spawn(PLANNER) as p:
        p.modern(capabilities={"sampling": {}})  # no elicitation
        err = p.request("tools/call", {"name": "plan_trip", "arguments": {"city": "Lyon"}})["error"]
        assert err["code"] == -32021 and err["data"] == {"requiredCapabilities": {"elicitation": {}}}
        p.modern(capabilities={"elicitation": {}})  # elicitation but no sampling: asks, then -32021
        first = p.call("tools/call", {"name": "plan_trip", "arguments": {"city": "Lyon"}})
        [k1] = first["inputRequests"]
        err = p.request(
            "tools/call",
            {
                "name": "plan_trip",
                "arguments": {"city": "Lyon"},
                "inputResponses": {k1: PREFS},
                "requestState": first["requestState"],
            },
        )["error"]
        assert err["code"] == -32021 and err["data"] == {"requiredCapabilities": {"sampling": {}}}
        assert p.close() == 0
