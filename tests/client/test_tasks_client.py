"""The client and the tasks extension: a tool call answered with a task handle is followed to its
result (tasks/get at the server's pollIntervalMs, input requests answered through tasks/update,
tasks/cancel when the caller gives up), against examples/tasks.py over stdio and HTTP and in
memory with every message validated against the 2026-07-28 schema plus the extension's types."""

from __future__ import annotations

import asyncio
import sys

import pytest

from mcpio import Client, MCPError, RequestTimeout, TaskCancelled
from tests.client.support import EXAMPLES, arun, in_memory, within
from tests.client.test_modern_client import _load
from tests.support import wire
from tests.support.http import ServerThread

TASKS = EXAMPLES / "tasks.py"
EXT = "io.modelcontextprotocol/tasks"


def _methods(transport) -> list[str]:
    return [m.get("method") for m in transport.sent if "id" in m]


def test_a_task_is_followed_to_its_result_and_every_message_validates(wire_validator):
    async def go():
        transport, served = in_memory(_load(TASKS))
        confirmations: list[str] = []

        def elicitation(params):
            confirmations.append(params["message"])
            return {"confirm": True}

        async with Client(transport=transport, era="modern", elicitation=elicitation) as c:
            report = await c.call_tool("build_report", {"topic": "owls", "pages": 1})
            assert report == {"content": [{"type": "text", "text": "Report on owls: 1 pages"}]}
            purged = await c.call_tool("purge_table", {"table": "cache"})
            assert purged["content"][0]["text"] == "Purged cache"
            assert confirmations == ["Delete every row of cache?"]  # answered once, through tasks/update
        await served
        methods = _methods(transport)
        assert methods.count("tasks/update") == 1 and "tasks/get" in methods and "tasks/cancel" not in methods
        calls = {m["id"]: m["method"] for m in transport.sent if "id" in m and "method" in m}
        for m in transport.sent:
            wire.check(m, "2026-07-28", None)
            if "id" in m:
                assert m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"] == {EXT: {}}
        for m in transport.received:
            wire.check(m, "2026-07-28", calls.get(m.get("id")) if "method" not in m else None)
        handles = [m["result"] for m in transport.received if m.get("result", {}).get("resultType") == "task"]
        assert len(handles) == 2

    arun(go())


def test_without_tasks_the_client_gets_plain_results_or_the_servers_refusal():
    async def go():
        transport, served = in_memory(_load(TASKS))
        async with Client(transport=transport, era="modern", tasks=False) as c:
            report = await c.call_tool("build_report", {"topic": "owls", "pages": 1})
            assert report["content"][0]["text"] == "Report on owls: 1 pages"
            with pytest.raises(MCPError) as err:
                await c.call_tool("purge_table", {"table": "cache"})
            assert err.value.code == -32021 and err.value.required_capabilities == {"extensions": {EXT: {}}}
        await served
        assert "tasks/get" not in _methods(transport)

    arun(go())


def test_a_cancelled_caller_cancels_the_task_and_max_timeout_does_too():
    async def go():
        transport, served = in_memory(_load(TASKS))
        async with Client(transport=transport, era="modern") as c:
            call = asyncio.ensure_future(c.call_tool("crunch", {"seconds": 30}))
            handle = await within(_first_handle(transport))
            await within(transport.wait_received(_polled))  # the client is following the task
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert _cancelled(transport) == [handle]
            with pytest.raises(RequestTimeout, match="did not finish within"):
                await c.call_tool("crunch", {"seconds": 30}, max_timeout=0.3)
            assert len(_cancelled(transport)) == 2
            # the server really cancelled them: a fresh tasks/get says so
            state = await c.request("tasks/get", {"taskId": handle})
            assert state["status"] == "cancelled"
        await served

    arun(go())


def _polled(m: dict) -> bool:
    """A tasks/get answer."""
    return isinstance(m.get("result"), dict) and m["result"].get("resultType") == "complete" and "status" in m["result"]


def _cancelled(transport) -> list[str]:
    return [m["params"]["taskId"] for m in transport.sent if m.get("method") == "tasks/cancel"]


