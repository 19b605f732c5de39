"""Tasks across processes (issue 14), on a real redis-server and real server processes
(``tasks_server.py``): a task created on one process is read, answered, cancelled and waited on
through another; the bounds hold for both together; the tasks of a process killed with SIGKILL
are reported failed by the other; Redis goes back to zero keys once the tasks expire."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import redis

from tests.http.conftest import modern, modern_headers
from tests.support.http import free_port, wait_port
from tests.support.redis import RedisServer

SERVER = [sys.executable, "tests/state/tasks_server.py"]
EXT = "io.modelcontextprotocol/tasks"
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXT: {}}}}
TERMINAL = ("completed", "failed", "cancelled")


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer()  # its own: the tests count its keys
    server.start()
    try:
        yield server
    finally:
        server.close()


class Node:
    """One server process, spoken to in the 2026-07-28 era (every request stands alone)."""

    def __init__(self, redis_url: str, *args: str) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen([*SERVER, str(self.port), redis_url, *args], stdin=subprocess.DEVNULL)
        wait_port(self.port, proc=self.proc)
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.http = httpx.Client(timeout=30)
        self.next = 0

    def send(self, method: str, params: dict, name: str | None = None) -> dict:
        self.next += 1
        name = name or params.get("taskId")  # tasks/* name the task in Mcp-Name
        r = self.http.post(self.url, headers=modern_headers(method, name), json=modern(self.next, method, params, CAPS))
        assert r.status_code == (200 if "result" in r.json() else 400 if r.json()["error"]["code"] == -32602 else 200)
        return r.json()

    def call(self, method: str, params: dict, name: str | None = None) -> dict:
        reply = self.send(method, params, name)
        assert "result" in reply, reply
        return reply["result"]

    def tool(self, name: str, **arguments) -> dict:
        return self.call("tools/call", {"name": name, "arguments": arguments}, name)

    def get(self, task_id: str) -> dict:
        return self.call("tasks/get", {"taskId": task_id})

    def poll(self, task_id: str, until=lambda t: t["status"] in TERMINAL, limit: float = 15.0) -> dict:
        """tasks/get at the task's pollIntervalMs, as a client polls, until ``until(task)``."""
        deadline = time.monotonic() + limit
        while True:
            task = self.get(task_id)
            if until(task):
                return task
            assert time.monotonic() < deadline, f"the task never got there: {task}"
            time.sleep(task["pollIntervalMs"] / 1000)

    def close(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def empty(result: dict) -> bool:
    """An empty acknowledgement (the result envelope's own fields aside)."""
    return {k: v for k, v in result.items() if k != "_meta"} == {"resultType": "complete"}


@pytest.fixture
def pair(own_redis) -> Iterator[tuple[Node, Node]]:
    own_redis.flush()
    a, b = Node(own_redis.url), Node(own_redis.url)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def test_a_task_created_on_one_process_is_answered_and_completed_through_another(pair):
    a, b = pair
    created = a.tool("purge", table="orders")
    assert created["resultType"] == "task" and created["status"] == "working"
    task_id = created["taskId"]
    waiting = b.poll(task_id, lambda t: t["status"] == "input_required")  # read on B, runs on A
    [(key, request)] = waiting["inputRequests"].items()
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"] == "Delete every row of orders?"
    yes = {key: {"action": "accept", "content": {"confirm": True}}}
    assert empty(b.call("tasks/update", {"taskId": task_id, "inputResponses": yes}))
    done = b.poll(task_id)
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "Purged orders"}]
    assert done["result"]["resultType"] == "complete"
    on_a = a.get(task_id)
    assert on_a["status"] == "completed" and on_a["result"] == done["result"]
    assert {k: v for k, v in done.items() if k != "lastUpdatedAt"} == {
        k: v for k, v in on_a.items() if k != "lastUpdatedAt"
    }


def test_a_cancel_received_by_another_process_stops_the_function_where_it_runs(pair):
    a, b = pair
    task_id = a.tool("hold", label="h1")["taskId"]
    assert b.get(task_id)["status"] == "working"
    assert empty(b.call("tasks/cancel", {"taskId": task_id}))
    assert b.get(task_id)["status"] == "cancelled"  # recorded at once, on any process
    assert empty(b.call("tasks/cancel", {"taskId": task_id}))  # idempotent
    deadline = time.monotonic() + 10
    while a.tool("cancelled")["structuredContent"]["result"] != ["h1"]:  # the run on A was stopped
        assert time.monotonic() < deadline, "the function on A was never cancelled"
        time.sleep(0.05)
    assert a.get(task_id)["status"] == "cancelled"
    assert b.tool("cancelled")["structuredContent"]["result"] == []  # B ran nothing


