"""Tasks through ``Server.proxy`` / ``mcpio run TARGET``, across the eras (``_gateway/_tasks``).

The upstream is ``task_upstream.py``, a real subprocess. Spoken to in 2026-07-28 (the proxy's
choice when the upstream offers it) it announces the tasks extension and decides per call, so
its tools list no task support: the proxy serves them ``"optional"``. A 2025-11-25 client of the
proxy then gets a task when it asks; a 2026-07-28 client declaring the extension gets one when
the upstream makes one of the call. The wire tests drive ``mcpio run "python task_upstream.py"``
over stdio, every message checked against the schema of its version (the tasks extension's
types included); the others drive ``Server.proxy`` in memory with mcpio's client."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from mcpio import Client, Server
from tests.client.support import arun, within
from tests.support.stdio_peer import StdioPeer

HERE = Path(__file__).parent
TASK_UPSTREAM = [sys.executable, str(HERE / "task_upstream.py")]
EXT = "io.modelcontextprotocol/tasks"
WITH_TASKS = {"extensions": {EXT: {}}}
TERMINAL = ("completed", "failed", "cancelled")


def mcpio_run(*upstream_args: str) -> StdioPeer:
    """``mcpio run "python task_upstream.py ARGS"`` over stdio."""
    command = " ".join([*TASK_UPSTREAM, *upstream_args])
    return StdioPeer.spawn([sys.executable, "-m", "mcpio", "run", command])


def poll(p: StdioPeer, task_id: str, until=lambda t: t["status"] in TERMINAL, limit: float = 20.0) -> dict:
    """Poll tasks/get at the task's poll interval, as a client does, until ``until(task)``."""
    deadline = time.monotonic() + limit
    while True:
        task = p.call("tasks/get", {"taskId": task_id})
        if until(task):
            return task
        assert time.monotonic() < deadline, f"the task never got there: {task}"
        time.sleep(task.get("pollIntervalMs", task.get("pollInterval", 100)) / 1000)


# ---------------------------------------------------------------- on the wire, mcpio run TARGET
def test_a_legacy_client_asks_for_a_task_of_a_modern_upstream_tool(wire_validator):
    with mcpio_run() as p:
        caps = p.initialize("2025-11-25")["capabilities"]
        assert caps["tasks"]["requests"] == {"tools": {"call": {}}}
        listed = {t["name"]: t for t in p.call("tools/list")["tools"]}
        assert listed["long_sum"]["execution"] == {"taskSupport": "optional"}
        created = p.call("tools/call", {"name": "long_sum", "arguments": {"a": 2, "b": 40}, "task": {"ttl": 60000}})
        task_id = created["task"]["taskId"]
        assert created["task"]["status"] == "working"
        assert poll(p, task_id)["status"] == "completed"
        result = p.call("tasks/result", {"taskId": task_id})
        assert result["content"] == [{"type": "text", "text": "42"}] and result["structuredContent"] == {"result": 42}
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
        assert p.close() == 0


def test_a_modern_client_gets_a_task_when_the_modern_upstream_makes_one(wire_validator):
    with mcpio_run() as p:
        p.modern(capabilities=WITH_TASKS)
        assert EXT in p.call("server/discover")["capabilities"]["extensions"]
        created = p.call("tools/call", {"name": "long_sum", "arguments": {"a": 2, "b": 40}})
        assert created["resultType"] == "task" and created["status"] == "working"
        done = poll(p, created["taskId"])
        assert done["status"] == "completed"
        assert done["result"]["content"] == [{"type": "text", "text": "42"}]
        # the upstream answers this call directly: so does the proxy (no task)
        quick = p.call("tools/call", {"name": "quick_or_long", "arguments": {"long": False}})
        assert quick["resultType"] == "complete" and quick["content"] == [{"type": "text", "text": "quick"}]
        assert p.close() == 0


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_cancelling_the_proxy_task_cancels_the_upstream_task(wire_validator, era):
    with mcpio_run() as p:
        if era == "legacy":
            p.initialize("2025-11-25")
            task_id = p.call("tools/call", {"name": "hold", "arguments": {}, "task": {"ttl": 60000}})["task"]["taskId"]
        else:
            p.modern(capabilities=WITH_TASKS)
            task_id = p.call("tools/call", {"name": "hold", "arguments": {}})["taskId"]
        # the upstream runs the tool (its status is the proxy task's), then the client cancels
        poll(p, task_id, lambda t: t.get("statusMessage") == "holding")
        p.call("tasks/cancel", {"taskId": task_id})
        assert p.call("tasks/get", {"taskId": task_id})["status"] == "cancelled"
        seen = p.call("tools/call", {"name": "was_cancelled", "arguments": {}})
        assert seen["structuredContent"] == {"result": True}, "the upstream's tool was never cancelled"
        assert p.close() == 0


def test_a_modern_upstream_without_the_tasks_extension_stays_plain(wire_validator):
    with mcpio_run("plain") as p:
        caps = p.initialize("2025-11-25")["capabilities"]
        assert "tasks" not in caps
        assert all("execution" not in t for t in p.call("tools/list")["tools"])
        # no tasks announced: a task asked for is ignored (spec), the call answered directly
        plain = p.call("tools/call", {"name": "long_sum", "arguments": {"a": 1, "b": 2}, "task": {"ttl": 60000}})
        assert plain["content"] == [{"type": "text", "text": "3"}] and "task" not in plain
        assert p.close() == 0
    with mcpio_run("plain") as p:
        p.modern(capabilities=WITH_TASKS)
        assert EXT not in (p.call("server/discover")["capabilities"].get("extensions") or {})
        plain = p.call("tools/call", {"name": "long_sum", "arguments": {"a": 1, "b": 2}})
        assert plain["resultType"] == "complete" and plain["content"] == [{"type": "text", "text": "3"}]
        assert p.close() == 0


