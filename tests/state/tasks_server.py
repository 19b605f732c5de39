"""A server for the cross-process task tests:
``python tests/state/tasks_server.py PORT REDIS_URL [MAX_TASKS [TASK_TTL [SESSION_TIMEOUT]]]``.

Tools that run as tasks (2026-07-28 extension; 2025-11-25 core tasks): ``purge`` asks for a
confirmation (``input_required`` until ``tasks/update``), ``hold`` runs until cancelled, and
``cancelled`` (plain) says which ``hold`` runs were cancelled in this process, ``echo`` (optional)
returns its text at once, ``steps`` (optional) sets its status message twice in a row, then returns.
The task lease
is 2 s, so the tasks of a killed process are reported failed about 2 s later."""

from __future__ import annotations

import asyncio
import logging
import sys

from mcpio import Context, Server, ToolError
from mcpio._state import RedisState

max_tasks = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
ttl = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0
session_timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 1800.0
if len(sys.argv) > 5:  # the tests read when a copy of a session is dropped here (INFO on stderr)
    logging.getLogger("mcpio").addHandler(logging.StreamHandler())
    logging.getLogger("mcpio").setLevel(logging.INFO)
server = Server("tasks", version="1.0.0", task_ttl=ttl, task_poll_interval=0.05, max_tasks=max_tasks)
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
stopped: list[str] = []


@server.tool(task_support="required")
async def purge(table: str, ctx: Context) -> str:
    answer = await ctx.elicit(f"Delete every row of {table}?", CONFIRM)
    if not (answer.get("content") or {}).get("confirm"):
        raise ToolError(f"Not confirmed: {table} was left as it was")
    return f"Purged {table}"


@server.tool(task_support="optional")
async def hold(label: str) -> str:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        stopped.append(label)
        raise
    return "never"  # pragma: no cover


@server.tool(task_support="optional")
def echo(text: str) -> str:
    return text


@server.tool(task_support="optional")
async def steps(ctx: Context) -> str:
    ctx.set_task_status("step 1")  # two changes before this coroutine lets anything else run
    ctx.set_task_status("step 2")
    return "stepped"


@server.tool
def cancelled() -> list[str]:
    return stopped


if __name__ == "__main__":
    server.run(
        "http", port=int(sys.argv[1]), state=RedisState(sys.argv[2], task_lease=2.0), session_timeout=session_timeout
    )