def test_a_listen_stream_on_another_process_hears_the_task_change(pair):
    """subscriptions/listen with taskIds on B, for a task that runs on A: acknowledged (B
    knows the task), and notifications/tasks arrive as A changes it."""
    from mcpio._protocol._http import SSEParser

    a, b = pair
    task_id = a.tool("purge", table="logs")["taskId"]
    key = next(iter(b.poll(task_id, lambda t: t["status"] == "input_required")["inputRequests"]))
    got: queue.Queue = queue.Queue()
    listen = modern(99, "subscriptions/listen", {"notifications": {"taskIds": [task_id, "unknown"]}}, CAPS)

    def read() -> None:
        with (
            httpx.Client(timeout=30) as c,
            c.stream("POST", b.url, json=listen, headers=modern_headers("subscriptions/listen")) as r,
        ):
            parser = SSEParser()
            for chunk in r.iter_raw():
                for event in parser.feed(chunk):
                    message = json.loads(event.data)
                    got.put(message)
                    if message["params"].get("status") == "completed":
                        return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    ack = got.get(timeout=10)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}  # known on B, though it runs on A
    a.call(
        "tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}}}
    )
    while True:
        note = got.get(timeout=10)
        assert note["method"] == "notifications/tasks" and note["params"]["taskId"] == task_id
        assert note["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 99}
        if note["params"]["status"] == "completed":
            break
    assert note["params"]["result"]["content"][0]["text"] == "Purged logs"
    reader.join(10)


def test_unknown_ids_are_invalid_params_on_every_process(pair):
    a, b = pair
    for node in pair:
        reply = node.send("tasks/get", {"taskId": "no-such-task"})
        assert reply["error"]["code"] == -32602 and "not found" in reply["error"]["message"]


def test_the_task_cap_holds_for_all_processes_together(own_redis):
    own_redis.flush()
    a, b = Node(own_redis.url, "2"), Node(own_redis.url, "2")  # max_tasks=2 on each: 2 in all
    try:
        first = a.tool("hold", label="1")["taskId"]
        b.tool("hold", label="2")
        refused = a.send("tools/call", {"name": "hold", "arguments": {"label": "3"}}, "hold")
        assert refused["error"]["code"] == -32603 and "Too many tasks" in refused["error"]["message"]
        assert b.send("tools/call", {"name": "hold", "arguments": {"label": "3"}}, "hold")["error"]["code"] == -32603
        b.call("tasks/cancel", {"taskId": first})  # a terminal task makes room ...
        assert b.tool("hold", label="4")["resultType"] == "task"
        for node in (a, b):  # ... and is gone for every process (A ran it)
            assert node.send("tasks/get", {"taskId": first})["error"]["code"] == -32602
    finally:
        a.close()
        b.close()


def test_a_killed_process_tasks_are_reported_failed_and_redis_empties_after_expiry(own_redis):
    own_redis.flush()
    a, b = Node(own_redis.url, "1000", "5"), Node(own_redis.url, "1000", "5")  # task_ttl 5 s
    watch = redis.Redis.from_url(own_redis.url)
    try:
        task_id = a.tool("hold", label="doomed")["taskId"]
        assert b.get(task_id)["status"] == "working"
        os.kill(a.proc.pid, signal.SIGKILL)
        a.proc.wait(10)
        failed = b.poll(task_id)  # A's lease (2 s) runs out; B reads the record and marks it failed
        assert failed["status"] == "failed"
        assert "worker process" in failed["statusMessage"] and "died" in failed["statusMessage"]
        assert failed["error"]["code"] == -32603 and "died" in failed["error"]["message"]
        bus = [b"mcpio:bus:key"]  # the bus's secret: the one permanent key (see _state/_redis.py)
        assert watch.dbsize() > 1
        deadline = time.monotonic() + 15
        while watch.keys() != bus:  # every other key expires by itself (the task's TTL from creation)
            assert time.monotonic() < deadline, sorted(watch.keys())
            time.sleep(0.2)
        assert b.send("tasks/get", {"taskId": task_id})["error"]["code"] == -32602
        assert watch.keys() == bus  # reading an unknown task leaves nothing behind
    finally:
        watch.close()
        a.close()
        b.close()
