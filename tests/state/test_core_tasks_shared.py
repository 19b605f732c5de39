"""2025-11-25 core tasks of a legacy session shared by two processes (issue 14), on a real
redis-server and real server processes (``tasks_server.py``): a task-augmented ``tools/call``
on A is read, listed, waited on and cancelled through B (a replica of the session there);
``notifications/tasks/status`` from A reaches the session's GET stream held by B; a copy of
the session dropped idle on A leaves the session's tasks running, and a DELETE on B cancels them
on A."""

from __future__ import annotations

import contextlib
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

import tests.state.test_shared_sessions as shared
from tests.state.test_shared_sessions import RoundRobin, open_get
from tests.support.http import free_port, wait_port

SERVER = [sys.executable, "tests/state/tasks_server.py"]
CORE = "2025-11-25"
CAPS = {"tasks": {"requests": {}}}


@pytest.fixture(autouse=True)
def core_version(monkeypatch) -> None:
    monkeypatch.setattr(shared, "VERSION", CORE)  # RoundRobin speaks 2025-11-25 (core tasks)


class Procs:
    """Two ``tasks_server.py`` processes; each one's stderr lines arrive on a queue."""

    def __init__(self, redis_url: str, *args: str) -> None:
        ports = [free_port() for _ in range(2)]
        self.procs = [
            subprocess.Popen([*SERVER, str(p), redis_url, *args], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
            for p in ports
        ]  # fmt: skip
        self.logs: list[queue.Queue] = []
        for proc in self.procs:
            q: queue.Queue = queue.Queue()
            threading.Thread(target=lambda p=proc, q=q: [q.put(line) for line in p.stderr], daemon=True).start()
            self.logs.append(q)
        for p, proc in zip(ports, self.procs, strict=True):
            wait_port(p, proc=proc)
        self.urls = [f"http://127.0.0.1:{p}/mcp" for p in ports]

    def close(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(10)


@pytest.fixture
def procs(redis_url, request) -> Iterator[Procs]:
    p = Procs(redis_url, *getattr(request, "param", ()))
    try:
        yield p
    finally:
        p.close()


def task_call(s: RoundRobin, name: str, at: int, **arguments) -> str:
    answer = s.messages("tools/call", {"name": name, "arguments": arguments, "task": {"ttl": 60000}}, at)[-1]
    assert answer["result"]["task"]["status"] == "working", answer
    return answer["result"]["task"]["taskId"]


def result(s: RoundRobin, method: str, params: dict, at: int) -> dict:
    r = s.post(method, params, at)
    assert r.status_code == 200, r.text
    assert "result" in r.json(), r.json()
    return r.json()["result"]


def cancelled_on(c: httpx.Client, url: str) -> list[str]:
    return RoundRobin(c, [url], CAPS).call("cancelled")["structuredContent"]["result"]


def test_core_tasks_made_on_one_process_are_served_by_the_session_on_the_other(procs):
    a, b = 0, 1
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, procs.urls, CAPS)
        status = open_get(c, procs.urls[b], s.headers)  # the session's GET stream is held by B
        held = task_call(s, "hold", a, label="x")  # runs on A
        echoed = task_call(s, "echo", a, text="hi")

        got = result(s, "tasks/get", {"taskId": held}, b)
        assert got["taskId"] == held and got["status"] == "working" and got["ttl"] == 60000
        listed = [t["taskId"] for t in result(s, "tasks/list", {}, b)["tasks"]]
        assert listed == [held, echoed]
        assert result(s, "tasks/result", {"taskId": echoed}, b)["content"] == [{"type": "text", "text": "hi"}]

        # Another session sees none of them, on either process.
        other = RoundRobin(c, procs.urls, CAPS)
        for at in (a, b):
            assert other.post("tasks/get", {"taskId": held}, at).json()["error"]["code"] == -32602
            assert result(other, "tasks/list", {}, at)["tasks"] == []

        done = result(s, "tasks/cancel", {"taskId": held}, b)
        assert done["status"] == "cancelled"
        assert result(s, "tasks/get", {"taskId": held}, a)["status"] == "cancelled"
        assert cancelled_on(c, procs.urls[a]) == ["x"]  # the function stopped where it ran

        # notifications/tasks/status from A reached the GET stream on B: each change once.
        seen: list[tuple[str, str]] = []
        while ("x", "cancelled") not in [(n, st) for n, st in seen]:
            m = status.get(timeout=10)
            assert m["method"] == "notifications/tasks/status", m
            seen.append(("x" if m["params"]["taskId"] == held else "e", m["params"]["status"]))
        assert ("e", "completed") in seen
        assert len(seen) == len(set(seen)), seen
        s.call("echo", at=a, text="flush")  # one round trip more on each process: nothing else came
        s.call("echo", at=b, text="flush")
        assert status.empty()
        assert c.delete(procs.urls[a], headers=s.headers).status_code == 200


@pytest.mark.parametrize("procs", [("1000", "60", "2")], indirect=True)
def test_a_copy_dropped_idle_keeps_the_tasks_and_a_delete_elsewhere_ends_them(procs):
    """session_timeout 2 s: A's copy, idle while the client talks to B, is dropped on A (its log
    says so); the session's task on A goes on. DELETE on B then cancels it on A."""
    a, b = 0, 1
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, procs.urls, CAPS)
        held = task_call(s, "hold", a, label="y")
        deadline = time.monotonic() + 30
        while True:  # keep the session alive through B until A has dropped its copy
            assert result(s, "tasks/get", {"taskId": held}, b)["status"] == "working"
            try:
                line = procs.logs[a].get(timeout=0.3)
            except queue.Empty:
                line = ""
            if "local copy dropped" in line and s.sid in line:
                break
            assert time.monotonic() < deadline, "A never dropped its idle copy"
        assert result(s, "tasks/get", {"taskId": held}, b)["status"] == "working"
        assert cancelled_on(c, procs.urls[a]) == []  # still running on A

        assert c.delete(procs.urls[b], headers=s.headers).status_code == 200
        deadline = time.monotonic() + 10
        while cancelled_on(c, procs.urls[a]) != ["y"]:  # the bus carries the end to A
            assert time.monotonic() < deadline, "the task on A outlived its session"


