"""The experimental core tasks of 2025-11-25 (basic/utilities/tasks) on a real stdio server
(examples/tasks.py): task-augmented tools/call, tasks/get, tasks/result, tasks/list,
tasks/cancel, input requests tagged with the task, notifications/tasks/status. Every message
both ways is validated against the official 2025-11-25 schema."""

from __future__ import annotations

import sys

import pytest

from mcpio import Client
from tests.conftest import EXAMPLES
from tests.support.stdio_peer import StdioPeer

TASKS = [sys.executable, str(EXAMPLES / "tasks.py")]
EDGES = [sys.executable, str(EXAMPLES.parent / "tests" / "modern" / "tasks_edges.py")]
RELATED = "io.modelcontextprotocol/related-task"


@pytest.fixture
def server(wire_validator):
    with StdioPeer.spawn(TASKS) as p:
        p.initialize("2025-11-25", capabilities={"elicitation": {}})
        yield p
        assert p.close() == 0


def statuses(p: StdioPeer, task_id: str) -> list[str]:
    return [
        m["params"]["status"]
        for m in p.received
        if m.get("method") == "notifications/tasks/status" and m["params"]["taskId"] == task_id
    ]


def test_tools_declare_task_support_only_in_2025_11_25(server, wire_validator):
    tools = {t["name"]: t for t in server.call("tools/list")["tools"]}
    assert tools["purge_table"]["execution"] == {"taskSupport": "required"}
    assert tools["build_report"]["execution"] == {"taskSupport": "optional"}
    with StdioPeer.spawn(TASKS) as older:
        older.initialize("2025-06-18")
        assert all("execution" not in t for t in older.call("tools/list")["tools"])
        assert "tasks" not in older.received[0]["result"]["capabilities"]
        assert older.close() == 0


def test_a_required_task_tool_with_elicitation_from_start_to_result(server):
    refused = server.request("tools/call", {"name": "purge_table", "arguments": {"table": "t"}})["error"]
    assert refused["code"] == -32601 and "params.task" in refused["message"]
    created = server.call("tools/call", {"name": "purge_table", "arguments": {"table": "users"}, "task": {"ttl": 5000}})
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 5000 and task["pollInterval"] == 500
    ask = server.wait_for(lambda m: m.get("method") == "elicitation/create")
    assert ask["params"]["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert server.call("tasks/get", {"taskId": task["taskId"]})["status"] == "input_required"
    server.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"confirm": True}}})
    result = server.call("tasks/result", {"taskId": task["taskId"]})
    assert result["content"][0]["text"] == "Purged users" and result["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert server.call("tasks/get", {"taskId": task["taskId"]})["status"] == "completed"
    server.ping()  # every status notification sent before has arrived
    assert statuses(server, task["taskId"]) == ["input_required", "working", "completed"]


def test_an_is_error_result_fails_the_task_and_tasks_result_returns_it(server):
    task_id = server.call("tools/call", {"name": "purge_table", "arguments": {"table": "t"}, "task": {}})["task"][
        "taskId"
    ]
    ask = server.wait_for(lambda m: m.get("method") == "elicitation/create")
    server.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}})
    result = server.call("tasks/result", {"taskId": task_id})
    assert result["isError"] is True and "left as it was" in result["content"][0]["text"]
    assert server.call("tasks/get", {"taskId": task_id})["status"] == "failed"


def test_optional_tools_answer_directly_or_as_tasks_with_progress(server):
    plain = server.call("tools/call", {"name": "build_report", "arguments": {"topic": "x", "pages": 1}})
    assert plain["content"][0]["text"] == "Report on x: 1 pages"
    created = server.call(
        "tools/call",
        {"name": "build_report", "arguments": {"topic": "y", "pages": 2}, "task": {}, "_meta": {"progressToken": "p"}},
    )
    result = server.call("tasks/result", {"taskId": created["task"]["taskId"]})
    assert result["content"][0]["text"] == "Report on y: 2 pages"
    progress = [m["params"] for m in server.received if m.get("method") == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2] and progress[-1]["progressToken"] == "p"


def test_cancel_list_and_errors(server):
    task_id = server.call("tools/call", {"name": "crunch", "arguments": {"seconds": 30}, "task": {}})["task"]["taskId"]
    listed = server.call("tasks/list")
    assert [t["taskId"] for t in listed["tasks"]] == [task_id]
    cancelled = server.call("tasks/cancel", {"taskId": task_id})
    assert cancelled["status"] == "cancelled" and cancelled["taskId"] == task_id
    again = server.request("tasks/cancel", {"taskId": task_id})["error"]
    assert again["code"] == -32602 and "already ended" in again["message"]
    assert server.request("tasks/result", {"taskId": task_id})["error"]["code"] == -32602
    assert server.request("tasks/get", {"taskId": "nope"})["error"]["code"] == -32602
    assert server.request("tasks/update", {"taskId": task_id, "inputResponses": {}})["error"]["code"] == -32601


def test_task_param_on_a_tool_without_task_support(wire_validator):
    with StdioPeer.spawn(EDGES) as p:
        p.initialize("2025-11-25")
        refused = p.request("tools/call", {"name": "plain", "arguments": {}, "task": {}})["error"]
        assert refused["code"] == -32601 and "does not run as a task" in refused["message"]
        assert p.close() == 0


def test_tasks_belong_to_their_session_and_the_mcpio_client_uses_them(wire_validator):
    from tests.client.test_modern_client import _load
    from tests.server.peer import arun

    server = _load(EXAMPLES / "tasks.py")

    async def go():
        async with (
            Client(server, era="legacy", elicitation=lambda p: {"confirm": True}) as a,
            Client(server, era="legacy") as b,
        ):
            assert (await a.call_tool("purge_table", {"table": "logs"}))["content"][0]["text"] == "Purged logs"
            mine = (await a.request("tasks/list"))["tasks"]
            assert len(mine) == 1 and mine[0]["status"] == "completed"
            assert (await b.request("tasks/list"))["tasks"] == []
            with pytest.raises(Exception, match="not found"):
                await b.request("tasks/get", {"taskId": mine[0]["taskId"]})

    arun(go())


def test_a_sessions_core_tasks_end_with_it():
    from tests.client.test_modern_client import _load
    from tests.server.peer import arun

    server = _load(EXAMPLES / "tasks.py")

    async def go():
        async with Client(server, era="legacy") as c:
            created = await c.request("tools/call", {"name": "crunch", "arguments": {"seconds": 30}, "task": {}})
            assert created["task"]["status"] == "working" and len(server.tasks) == 1
        assert len(server.tasks) == 0  # the session ended: its task was cancelled and forgotten

    arun(go())


def test_a_sync_tools_two_statuses_in_a_row_reach_the_owner_each_as_it_was(wire_validator):
    """2025-11-25 core task: ``notifications/tasks/status`` told from a worker thread carries the
    task as each change left it, in order."""
    with StdioPeer.spawn(EDGES) as p:
        p.initialize("2025-11-25")
        task_id = p.call("tools/call", {"name": "two_steps", "arguments": {"gate": ""}, "task": {}})["task"]["taskId"]
        p.call("tasks/result", {"taskId": task_id})
        p.ping()  # every status notification sent before has arrived
        told = [
            (m["params"]["status"], m["params"].get("statusMessage"))
            for m in p.received
            if m.get("method") == "notifications/tasks/status" and m["params"]["taskId"] == task_id
        ]
        assert told[:2] == [("working", "step 1"), ("working", "step 2")] and told[-1][0] == "completed", told
        assert p.close() == 0
