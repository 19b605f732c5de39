"""The experimental core tasks of 2025-11-25 (basic/utilities/tasks, SEP-1686), on the same
``Task`` model and store as the 2026-07-28 extension (``_tasks``).

Differences from the extension, all from that revision of the spec:

* the *client* decides: a ``tools/call`` carrying ``params.task`` (``{"ttl": ms}``) becomes a
  task when the tool's ``execution.taskSupport`` (``task_support``) is "optional" or
  "required"; without ``task`` a "required" tool is -32601, and ``task`` on a tool that does
  not support tasks is -32601 too (ignored when the server announces no tasks at all);
* the answer is ``CreateTaskResult`` ``{"task": Task}``; ``Task`` has ``ttl`` and
  ``pollInterval``; ``tasks/get`` and ``tasks/cancel`` answer a ``Task``;
* ``tasks/result`` waits for the end and answers exactly what the call would have (the tool's
  result with ``_meta`` related-task, or its JSON-RPC error); an ``isError`` result makes the
  task ``failed``;
* input: the task's ``ctx.elicit``/``sample``/``list_roots`` are sent to the client at once,
  tagged with the task (``_meta`` related-task), the task ``input_required`` meanwhile;
  progress notifications keep going under the call's progressToken, and each status change is
  sent as ``notifications/tasks/status``;
* tasks belong to the session that created them (``tasks/list`` shows those, paginated);
  ``tasks/cancel`` of a finished task is -32602.

On an HTTP server with a shared state backend (``RedisState``) the records are shared as for the
extension (``_tasks_shared``): a task is its session's on every process (by ``Mcp-Session-Id``),
``tasks/list`` lists the session's tasks from every process, and ``tasks/result`` waits for an
end recorded by another process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import InvalidParams, MCPError, MethodNotFound
from .._versions import CORE_TASKS_CAPABILITY, Rules
from ._pagination import paginate
from ._tasks import RELATED_TASK, TaskStore, attach
from ._tasks_shared import TERMINAL

if TYPE_CHECKING:
    from ._context import Context
    from ._tools import Tool

CAPABILITY = CORE_TASKS_CAPABILITY


def announces(server: Any, rules: Rules) -> bool:
    return "tasks" in server.capabilities(rules)


async def call_tool(tool: Tool, params: dict[str, Any], ctx: Context, rules: Rules) -> dict[str, Any]:
    """``tools/call`` in 2025-11-25 for a task tool, or with ``params.task`` (module docstring)."""
    import asyncio

    wanted = params.get("task")
    if wanted is None:
        if tool.task_support == "required":
            raise MethodNotFound(
                f"Method not found: the tool {tool.name!r} runs only as a task (execution.taskSupport "
                '"required"); call it with params.task, e.g. {"ttl": 60000}'
            )
        return await tool.call(params.get("arguments"), ctx, rules)
    if tool.task_support == "forbidden":
        if not announces(ctx.server, rules):  # spec: a receiver without the capability ignores it
            return await tool.call(params.get("arguments"), ctx, rules)
        raise MethodNotFound(
            f"Method not found: the tool {tool.name!r} does not run as a task; call it without params.task"
        )
    if not isinstance(wanted, dict):
        raise InvalidParams('Invalid params: "task" must be an object, e.g. {"ttl": 60000}')
    store: TaskStore = ctx.server.tasks
    ttl = wanted.get("ttl")
    seconds = min(ttl / 1000, store.ttl) if type(ttl) is int and ttl > 0 else None  # the server may shorten it
    task = await ctx._begin_task(core=True, ttl=seconds)
    attach(task, asyncio.get_running_loop().create_task(tool.call(params.get("arguments"), ctx, rules)))
    return {"task": task.core_fields()}


def _store(ctx: Context, method: str) -> TaskStore:
    assert ctx.rules is not None
    if not announces(ctx.server, ctx.rules):
        raise MethodNotFound(f"Method not found: {method!r} (this server has no tools that run as tasks)")
    return ctx.server.tasks


async def tasks_get(server: Any, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return (await _store(ctx, "tasks/get").find(params, ctx.session, ctx.principal)).core_fields()


async def tasks_result(server: Any, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Wait for the task's end; answer what the call would have answered."""
    store = _store(ctx, "tasks/result")
    task = await store.wait_end(await store.find(params, ctx.session, ctx.principal))
    if task.error is not None:
        raise MCPError.from_error_object(task.error)
    if task.status == "cancelled" and task.result is None:
        raise InvalidParams(f"Task {task.id} was cancelled before it produced a result")
    result = dict(task.result or {})
    result["_meta"] = {**(result.get("_meta") or {}), RELATED_TASK: {"taskId": task.id}}
    return result


async def tasks_list(server: Any, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    owned = await _store(ctx, "tasks/list").owned(ctx.session)
    page, nxt = paginate(owned, params, server.page_size, "tasks")
    out: dict[str, Any] = {"tasks": [t.core_fields() for t in page]}
    if nxt is not None:
        out["nextCursor"] = nxt
    return out


async def tasks_cancel(server: Any, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    store = _store(ctx, "tasks/cancel")
    task = await store.find(params, ctx.session, ctx.principal)
    cancelled = task.status not in TERMINAL and await store.cancel(task)
    now = await store.find(
        params, ctx.session, ctx.principal
    )  # with a shared store, possibly ended elsewhere meanwhile
    if not cancelled:
        raise InvalidParams(f"Invalid params: task {task.id} has already ended ({now.status}); it cannot be cancelled")
    return now.core_fields()
