"""Issue 12, breaks 3 and 4, on the wire against a real server process.

3. The task store cannot be locked: 200 task-optional calls from one session fill only that
   session's share (``max_tasks_per_requester``), other clients still get tasks; at the global
   cap terminal tasks make room; ``tasks/cancel`` frees a slot.
4. MRTR: ``inputResponses`` without the ``requestState`` of the round that asked for them are
   not taken as answers (the destructive tool asks again and deletes nothing); a state issued
   to one caller is refused for another; a retry with the same state is allowed.
"""

from __future__ import annotations

import httpx
import pytest

from mcpio._errors import InvalidParams
from mcpio._server._mrtr import Rounds, StateCodec
from mcpio.auth import AuthInfo
from tests.faults.harden_support import headers, modern, open_session, rpc, spawn

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
CORE = "2025-11-25"


def core_task_call(http, url, sid, id):
    r = http.post(
        url,
        json=rpc(id, "tools/call", {"name": "slow_task", "arguments": {}, "task": {"ttl": 60000}}),
        headers=headers(sid, CORE),
    )
    assert r.status_code in (200, 500), r.text
    return r.json()


def test_one_session_cannot_fill_the_task_store_and_terminal_tasks_make_room(tmp_path):
    with spawn(tmp_path, "--max-tasks", "200") as srv, httpx.Client(timeout=30) as http:
        a = open_session(http, srv.url, CORE)
        answers = [core_task_call(http, srv.url, a, i) for i in range(200)]
        made = [x for x in answers if "result" in x]
        refused = [x for x in answers if "error" in x]
        assert len(made) == 20 and len(refused) == 180  # max_tasks_per_requester = 200 // 10
        assert "max_tasks_per_requester" in refused[0]["error"]["message"]
        b = open_session(http, srv.url, CORE)
        assert "task" in core_task_call(http, srv.url, b, 1)["result"]  # another client still gets tasks
        # tasks/cancel frees the canceller's slot at once.
        first = made[0]["result"]["task"]["taskId"]
        r = http.post(srv.url, json=rpc("c", "tasks/cancel", {"taskId": first}), headers=headers(a, CORE))
        assert r.json()["result"]["status"] == "cancelled"
        assert "task" in core_task_call(http, srv.url, a, "again")["result"]
        assert "error" in core_task_call(http, srv.url, a, "over")  # and only that one slot

        # Anonymous 2026-07-28 tasks: the global cap (200; 21 live, 1 cancelled) holds, the
        # cancelled task making room first ...
        live = [
            modern(http, srv.url, i, "tools/call", {"name": "slow_task", "arguments": {}}, TASKS) for i in range(200)
        ]
        ok = [x["result"]["taskId"] for x in live if "result" in x]
        assert len(ok) == 200 - 21 and "all are unfinished" in live[-1]["error"]["message"]
        # ... a cancelled task frees its slot ...
        assert "result" in modern(http, srv.url, "c", "tasks/cancel", {"taskId": ok[0]}, TASKS)
        assert modern(http, srv.url, "n", "tools/call", {"name": "slow_task", "arguments": {}}, TASKS)["result"][
            "taskId"
        ]
        # ... and once the tasks finish, 200 more calls all get tasks (terminal ones are evicted).
        modern(http, srv.url, "r", "tools/call", {"name": "release", "arguments": {}})
        while modern(http, srv.url, "g", "tasks/get", {"taskId": ok[-1]}, TASKS)["result"]["status"] != "completed":
            pass
        again = [
            modern(http, srv.url, i, "tools/call", {"name": "slow_task", "arguments": {}}, TASKS) for i in range(200)
        ]
        assert all("taskId" in x["result"] for x in again)


def test_input_responses_without_the_state_that_asked_are_not_answers(tmp_path):
    caps = {"elicitation": {}}
    yes = {"action": "accept", "content": {"ok": True}}
    with spawn(tmp_path) as srv, httpx.Client(timeout=30) as http:

        def call(id, **extra):
            return modern(http, srv.url, id, "tools/call", {"name": "delete_all", "arguments": {}, **extra}, caps)

        forged = call(1, inputResponses={"elicit-0": yes})["result"]  # no requestState: asked again
        assert forged["resultType"] == "input_required" and "elicit-0" in forged["inputRequests"]
        state = forged["requestState"]
        done = call(2, inputResponses={"elicit-0": yes}, requestState=state)["result"]
        assert done["content"][0]["text"] == "deleted"
        again = call(3, inputResponses={"elicit-0": yes}, requestState=state)["result"]  # a retry: allowed
        assert again["content"][0]["text"] == "deleted"
        count = modern(http, srv.url, 4, "tools/call", {"name": "deleted", "arguments": {}})["result"]
        assert count["content"][0]["text"] == "2"  # two rounds with the state; none without it


def test_a_state_issued_to_one_caller_is_refused_for_another():
    codec = StateCodec(b"k" * 32, 60)
    params = {"name": "delete_all", "arguments": {}}
    alice, mallory = (
        AuthInfo(who, "app-1", frozenset(), issuer="https://as").principal for who in ("alice", "mallory")
    )
    first = Rounds.from_request(codec, "tools/call", params, alice)
    from mcpio._server._mrtr import InputRequired

    with pytest.raises(InputRequired) as asked:
        first.ask("elicitation/create", {"message": "?"})
    result = first.result(codec, "tools/call", params, asked.value)
    retry = {**params, "requestState": result["requestState"], "inputResponses": {"elicit-0": {"action": "accept"}}}
    assert Rounds.from_request(codec, "tools/call", retry, alice).answers == {"elicit-0": {"action": "accept"}}
    with pytest.raises(InvalidParams, match="another caller"):
        Rounds.from_request(codec, "tools/call", retry, mallory)
    with pytest.raises(InvalidParams, match="another caller"):
        Rounds.from_request(codec, "tools/call", retry, None)  # nor without the caller it was bound to