@pytest.mark.parametrize("procs", [("1000", "60", "2")], indirect=True)
def test_a_session_expired_everywhere_ends_its_tasks(procs):
    """session_timeout 2 s and no request after the task's: the record expires; the process
    that drops its idle copy first finds it gone and tells every process (as a DELETE does), so
    the session's task on A is cancelled."""
    a = 0
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, procs.urls, CAPS)
        task_call(s, "hold", a, label="z")
        deadline = time.monotonic() + 30
        dropped = False
        while not dropped:  # the first process to drop its copy finds the record gone, tells all
            assert time.monotonic() < deadline, "no process dropped its idle copy"
            for q in procs.logs:
                with contextlib.suppress(queue.Empty):
                    line = q.get(timeout=0.1)
                    dropped = dropped or ("local copy dropped" in line and s.sid in line)
        deadline = time.monotonic() + 10
        while cancelled_on(c, procs.urls[a]) != ["z"]:
            assert time.monotonic() < deadline, "the task outlived its expired session"
        assert s.post("tasks/list", {}, 1).status_code == 404  # the session is gone everywhere


def test_two_changes_of_a_core_task_in_a_row_reach_the_get_stream_on_the_other_process_each_as_it_was(procs):
    """A task on A changes twice before A's loop runs anything else (``steps``: its status
    message "step 1", then "step 2"): the GET stream on B gets each status as it was when it
    changed ("step 1", "step 2", then completed), not the newer one twice."""
    a, b = 0, 1
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, procs.urls, CAPS)
        status = open_get(c, procs.urls[b], s.headers)  # the session's GET stream is held by B
        stepped = task_call(s, "steps", a)
        seen: list[tuple[str, str | None]] = []
        while not seen or seen[-1][0] != "completed":
            m = status.get(timeout=10)
            assert m["method"] == "notifications/tasks/status" and m["params"]["taskId"] == stepped, m
            seen.append((m["params"]["status"], m["params"].get("statusMessage")))
        assert seen[:2] == [("working", "step 1"), ("working", "step 2")], seen
        assert len(seen) == 3, seen
        assert c.delete(procs.urls[a], headers=s.headers).status_code == 200
