"""Tasks shared by the processes of one HTTP server: the server side of the state
backend's task directory (``state.tasks``, :class:`mcpio._state._redis_tasks.RedisTaskDirectory`).

:class:`~._tasks.TaskStore` keeps running the tasks of this process as before; with a directory
(``TaskStore.share``) it also:

* reserves each new task's slot in the directory before ``CreateTaskResult`` is sent, within the
  bounds counted over every process (``max_tasks``, ``max_tasks_per_requester``);
* writes each change of a task (status, statusMessage, pending ``inputRequests``, the result or
  error) to the directory, in order, one write at a time per task (:func:`mirror`);
* answers ``tasks/get`` / ``tasks/result`` for a task another process runs from its record
  (:class:`RemoteTask`), and carries ``tasks/update`` / ``tasks/cancel`` to that process over
  the backend's bus (a cancel is recorded at once: terminal is final, whatever the running
  process writes after);
* ``tasks/result`` elsewhere waits for the end: woken by the bus when a task ends, and reading
  the record again at least once per lease (a process that died never says so; reading the
  record after its lease marks the task failed);
* lists a session's core tasks from every process (``tasks/list``), and acknowledges and feeds
  ``subscriptions/listen`` ``taskIds`` for tasks other processes run (``_http``);
* turns Redis being down into a JSON-RPC error that says so (:func:`reachable`).

A task created by an authenticated caller is that principal's on every process (its record
carries ``principal``): another principal's ``tasks/get``, ``update``, ``cancel``, ``result``
and ``listen`` ``taskIds`` get what an unknown task gets (:func:`bound_to`).

:class:`TaskView` (the wire shapes of a task) lives here too, so both kinds of task share them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .. import _log
from .._errors import INTERNAL_ERROR, MCPError
from .._transports._base import abilities

if TYPE_CHECKING:
    from ._tasks import Task, TaskStore

log = _log.logger("mcpio.server", globals())

TERMINAL = frozenset({"completed", "failed", "cancelled"})  # a task in one of these never changes again


def owner_key(session: Any) -> str | None:
    """The id that names a legacy HTTP session on every process (its ``Mcp-Session-Id``)."""
    if session is None:
        return None
    return abilities(getattr(session, "transport", None)).session_id


def requester_key(requester: Any) -> str | None:
    """The requester of ``max_tasks_per_requester`` as a name all processes agree on."""
    if requester is None:
        return None
    if isinstance(requester, str):
        return "p:" + requester  # an authenticated principal
    sid = owner_key(requester)
    return None if sid is None else "s:" + sid


def bound_to(task: TaskView, principal: str | None) -> bool:
    """Whether the caller ``principal`` may reach ``task``: the principal that created it (ext-tasks
    §Security Considerations: servers MUST check every task request against the requester's
    authorization context). A task created without auth (``task.principal`` None) is bound to no
    caller: its unguessable id is the access (core tasks are bound to their session too)."""
    return task.principal is None or task.principal == principal


@contextlib.contextmanager
def reachable() -> Iterator[None]:
    """Redis down (``StateUnavailable``) as a JSON-RPC error that says so: the request was fine."""
    from .._state._base import StateUnavailable

    try:
        yield
    except StateUnavailable as exc:
        raise MCPError(
            f"Internal error: the shared task store is unreachable ({exc}); the request was fine, "
            f"retry it in {exc.retry_after} s",
            INTERNAL_ERROR,
        ) from None


def body(task: Task) -> dict[str, Any]:
    """What a task's record holds besides its status (see ``_redis_tasks``)."""
    return {
        "taskId": task.id,
        "createdAt": task.created_at,
        "pollIntervalMs": task.poll_ms,
        "result": task.result,
        "error": task.error,
        "inputRequests": task.input_requests() if task.status == "input_required" else None,
        "core": task.core,
        "owner": owner_key(task.owner) if task.core else None,
        "principal": task.principal,
    }


async def reserve(store: TaskStore, task: Task) -> None:
    """Reserve ``task``'s slot in the shared directory; -32603 when a bound refuses it."""
    with reachable():
        refused = await store.shared.create(
            task.id,
            requester_key(task.requester),
            store.max_tasks,
            store.max_per_requester,
            task.ttl,
            body(task),
            owner_key(task.owner) if task.core else None,
        )
    if refused is None:
        return
    reason, n = refused
    if reason == "requester":
        raise MCPError(
            f"Too many tasks: this caller already has {n} unfinished tasks, the most this server "
            f"allows one caller (max_tasks_per_requester); wait for or cancel some (tasks/cancel)",
            INTERNAL_ERROR,
        )
    raise MCPError(
        f"Too many tasks: this server keeps at most {n} and all are unfinished; "
        "cancel some (tasks/cancel), or retry later",
        INTERNAL_ERROR,
    )


def mirror(directory: Any, task: Task) -> None:
    """A task of this process changed: write it to the directory (coalesced, in order)."""
    import asyncio

    task._dirty = True
    if task.writer is not None and not task.writer.done():
        return  # the writer running now writes this change too
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # pragma: no cover - a change outside the loop (shutdown)
        return
    task.writer = loop.create_task(_flush(directory, task))


async def _flush(directory: Any, task: Task) -> None:
    from .._state._base import StateUnavailable

    while task._dirty:
        task._dirty = False
        terminal = task.status in TERMINAL
        try:
            await directory.put(task.id, task.status, task.status_message, body(task), terminal, task.updated_at)
        except StateUnavailable as exc:
            log.warning("task %s: its new status (%s) is not shared: %s", task.id, task.status, exc)


