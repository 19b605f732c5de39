"""The tasks extension (io.modelcontextprotocol/tasks, 2026-07-28) on a real stdio server
(examples/tasks.py). Every message both ways is validated against the 2026-07-28 schema plus
the extension's types (tests/support/tasks_schema.json)."""

from __future__ import annotations

import json
import sys
import time

import pytest

from tests.conftest import EXAMPLES
from tests.support.stdio_peer import StdioPeer

TASKS = [sys.executable, str(EXAMPLES / "tasks.py")]
EXT = "io.modelcontextprotocol/tasks"
WITH_TASKS = {"elicitation": {}, "extensions": {EXT: {}}}
YES = {"action": "accept", "content": {"confirm": True}}
TERMINAL = ("completed", "failed", "cancelled")


@pytest.fixture
def server(wire_validator):
    with StdioPeer.spawn(TASKS) as p:
        p.modern(capabilities=WITH_TASKS)
        yield p
        assert p.close() == 0


def call(p: StdioPeer, tool: str, **arguments) -> dict:
    return p.call("tools/call", {"name": tool, "arguments": arguments})


def get(p: StdioPeer, task_id: str) -> dict:
    return p.call("tasks/get", {"taskId": task_id})


def unchecked(p: StdioPeer, method: str, params: dict) -> dict:
    """Send a request the schema does not allow (bad input on purpose); its answer is still checked."""
    msg = p.request_msg(method, params)
    p.send_raw(json.dumps(msg).encode() + b"\n")
    return p.response(msg["id"])


def poll(p: StdioPeer, task_id: str, until=lambda t: t["status"] in TERMINAL, limit: float = 10.0) -> dict:
    """Poll tasks/get at the task's pollIntervalMs, as a client does, until ``until(task)``."""
    deadline = time.monotonic() + limit
    while True:
        task = get(p, task_id)
        if until(task):
            return task
        assert time.monotonic() < deadline, f"task never got there: {task}"
        time.sleep(task["pollIntervalMs"] / 1000)


def test_discover_announces_the_extension_and_legacy_initialize_does_not(server, wire_validator):
    assert server.call("server/discover")["capabilities"]["extensions"] == {EXT: {}}
    with StdioPeer.spawn(TASKS) as legacy:  # 2025-11-25 has the core tasks instead (test_core_tasks.py)
        caps = legacy.initialize("2025-11-25")["capabilities"]
        assert "extensions" not in caps and caps["tasks"] == {
            "list": {},
            "cancel": {},
            "requests": {"tools": {"call": {}}},
        }
        assert legacy.close() == 0


