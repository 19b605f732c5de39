"""A 2026-07-28 task is its requester's, on every process (issue 32, item 13; ext-tasks
§Security Considerations: servers MUST check every task request against the requester's
authorization context).

Real uvicorn servers on 127.0.0.1 protected by ``auth=ResourceServer`` with a real issuer: one
with tasks in memory, and two apps sharing one real redis-server (each its own ``RedisState``).
Principal A (``alice``) creates tasks; principal B (``mallory``, another valid token) holding
their ids gets what an unknown task gets (-32602) from ``tasks/get`` (no status, no result),
``tasks/update`` (its answer is not taken) and ``tasks/cancel`` (the task runs on), and a
``subscriptions/listen`` naming them is acknowledged without them; A is served as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import httpx

from mcpio import Context, Server
from mcpio._protocol._http import SSEParser
from mcpio._state import RedisState
from mcpio.auth import ResourceServer
from tests.http.conftest import modern, modern_headers
from tests.support.http import ServerThread
from tests.support.issuer import Issuer

RESOURCE = "https://mcp.test/mcp"
EXT = "io.modelcontextprotocol/tasks"
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXT: {}}}}
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def make_server(**options) -> Server:
    server = Server("tasks", "1.0.0", task_poll_interval=0.05, **options)

    @server.tool(task_support="required")
    async def purge(table: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Delete every row of {table}?", CONFIRM)
        return f"Purged {table}" if (answer.get("content") or {}).get("confirm") else "kept"

    @server.tool(task_support="required")
    async def hold() -> str:
        await asyncio.Event().wait()
        return "never"  # pragma: no cover

    @server.tool(task_support="required")
    def secret() -> str:
        return "alice's secret"

    return server


def app(issuer: Issuer, state=None, **options):
    auth = ResourceServer(resource=RESOURCE, issuer=issuer.url, required_scopes=["mcp"])
    return make_server(**options).http_app(auth=auth, state=state)


class Caller:
    """One principal speaking the 2026-07-28 era to one server."""

    def __init__(self, c: httpx.Client, issuer: Issuer, sub: str) -> None:
        self.c, self.token, self.next = c, issuer.mint(aud=RESOURCE, scope="mcp", sub=sub), 0

    def send(self, url: str, method: str, params: dict, name: str | None = None) -> dict:
        self.next += 1
        headers = {**modern_headers(method, name or params.get("taskId")), "authorization": "Bearer " + self.token}
        r = self.c.post(url, headers=headers, json=modern(self.next, method, params, CAPS))
        assert r.status_code in (200, 400), r.text
        return r.json()

    def ok(self, url: str, method: str, params: dict, name: str | None = None) -> dict:
        reply = self.send(url, method, params, name)
        assert "result" in reply, reply
        return reply["result"]

    def unknown(self, url: str, method: str, params: dict) -> None:
        """The answer to a task id that names nothing: -32602, no word of whose it is."""
        reply = self.send(url, method, params)
        assert reply.get("error", {}).get("code") == -32602, reply
        assert "alice" not in json.dumps(reply)

    def poll(self, url: str, task_id: str, status: str) -> dict:
        for _ in range(400):
            task = self.ok(url, "tasks/get", {"taskId": task_id})
            if task["status"] == status:
                return task
            assert task["status"] not in {"completed", "failed", "cancelled"} - {status}, task
            time.sleep(task["pollIntervalMs"] / 1000)  # as a client polls
        raise AssertionError(f"never {status}: {task}")

    def listen_ack(self, url: str, task_ids: list[str]) -> dict:
        """The acknowledgement of a subscriptions/listen naming ``task_ids`` (then hang up)."""
        body = modern(99, "subscriptions/listen", {"notifications": {"taskIds": task_ids}}, CAPS)
        headers = {**modern_headers("subscriptions/listen"), "authorization": "Bearer " + self.token}
        with self.c.stream("POST", url, json=body, headers=headers) as r:
            parser = SSEParser()
            for chunk in r.iter_raw():
                for event in parser.feed(chunk):
                    if event.data:
                        return json.loads(event.data)["params"]["notifications"]
        raise AssertionError("no acknowledgement")


def attack_and_check(one: str, two: str, a: Caller, b: Caller) -> None:
    """A's tasks made on ``one``; B tries each on ``one`` and ``two``; A is served on ``two``."""
    done = a.ok(one, "tools/call", {"name": "secret", "arguments": {}}, "secret")["taskId"]
    asking = a.ok(one, "tools/call", {"name": "purge", "arguments": {"table": "t"}}, "purge")["taskId"]
    held = a.ok(one, "tools/call", {"name": "hold", "arguments": {}}, "hold")["taskId"]
    assert a.poll(two, done, "completed")["result"]["content"][0]["text"] == "alice's secret"
    key = next(iter(a.poll(two, asking, "input_required")["inputRequests"]))
    yes = {key: {"action": "accept", "content": {"confirm": True}}}
    for url in (one, two):
        for task_id in (done, asking, held):
            b.unknown(url, "tasks/get", {"taskId": task_id})
            b.unknown(url, "tasks/cancel", {"taskId": task_id})
        b.unknown(url, "tasks/update", {"taskId": asking, "inputResponses": yes})
        assert b.listen_ack(url, [done, asking, held]) == {"taskIds": []}
    # Nothing B sent changed A's tasks; A goes on, on either process.
    assert a.ok(two, "tasks/get", {"taskId": held})["status"] == "working"
    assert a.ok(one, "tasks/get", {"taskId": asking})["status"] == "input_required"
    assert a.listen_ack(two, [done, asking, held]) == {"taskIds": [done, asking, held]}
    a.ok(two, "tasks/update", {"taskId": asking, "inputResponses": yes})
    assert a.poll(one, asking, "completed")["result"]["content"][0]["text"] == "Purged t"
    a.ok(two, "tasks/cancel", {"taskId": held})
    assert a.poll(one, held, "cancelled")["status"] == "cancelled"


def test_tasks_are_their_requesters_in_memory(issuer):
    with ServerThread(app(issuer)) as srv, httpx.Client(timeout=10) as c:
        attack_and_check(srv.url, srv.url, Caller(c, issuer, "alice"), Caller(c, issuer, "mallory"))


def test_tasks_are_their_requesters_on_every_process(issuer, redis_url):
    with contextlib.ExitStack() as stack:
        one, two = (stack.enter_context(ServerThread(app(issuer, RedisState(redis_url)))).url for _ in range(2))
        c = stack.enter_context(httpx.Client(timeout=10))
        attack_and_check(one, two, Caller(c, issuer, "alice"), Caller(c, issuer, "mallory"))


def test_each_principal_has_its_own_task_cap_in_memory(issuer):
    """``max_tasks_per_requester`` counts the tasks of one principal over its requests (each
    request's principal is an equal string, not the same object)."""
    with ServerThread(app(issuer, max_tasks_per_requester=1)) as srv, httpx.Client(timeout=10) as c:
        a, b = Caller(c, issuer, "alice"), Caller(c, issuer, "mallory")
        hold = {"name": "hold", "arguments": {}}
        a.ok(srv.url, "tools/call", hold, "hold")
        refused = a.send(srv.url, "tools/call", hold, "hold")
        assert "Too many tasks" in refused["error"]["message"], refused
        b.ok(srv.url, "tools/call", hold, "hold")  # another principal's count