class TaskView:
    """The wire shapes of a task, from its attributes: shared by :class:`Task` (run here) and
    :class:`~._tasks_shared.RemoteTask` (a record another process keeps up to date)."""

    __slots__ = ()
    id: str
    status: str
    status_message: str | None
    created_at: str
    updated_at: str
    ttl: float
    poll_ms: int
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    core: bool
    principal: str | None  # the authenticated caller that created it (None: no auth), bound_to

    def input_requests(self) -> dict[str, Any]:
        raise NotImplementedError

    # ---------------------------------------------------------------- wire shapes
    def fields(self, ttl_key: str = "ttlMs", poll_key: str = "pollIntervalMs") -> dict[str, Any]:
        """The ``Task`` object (spec §Tasks); 2025-11-25 named the two durations ``ttl`` and
        ``pollInterval`` (both milliseconds): see :meth:`core_fields`."""
        out: dict[str, Any] = {"taskId": self.id, "status": self.status}
        if self.status_message is not None:
            out["statusMessage"] = self.status_message
        out["createdAt"] = self.created_at
        out["lastUpdatedAt"] = self.updated_at
        out[ttl_key] = max(1, round(self.ttl * 1000))
        out[poll_key] = self.poll_ms
        return out

    def core_fields(self) -> dict[str, Any]:
        """The 2025-11-25 ``Task`` object."""
        return self.fields("ttl", "pollInterval")

    def created_result(self) -> dict[str, Any]:
        """``CreateTaskResult``: flat ``Result & Task`` with ``resultType: "task"``."""
        return {"resultType": "task", **self.fields()}

    def detailed(self) -> dict[str, Any]:
        """``DetailedTask`` (tasks/get, notifications/tasks): the Task plus what its status inlines."""
        out = self.fields()
        if self.status == "input_required":
            out["inputRequests"] = self.input_requests()
        elif self.status == "completed" and self.result is not None:
            out["result"] = self.result
        elif self.status == "failed" and self.error is not None:
            out["error"] = self.error
        return out


class RemoteTask(TaskView):
    """A task another process runs, as its record says (the wire shapes of ``TaskView``)."""

    __slots__ = (
        "_inputs",
        "core",
        "created_at",
        "error",
        "id",
        "node",
        "owner",
        "poll_ms",
        "principal",
        "result",
        "status",
        "status_message",
        "ttl",
        "updated_at",
    )

    def __init__(self, record: dict[str, Any]) -> None:
        b = record["body"]
        self.id: str = b["taskId"]
        self.status: str = record["status"]
        self.status_message: str | None = record["message"]
        self.created_at: str = b["createdAt"]
        self.updated_at: str = record["updated"]
        self.ttl: float = record["ttl_ms"] / 1000
        self.poll_ms: int = b["pollIntervalMs"]
        self.result: dict[str, Any] | None = b.get("result")
        self.error: dict[str, Any] | None = b.get("error")
        if record["died"]:
            self.error = {"code": INTERNAL_ERROR, "message": f"Internal error: {record['message']}"}
            self.result = None
        self.core: bool = bool(b.get("core"))
        self.owner: str | None = b.get("owner")
        self.principal: str | None = b.get("principal")
        self.node: str = record["node"]
        self._inputs: dict[str, Any] = b.get("inputRequests") or {}

    def input_requests(self) -> dict[str, Any]:
        return dict(self._inputs)


async def fetch(directory: Any, task_id: str, owner: Any, principal: str | None = None) -> RemoteTask | None:
    """The record of ``task_id`` as a task view; None when unknown, expired, another
    principal's (:func:`bound_to`) or (core tasks) another session's."""
    with reachable():
        record = await directory.get(task_id)
    if record is None:
        return None
    task = RemoteTask(record)
    if (task.core and task.owner != owner_key(owner)) or not bound_to(task, principal):
        return None
    return task


async def owned_by(directory: Any, owner: Any) -> list[RemoteTask]:
    """The core tasks of session ``owner`` on every process, oldest first."""
    key = owner_key(owner)
    if key is None:
        return []
    with reachable():
        return [RemoteTask(record) for record in await directory.owned_by(key)]


async def send(directory: Any, task: Any, command: dict[str, Any]) -> None:
    """``tasks/update`` for a task another process runs: to that process, returning once it
    recorded the effect (or, if it does not answer within a lease, it may have died)."""
    with reachable():
        await directory.send(task.node, {"id": task.id, **command})


async def recorded(writer: Any) -> None:
    """Wait for a task's pending write (``Task.writer``), if there is one."""
    import asyncio

    if writer is not None and not writer.done():
        await asyncio.shield(writer)


async def cancel(directory: Any, task: Any, message: str) -> bool:
    """Cancel a task another process runs: recorded now, its process told to stop it."""
    with reachable():
        return bool(await directory.cancel(task.id, message) == 1)


async def wait_end(directory: Any, task: Any) -> RemoteTask:
    """The task once terminal; woken by the bus, reading the record at least once per lease."""
    from .._errors import InvalidParams

    while True:
        event = directory.watch()
        try:
            with reachable():
                record = await directory.get(task.id)
            if record is None:
                raise InvalidParams(f"Failed to retrieve task: Task not found ({task.id!r} has expired)")
            view = RemoteTask(record)
            if view.status in TERMINAL:
                return view
            await directory.wait_ended(event, directory.lease)
        finally:
            directory.unwatch(event)