# ---------------------------------------------------------------- in memory, mcpio's client
def statuses(seen: list[dict]) -> list[tuple[str, str | None]]:
    return [(t["status"], t.get("statusMessage")) for t in seen]


def test_the_proxy_task_mirrors_the_modern_upstream_task_and_its_input_rounds():
    """A 2026-07-28 client of the proxy declaring the extension: the proxy's task shows the
    upstream task's status messages, and the upstream's question during its task is asked in the
    proxy's task (input_required, answered with tasks/update), its answer taken upstream."""
    proxy = Server.proxy(TASK_UPSTREAM, name="up")

    async def go():
        async with Client(proxy, era="modern", timeout=30, elicitation=lambda params: {"ok": True}) as c:
            seen: list[dict] = []
            assert (await c.call_tool("long_sum", {"a": 1, "b": 2}, on_task_status=seen.append)).data == 3
            assert {m for s, m in statuses(seen) if s == "working"} & {"step 1", "step 2"}
            assert seen[-1]["status"] == "completed" and len({t["taskId"] for t in seen}) == 1
            seen.clear()
            assert (await c.call_tool("confirm_sum", {"a": 1, "b": 2}, on_task_status=seen.append)).text == "sum 3"
            assert "input_required" in [s for s, _ in statuses(seen)]
            seen.clear()
            # the upstream asks first (an input_required round of the call), then makes a task:
            # the proxy's call, in its second round, becomes a task then
            assert (await c.call_tool("ask_then_sum", {"a": 1, "b": 2}, on_task_status=seen.append)).text == "sum 3"
            assert ("working", "adding") in statuses(seen)

    arun(go(), timeout=60)


def test_a_legacy_client_task_of_a_modern_upstream_asks_the_client_during_the_task():
    proxy = Server.proxy(TASK_UPSTREAM, name="up")
    asked: list[str] = []

    def elicitation(params):
        asked.append(params["message"])
        return {"ok": True}

    async def go():
        async with Client(proxy, era="legacy", timeout=30, elicitation=elicitation) as c:
            params = {"name": "confirm_sum", "arguments": {"a": 1, "b": 2}, "task": {"ttl": 60000}}
            task_id = (await c.request("tools/call", params))["task"]["taskId"]
            result = await c.request("tasks/result", {"taskId": task_id})
            assert result["content"] == [{"type": "text", "text": "sum 3"}]
            assert asked == ["Add them?"]

    arun(go(), timeout=60)


def test_a_legacy_upstream_task_tool_is_a_task_for_a_modern_client():
    """A 2025-11-25 upstream lists each tool's execution.taskSupport: a 2026-07-28 client declaring
    the extension gets a task of an "optional" one as of a "required" one, the upstream call is a
    task there too (its status messages are the proxy task's), and the upstream's questions
    during it are asked in that task."""
    proxy = Server.proxy(TASK_UPSTREAM, name="up", era="legacy")

    async def go():
        async with Client(proxy, era="modern", timeout=30, elicitation=lambda params: {"ok": True}) as c:
            seen: list[dict] = []
            assert (await c.call_tool("long_sum", {"a": 1, "b": 2}, on_task_status=seen.append)).data == 3
            assert seen and seen[0]["status"] == "working" and seen[-1]["status"] == "completed"
            assert {"step 1", "step 2"} & {m for _, m in statuses(seen)}  # the upstream task's (set_task_status)
            seen.clear()
            assert (await c.call_tool("confirm_sum", {"a": 1, "b": 2}, on_task_status=seen.append)).text == "sum 3"
            assert "input_required" in [s for s, _ in statuses(seen)]
            first = asyncio.Event()

            def on_status(task):
                if task.get("statusMessage") == "holding":
                    first.set()

            call = asyncio.ensure_future(c.call_tool("hold", {}, on_task_status=on_status))
            await within(first.wait())
            call.cancel()  # the client sends tasks/cancel for its task
            with pytest.raises(asyncio.CancelledError):
                await call
            assert (await c.call_tool("was_cancelled", {})).data is True

    arun(go(), timeout=60)


def test_a_gateway_serves_its_upstreams_tasks_too(tmp_path):
    """``Server.from_config``: the mounted proxy's tools keep their task mapping."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"t": {"command": TASK_UPSTREAM[0], "args": TASK_UPSTREAM[1:]}}}))
    gateway = Server.from_config(str(config))

    async def go():
        async with Client(gateway, era="modern", timeout=30) as c:
            seen: list[dict] = []
            assert (await c.call_tool("t__long_sum", {"a": 1, "b": 2}, on_task_status=seen.append)).data == 3
            assert seen and seen[-1]["status"] == "completed"
        async with Client(gateway, era="legacy", timeout=30) as c:
            params = {"name": "t__long_sum", "arguments": {"a": 1, "b": 2}, "task": {"ttl": 60000}}
            task_id = (await c.request("tools/call", params))["task"]["taskId"]
            assert (await c.request("tasks/result", {"taskId": task_id}))["structuredContent"] == {"result": 3}

    arun(go(), timeout=60)