def test_a_task_is_created_at_once_and_inlines_its_result(server):
    created = call(server, "build_report", topic="birds", pages=2)
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["ttlMs"] == 600_000 and created["pollIntervalMs"] == 500
    first = get(server, created["taskId"])  # durable before the handle was sent
    assert first["taskId"] == created["taskId"] and first["resultType"] == "complete"
    done = poll(server, created["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "Report on birds: 2 pages"}]
    assert done["statusMessage"] == "wrote page 2 of 2"  # progress becomes the status message
    assert "io.modelcontextprotocol/related-task" not in done["result"].get("_meta", {})


def test_progress_and_logs_are_not_sent_for_a_task(server):
    others: list = []
    msg = server.request_msg(
        "tools/call",
        {
            "name": "build_report",
            "arguments": {"topic": "x", "pages": 2},
            "_meta": {"progressToken": "p1", "io.modelcontextprotocol/logLevel": "debug"},
        },
    )
    server.send(msg)
    task_id = server.response(msg["id"], others=others)["result"]["taskId"]
    poll(server, task_id)
    server.call("tools/list")  # everything the server wrote before this answer has been read
    assert not [m for m in server.received if m.get("method") in ("notifications/progress", "notifications/message")]


def test_input_required_then_update_resumes_the_task(server):
    task_id = call(server, "purge_table", table="users")["taskId"]
    waiting = poll(server, task_id, lambda t: t["status"] == "input_required")
    [(key, request)] = waiting["inputRequests"].items()
    assert request["method"] == "elicitation/create" and request["params"]["message"] == "Delete every row of users?"
    # unknown keys and malformed answers are acknowledged and ignored: still waiting
    ack = unchecked(
        server, "tasks/update", {"taskId": task_id, "inputResponses": {"nope": YES, key: {"action": "maybe"}}}
    )
    assert set(ack["result"]) == {"resultType", "_meta"} and ack["result"]["resultType"] == "complete"
    assert get(server, task_id)["inputRequests"] == {key: request}
    ack = server.call("tasks/update", {"taskId": task_id, "inputResponses": {key: YES}})
    assert set(ack) == {"resultType", "_meta"}
    done = poll(server, task_id)
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "Purged users"
    assert "inputRequests" not in done


def test_a_tool_error_completes_the_task_with_is_error(server):
    task_id = call(server, "purge_table", table="orders")["taskId"]
    key = next(iter(poll(server, task_id, lambda t: t["status"] == "input_required")["inputRequests"]))
    server.call("tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "decline"}}})
    done = poll(server, task_id)
    assert done["status"] == "completed" and done["result"]["isError"] is True
    assert "orders was left as it was" in done["result"]["content"][0]["text"]


def test_cancel_stops_a_blocking_tool_and_is_idempotent(server):
    task_id = call(server, "crunch", seconds=30)["taskId"]
    assert set(server.call("tasks/cancel", {"taskId": task_id})) == {"resultType", "_meta"}
    assert get(server, task_id)["status"] == "cancelled"
    assert set(server.call("tasks/cancel", {"taskId": task_id})) == {"resultType", "_meta"}  # terminal: same ack
    assert call(server, "build_report", topic="still serving", pages=1)["resultType"] == "task"


def test_mrtr_first_then_a_task(server):
    first = call(server, "publish", draft="hello")
    assert first["resultType"] == "input_required" and "taskId" not in first
    [key] = first["inputRequests"]
    second = server.call(
        "tools/call",
        {
            "name": "publish",
            "arguments": {"draft": "hello"},
            "requestState": first["requestState"],
            "inputResponses": {key: {"action": "accept", "content": {"channel": "blog"}}},
        },
    )
    assert second["resultType"] == "task" and "requestState" not in second
    assert poll(server, second["taskId"])["result"]["content"][0]["text"] == "Published 'hello' to blog"


def test_listen_streams_task_status_notifications(server):
    task_id = call(server, "purge_table", table="logs")["taskId"]
    key = next(iter(poll(server, task_id, lambda t: t["status"] == "input_required")["inputRequests"]))
    listen = server.request_msg("subscriptions/listen", {"notifications": {"taskIds": [task_id, "unknown"]}})
    server.send(listen)
    ack = server.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    server.call("tasks/update", {"taskId": task_id, "inputResponses": {key: YES}})
    done = server.wait_for(lambda m: m.get("method") == "notifications/tasks" and m["params"]["status"] == "completed")
    assert done["params"]["taskId"] == task_id and done["params"]["result"]["content"][0]["text"] == "Purged logs"
    assert done["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": listen["id"]}
    server.notify("notifications/cancelled", {"requestId": listen["id"]})


def test_without_the_extension(wire_validator):
    with StdioPeer.spawn(TASKS) as p:
        p.modern(capabilities={"elicitation": {}})
        plain = call(p, "build_report", topic="plain", pages=1)  # optional: a plain result
        assert plain["resultType"] == "complete" and plain["content"][0]["text"] == "Report on plain: 1 pages"
        for method, params in [
            ("tools/call", {"name": "purge_table", "arguments": {"table": "t"}}),
            ("tasks/get", {"taskId": "x"}),
            ("tasks/update", {"taskId": "x", "inputResponses": {}}),
            ("tasks/cancel", {"taskId": "x"}),
            ("subscriptions/listen", {"notifications": {"taskIds": ["x"]}}),
        ]:
            error = p.request(method, params)["error"]
            assert error["code"] == -32021, (method, error)
            assert error["data"] == {"requiredCapabilities": {"extensions": {EXT: {}}}}
        # the extension declared on one request only is enough for that request
        once = p.call(
            "tools/call",
            {
                "name": "build_report",
                "arguments": {"topic": "once"},
                "_meta": {"io.modelcontextprotocol/clientCapabilities": WITH_TASKS},
            },
        )
        assert once["resultType"] == "task"
        assert p.close() == 0


def test_protocol_errors(server):
    error = server.request("tasks/get", {"taskId": "no-such-task"})["error"]
    assert error["code"] == -32602 and "not found" in error["message"]
    assert server.request("tasks/cancel", {"taskId": "no-such-task"})["error"]["code"] == -32602
    assert (
        unchecked(
            server, "tasks/update", {"taskId": call(server, "crunch", seconds=0)["taskId"], "inputResponses": None}
        )["error"]["code"]
        == -32602
    )
    for removed in ("tasks/list", "tasks/result"):  # core tasks/* of 2025-11-25, gone in v2
        assert server.request(removed, {"taskId": "x"})["error"]["code"] == -32601
    # a legacy task param on tools/call is tolerated and changes nothing
    plain = server.call("tools/call", {"name": "crunch", "arguments": {"seconds": 0}, "task": {"ttl": 1000}})
    assert plain["resultType"] == "task"


def test_before_2025_11_25_task_tools_are_ordinary_tools(wire_validator):
    with StdioPeer.spawn(TASKS) as p:
        p.initialize("2025-06-18", capabilities={"elicitation": {}})
        msg = p.request_msg("tools/call", {"name": "purge_table", "arguments": {"table": "t"}})
        p.send(msg)
        elicit = p.wait_for(lambda m: m.get("method") == "elicitation/create")
        p.send({"jsonrpc": "2.0", "id": elicit["id"], "result": YES})
        assert p.response(msg["id"])["result"]["content"][0]["text"] == "Purged t"
        assert p.request("tasks/get", {"taskId": "x"})["error"]["code"] == -32601
        assert p.close() == 0
