"""``Client.call_tool(on_task_status=)`` in 2026-07-28: every state of the task the server makes
of the call reaches the caller, not only those a ``tasks/get`` happens to see. The client
listens to the task (``subscriptions/listen`` with ``taskIds``) and the server pushes each state
as ``notifications/tasks`` (tasks extension §Task Status Notifications). Before, the client only
polled at the server's ``pollIntervalMs`` and the statuses in between were lost. Against a real
uvicorn on 127.0.0.1 (its own loop and thread), over Streamable HTTP; the server's polling
interval is 60 s, so only pushes can bring the states within the test's bounds."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from mcpio import Client, Context, Server
from tests.client.support import arun
from tests.support.http import ServerThread

STEPS = (1, 2, 3)


def staged_server(gates: dict[int, threading.Event]) -> Server:
    """A tool run as a task that moves through three statuses, each only once the client has
    seen the state before it (``gates``): what it shows cannot be missed by a fast server."""
    server = Server("pushes", task_poll_interval=60.0)

    @server.tool(task_support="required")
    async def staged(ctx: Context) -> str:
        """Three stages, each shown as the task's statusMessage."""
        for step in STEPS:
            assert await asyncio.to_thread(gates[step].wait, 20), f"the client never saw the state before step {step}"
            ctx.set_task_status(f"step {step}")
        return "staged"

    return server


def test_each_status_of_a_modern_task_reaches_on_task_status() -> None:
    gates = {step: threading.Event() for step in STEPS}
    sent: list[str] = []  # methods the client sent

    def trace(direction: str, frame: bytes) -> None:
        if direction == "out":
            message = json.loads(frame)
            method = message.get("method")
            if method == "subscriptions/listen" and "taskIds" in message["params"]["notifications"]:
                method += " taskIds"  # the task's own stream (the client may listen for other things too)
            sent.append(method)

    with ServerThread(staged_server(gates).http_app("/mcp")) as srv:

        async def go() -> None:
            seen: list[dict[str, Any]] = []

            def on_task_status(task: dict[str, Any]) -> None:
                seen.append(task)
                message = task.get("statusMessage")
                if task["status"] == "working":  # the created task opens stage 1, stage N opens N+1
                    step = 1 if message is None else int(message.split()[-1]) + 1
                    if step in gates:
                        gates[step].set()

            async with Client(srv.url, era="modern", timeout=30, trace=trace) as client:
                result = await client.call_tool("staged", {}, on_task_status=on_task_status)
            assert result.text == "staged"
            working = [t.get("statusMessage") for t in seen if t["status"] == "working"]
            assert working == [None, "step 1", "step 2", "step 3"]
            assert seen[-1]["status"] == "completed"
            assert len({t["taskId"] for t in seen}) == 1

        arun(go(), timeout=30)
    assert "tasks/get" not in sent  # nothing was polled: every state came pushed
    assert sent.count("subscriptions/listen taskIds") == 1