async def _first_handle(transport, start: int = 0) -> str:
    m = await transport.wait_received(
        lambda m: isinstance(m.get("result"), dict) and m["result"].get("resultType") == "task", start
    )
    return m["result"]["taskId"]


def test_a_failed_task_raises_its_error_and_a_cancelled_one_task_cancelled():
    from mcpio import Server

    server = Server("t", task_poll_interval=0.02)

    @server.tool(task_support="optional")
    async def broken() -> str:
        raise MCPError("broken on purpose", -32000, {"k": 1})

    @server.tool(task_support="optional")
    async def stopper() -> str:  # cancelled by someone else
        await asyncio.sleep(30)
        return "never"

    async def go():
        transport, served = in_memory(server)
        async with Client(transport=transport, era="modern") as c:
            with pytest.raises(MCPError) as err:
                await c.call_tool("broken")
            assert (err.value.code, err.value.message, err.value.data) == (-32000, "broken on purpose", {"k": 1})
            seen = len(transport.received)
            call = asyncio.ensure_future(c.call_tool("stopper"))
            task_id = await within(_first_handle(transport, seen))
            await within(transport.wait_received(_polled, seen))
            await c.request("tasks/cancel", {"taskId": task_id})
            with pytest.raises(TaskCancelled, match="cancelled"):
                await within(call)
        await served

    arun(go())


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_tasks_over_real_transports(transport):
    async def go(target):
        async with Client(target, era="modern", elicitation=lambda p: {"channel": "news"}) as c:
            r = await c.call_tool("publish", {"draft": "hi"})  # an MRTR round, then a task
            assert r["content"][0]["text"] == "Published 'hi' to news"
            r = await c.call_tool("build_report", {"topic": "bees", "pages": 2})
            assert r["content"][0]["text"] == "Report on bees: 2 pages"

    if transport == "stdio":
        arun(go([sys.executable, str(TASKS)]))
    else:
        with ServerThread(_load(TASKS).http_app()) as srv:
            arun(go(srv.url))


def test_core_tasks_of_2025_11_25_follow_the_tool_list():
    """A 2025-11-25 server with tasks.requests.tools.call: a tool listed taskSupport "required" is
    called with "task" and its result fetched with tasks/result; after tools/list_changed the
    client lists again (here the tool became "optional": a plain call, unless task=True)."""
    from mcpio._jsonrpc import encode
    from tests.client.test_modern_client import Scripted

    support = {"value": "required"}

    def respond(msg):
        method = msg["method"]
        if method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "serverInfo": {"name": "core-tasks", "version": "1"},
                "capabilities": {
                    "tools": {"listChanged": True},
                    "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}},
                },
            }
        if method == "tools/list":
            return {
                "tools": [
                    {"name": "job", "inputSchema": {"type": "object"}, "execution": {"taskSupport": support["value"]}}
                ]
            }
        if method == "tools/call" and "task" in msg["params"]:
            return {
                "task": {
                    "taskId": "t1",
                    "status": "working",
                    "createdAt": "2026-11-23T00:00:00Z",
                    "lastUpdatedAt": "2026-11-23T00:00:00Z",
                    "ttl": 60000,
                }
            }
        if method == "tools/call":
            return {"content": [{"type": "text", "text": "direct"}]}
        if method == "tasks/result":
            return {
                "content": [{"type": "text", "text": "from the task"}],
                "_meta": {"io.modelcontextprotocol/related-task": {"taskId": msg["params"]["taskId"]}},
            }
        return {}

    async def go():
        changed = asyncio.Event()
        s = Scripted(respond).start()
        async with Client(transport=s.ours, era="legacy", on_notification=lambda m, p: changed.set()) as c:
            assert await c.call_tool("job") == {"content": [{"type": "text", "text": "from the task"}]}
            support["value"] = "optional"
            await s.theirs.send(encode({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            await within(changed.wait())
            assert (await c.call_tool("job"))["content"][0]["text"] == "direct"
            # task=True: an "optional" tool is called as a task too
            assert (await c.call_tool("job", task=True))["content"][0]["text"] == "from the task"
        calls = [m for m in s.seen if m.get("method") == "tools/call"]
        assert [("task" in m["params"]) for m in calls] == [True, False, True]
        assert s.methods().count("tools/list") == 2

    arun(go())
