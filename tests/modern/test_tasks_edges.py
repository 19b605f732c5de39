"""Edge cases of the tasks extension on a real stdio server (tests/modern/tasks_edges.py), and
the task store's expiry with a controlled clock."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mcpio._server import _tasks
from tests.modern.test_tasks import WITH_TASKS, call, get, poll
from tests.support.stdio_peer import StdioPeer

EDGES = [sys.executable, str(Path(__file__).with_name("tasks_edges.py"))]


@pytest.fixture
def server(wire_validator):
    with StdioPeer.spawn(EDGES) as p:
        p.modern(capabilities=WITH_TASKS)
        yield p
        assert p.close() == 0


def text(result: dict) -> str:
    return result["content"][0]["text"]


def test_a_call_done_within_task_after_is_answered_directly(server):
    result = call(server, "quick")
    assert result["resultType"] == "complete" and text(result) == "quick answer"


def test_task_after_none_waits_for_start_task(server):
    direct = call(server, "maybe_task", go=False)
    assert direct["resultType"] == "complete" and text(direct) == "task=False id=no"
    handle = call(server, "maybe_task", go=True)
    assert handle["resultType"] == "task"
    assert text(poll(server, handle["taskId"])["result"]) == "task=True id=yes"


def test_an_input_key_is_never_reused_within_a_task(server):
    task_id = call(server, "same_key_twice")["taskId"]
    first = poll(server, task_id, lambda t: t["status"] == "input_required")["inputRequests"]
    assert list(first) == ["q"]
    server.call(
        "tasks/update", {"taskId": task_id, "inputResponses": {"q": {"action": "accept", "content": {"x": "a"}}}}
    )
    second = poll(server, task_id, lambda t: t["status"] == "input_required" and "q" not in t["inputRequests"])
    assert list(second["inputRequests"]) == ["q-2"]
    server.call(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {
                "q": {"action": "accept", "content": {"x": "stale"}},  # already answered: ignored
                "q-2": {"action": "accept", "content": {"x": "b"}},
            },
        },
    )
    assert text(poll(server, task_id)["result"]) == "a b"


def test_an_unanswered_input_request_times_out_into_a_tool_error(server):
    done = poll(server, call(server, "impatient")["taskId"])
    assert done["status"] == "completed" and done["result"]["isError"] is True
    assert "did not answer elicitation/create" in text(done["result"])


def test_a_json_rpc_error_fails_the_task_and_an_exception_is_a_tool_error(server):
    failed = poll(server, call(server, "kaput")["taskId"])
    assert failed["status"] == "failed" and "result" not in failed
    assert failed["error"] == {"code": -32000, "message": "kaput", "data": {"why": "on purpose"}}
    assert "JSON-RPC error -32000" in failed["statusMessage"]
    errored = poll(server, call(server, "oops")["taskId"])
    assert errored["status"] == "completed" and errored["result"]["isError"] is True
    assert text(errored["result"]) == "Error executing tool oops: RuntimeError: oops"


def test_the_number_of_tasks_is_capped(server):
    ids = [call(server, "parked")["taskId"] for _ in range(3)]
    error = server.request("tools/call", {"name": "parked", "arguments": {}})["error"]
    assert error["code"] == -32603 and "at most 3" in error["message"]
    server.call("tasks/cancel", {"taskId": ids[0]})
    assert get(server, ids[0])["status"] == "cancelled"
    # at the cap a terminal task makes room (issue 12, break 3): tasks/cancel freed its slot ...
    ids.append(call(server, "parked")["taskId"])
    gone = server.request("tasks/get", {"taskId": ids[0]})["error"]  # ... the cancelled one was forgotten for it
    assert gone["code"] == -32602 and "unknown or has expired" in gone["message"]
    assert server.request("tools/call", {"name": "parked", "arguments": {}})["error"]["code"] == -32603


def test_finished_tasks_are_forgotten_after_their_ttl(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(_tasks.time, "monotonic", lambda: now[0])
    store = _tasks.TaskStore(ttl=10.0, poll_interval=1.0, max_tasks=5)
    early, late, running = store.create(), store.create(), store.create()
    early._set("completed")
    now[0] += 11  # past the TTL: the one that ended is forgotten, the running one is kept
    late._set("completed")  # ended after its TTL: kept RETAIN_AFTER_END seconds more
    assert late.fields()["ttlMs"] == round((11 + _tasks.RETAIN_AFTER_END) * 1000)
    assert store.known([early.id, late.id, running.id]) == [late.id, running.id]
    now[0] += _tasks.RETAIN_AFTER_END + 1
    assert store.known([late.id, running.id]) == [running.id]
    with pytest.raises(_tasks.InvalidParams, match="unknown or has expired"):
        store.get({"taskId": late.id})


def test_a_sync_tools_two_statuses_in_a_row_reach_a_listen_stream_each_as_it_was(server, tmp_path):
    """Told from a worker thread, each change of a task is sent as that change left it, in
    order: "step 1" then "step 2", not the newest twice."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    task_id = call(server, "two_steps", gate=str(gate))["taskId"]
    listen = server.request_msg("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
    server.send(listen)
    server.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
    with open(gate, "w", encoding="utf-8") as g:
        g.write("go\n")
    server.wait_for(lambda m: m.get("method") == "notifications/tasks" and m["params"]["status"] == "completed")
    told = [
        m["params"].get("statusMessage")
        for m in server.received
        if m.get("method") == "notifications/tasks" and m["params"]["status"] == "working"
    ]
    assert told == ["step 1", "step 2"], told
    server.notify("notifications/cancelled", {"requestId": listen["id"]})
