"""Tasks seen from the client: the ``io.modelcontextprotocol/tasks`` extension of 2026-07-28,
and the experimental core tasks of 2025-11-25 (:func:`legacy_task_call`).

A :class:`~mcpio.Client` declares the extension on every modern request (``Client(tasks=True)``,
the default), so a server may answer ``tools/call`` with a task handle (``resultType: "task"``).
:func:`await_task` then does what the caller of ``call_tool`` would otherwise have to: poll
``tasks/get`` at the task's ``pollIntervalMs`` (spec: clients SHOULD honour it), answer the
``inputRequests`` of an ``input_required`` task with the client's handlers through
``tasks/update`` (each key once, spec §Task Update Requests), and end with the inlined result
(``completed``), the inlined JSON-RPC error raised as :class:`~mcpio.MCPError` (``failed``) or
:class:`TaskCancelled` (``cancelled``). If the caller is cancelled or ``max_timeout`` passes,
the server is told with ``tasks/cancel``.

A caller who wants every status (``on_status``; ``Client.call_tool(on_task_status=)``) would
miss those between two polls, so the task is also listened to: a ``subscriptions/listen``
stream naming it (``taskIds``) carries each state the server pushes as ``notifications/tasks``
(spec tasks extension §Task Status Notifications: a server MAY push them; each is the
DetailedTask ``tasks/get`` would give, result included). The call waits for the stream's
acknowledgement before it reports the first status, so nothing after that is missed; a server
that does not name the task in it (or refuses the stream) is only polled. Polling goes on
beside the pushes, at the server's interval: the only way the protocol offers, and the one the
spec guarantees.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

from .._errors import INTERNAL_ERROR, MCPError, RemoteProtocolError, RequestTimeout
from . import _handlers

if TYPE_CHECKING:
    from .._session import Session
    from ._client import Client
    from ._modern import ModernEra

log = logging.getLogger("mcpio.client")

MIN_POLL = 0.01  # seconds: bounds for a server's pollIntervalMs
MAX_POLL = 30.0
DEFAULT_POLL = 1.0


class TaskCancelled(MCPError):
    """The task behind a call ended as ``cancelled`` (by the server, or by our tasks/cancel)."""

    def __init__(self, message: str, code: int | None = INTERNAL_ERROR, data: Any = None) -> None:
        super().__init__(message, code, data)


def _interval(task: dict[str, Any]) -> float:
    ms = task.get("pollIntervalMs", task.get("pollInterval"))  # 2026-07-28, 2025-11-25
    if type(ms) is not int or ms <= 0:
        return DEFAULT_POLL
    return min(MAX_POLL, max(MIN_POLL, ms / 1000))


async def await_task(
    era: ModernEra,
    session: Session,
    created: dict[str, Any],
    *,
    timeout: float | None,
    max_timeout: float | None,
    on_status: Callable[[dict[str, Any]], Any] | None = None,
) -> dict[str, Any]:
    """Follow the task ``created`` (a CreateTaskResult) to its end; see the module docstring.
    ``on_status`` (sync or async) is given the task as first seen, as every ``tasks/get``
    answers it and as the server pushes each state."""
    task_id = created.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise RemoteProtocolError("tools/call: the server answered a task without a taskId")
    deadline = None if max_timeout is None else time.monotonic() + max_timeout
    answered: set[str] = set()
    task = created

    async def send(method: str, params: dict[str, Any]) -> Any:
        return await era._send(
            session, method, {"taskId": task_id, **params}, timeout=timeout, max_timeout=None, on_progress=None
        )

    pushed: _Pushes | None = None
    try:
        if on_status is not None:
            pushed = await _Pushes.open(era, session, task_id, timeout)
        while True:
            if on_status is not None:
                await _handlers.call(on_status, task)
            status = task.get("status")
            if status == "completed":
                result = task.get("result")
                if not isinstance(result, dict):
                    raise RemoteProtocolError(f"task {task_id}: completed without a result object")
                return {k: v for k, v in result.items() if k != "resultType"}
            if status == "failed":
                error = task.get("error")
                raise MCPError.from_error_object(
                    error
                    if isinstance(error, dict)
                    else {
                        "code": INTERNAL_ERROR,
                        "message": f"task {task_id} failed: {task.get('statusMessage', 'no error given')}",
                    }
                )
            if status == "cancelled":
                raise TaskCancelled(
                    f"task {task_id} was cancelled"
                    + (f": {task['statusMessage']}" if task.get("statusMessage") else "")
                )
            if status == "input_required":
                requests = task.get("inputRequests")
                fresh = {k: v for k, v in requests.items() if k not in answered} if isinstance(requests, dict) else {}
                if fresh:
                    responses = await era._answer("tools/call", fresh)
                    answered.update(fresh)
                    await send("tasks/update", {"inputResponses": responses or {}})
                    task = await send("tasks/get", {})
                    continue
            elif status != "working":
                raise RemoteProtocolError(f"task {task_id}: unknown status {status!r}")
            pause = _interval(task)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RequestTimeout(
                        f"tools/call: task {task_id} did not finish within {max_timeout:g} s "
                        "(max_timeout); it was cancelled"
                    )
                pause = min(pause, left)
            # the server's polling interval (spec §Task Polling), or the next state it pushes
            state = None
            if pushed is None:
                await asyncio.sleep(pause)
            else:
                state = await pushed.next(pause)
            task = state if state is not None else await send("tasks/get", {})
            if not isinstance(task, dict):
                raise RemoteProtocolError(f"task {task_id}: tasks/get answered {type(task).__name__}, not an object")
    except (asyncio.CancelledError, RequestTimeout):
        with contextlib.suppress(Exception):  # best effort: the caller no longer wants the result
            await asyncio.wait_for(asyncio.shield(send("tasks/cancel", {})), 5.0)
        raise
    finally:
        if pushed is not None:
            await pushed.close()


ACK_WAIT = 10.0  # seconds: at most this long for a task's listen stream to be acknowledged


class _Pushes:
    """The ``notifications/tasks`` about one task, from a listen stream of its own (see the
    module docstring): :meth:`open` it, take states with :meth:`next`, :meth:`close` it."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.states: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.acked = asyncio.Event()  # acknowledged, or the stream ended first
        self.honoured = False  # the acknowledgement names the task
        self.stream: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, era: ModernEra, session: Session, task_id: str, timeout: float | None) -> _Pushes | None:
        """The pushes about ``task_id``, once the server acknowledged a stream naming it; None
        when it did not name it, refused the stream or did not acknowledge it in time."""
        pushes = cls(task_id)

        async def listening() -> None:
            try:
                await era.listen(session, {"taskIds": [task_id]}, pushes.heard)
            finally:
                pushes.acked.set()

        pushes.stream = asyncio.get_running_loop().create_task(listening())
        try:
            async with asyncio.timeout(ACK_WAIT if timeout is None else min(timeout, ACK_WAIT)):
                await pushes.acked.wait()
        except TimeoutError:
            pass
        except BaseException:  # the caller gave up meanwhile: the stream goes with it
            await pushes.close()
            raise
        if pushes.honoured and not pushes.stream.done():
            return pushes
        await pushes.close()
        return None

    def heard(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            return
        if method == "notifications/subscriptions/acknowledged":
            kept = params.get("notifications")
            ids = kept.get("taskIds") if isinstance(kept, dict) else None
            self.honoured = isinstance(ids, list) and self.task_id in ids
            self.acked.set()
        elif method == "notifications/tasks" and params.get("taskId") == self.task_id:
            self.states.put_nowait({k: v for k, v in params.items() if k != "_meta"})

    async def next(self, wait: float) -> dict[str, Any] | None:
        """The next state pushed within ``wait`` seconds, or None (time to poll)."""
        try:
            async with asyncio.timeout(wait):
                return await self.states.get()
        except TimeoutError:
            return None

    async def close(self) -> None:
        """End the stream (cancelling its request tells the server)."""
        stream = self.stream
        if stream is not None and not stream.done():
            stream.cancel()
            with contextlib.suppress(BaseException):
                await stream


RELATED_TASK = "io.modelcontextprotocol/related-task"
MAX_EARLY = 256  # statuses of tasks not known yet, kept while calls wait for their task's id


class StatusWatch:
    """``notifications/tasks/status`` (2025-11-25) to the calls following the tasks they name.

    A status may be read before the call that made its task learns the task's id (the
    notification can come ahead of the CreateTaskResult, or be read before the call resumes):
    while a call waits for its id (:meth:`creating`), statuses of tasks nobody follows yet are
    kept (at most :data:`MAX_EARLY`) and handed to the call when it follows its task."""

    def __init__(self) -> None:
        self._following: dict[str, Callable[[dict[str, Any]], Any]] = {}
        self._creating = 0
        self._early: list[dict[str, Any]] = []

    async def status(self, params: dict[str, Any]) -> None:
        follow = self._following.get(params.get("taskId"))  # type: ignore[arg-type]
        if follow is not None:
            await _handlers.call(follow, params)
        elif self._creating and len(self._early) < MAX_EARLY:
            self._early.append(params)

    @contextlib.contextmanager
    def creating(self) -> Iterator[None]:
        self._creating += 1
        try:
            yield
        finally:
            self._creating -= 1
            if not self._creating:
                self._early.clear()

    async def follow(self, task_id: str, on_status: Callable[[dict[str, Any]], Any]) -> None:
        early = [p for p in self._early if p.get("taskId") == task_id]
        self._early = [p for p in self._early if p.get("taskId") != task_id]
        self._following[task_id] = on_status
        for params in early:
            await _handlers.call(on_status, params)

    def leave(self, task_id: str) -> None:
        self._following.pop(task_id, None)


def calls_as_tasks(client: Client) -> bool:
    """Whether the server (2025-11-25) supports task-augmented tools/call: then
    :func:`called_as_task` tells which calls are sent as tasks (a check with no awaiting, made
    first on every call)."""
    if not client.tasks or client.negotiated_era != "legacy":
        return False
    tasks = client.server_capabilities.get("tasks")
    if not isinstance(tasks, dict):
        return False
    requests = tasks.get("requests")
    return (
        isinstance(requests, dict)
        and isinstance(requests.get("tools"), dict)
        and isinstance(requests["tools"].get("call"), dict)
    )


async def called_as_task(client: Client, name: str, wanted: bool) -> bool:
    """Whether ``tools/call`` of ``name`` is sent as a task: the server lists the tool with
    ``execution.taskSupport: "required"``, or ``"optional"`` and the caller ``wanted`` one
    (looked up in tools/list once); asked only when :func:`calls_as_tasks`."""
    if client._task_support is None:
        await client.list_tools()
    support = (client._task_support or {}).get(name)
    return support == "required" or (wanted and support == "optional")


async def legacy_task_call(
    client: Any,
    params: dict[str, Any],
    *,
    timeout: float | None,
    max_timeout: float | None,
    on_status: Callable[[dict[str, Any]], Any] | None = None,
) -> dict[str, Any]:
    """``tools/call`` of a tool whose ``execution.taskSupport`` is ``"required"`` (2025-11-25,
    basic/utilities/tasks): send it with ``task``, then wait on ``tasks/result``, which blocks
    until the task ends and carries its input requests (answered by the client's handlers);
    returns the tool's result (or raises its JSON-RPC error). ``on_status`` is given each
    ``notifications/tasks/status`` about the task. If the caller gives up (cancelled, or
    ``max_timeout`` passes) the server is sent ``tasks/cancel`` when it announced it."""
    watch: StatusWatch = client._task_status
    with watch.creating():
        created = await client.request("tools/call", {**params, "task": {}}, timeout=timeout)
        task = created.get("task") if isinstance(created, dict) else None
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if not isinstance(task_id, str):
            if isinstance(created, dict) and "content" in created:
                return created  # the server answered at once after all
            raise RemoteProtocolError(
                f"tools/call {params.get('name')!r}: the server answered a task call without a task id"
            )
        if on_status is not None:
            await watch.follow(task_id, on_status)
    try:
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=max_timeout)
    except (asyncio.CancelledError, RequestTimeout):
        tasks = client.server_capabilities.get("tasks")
        if isinstance(tasks, dict) and isinstance(tasks.get("cancel"), dict):
            with contextlib.suppress(Exception):  # best effort
                await asyncio.wait_for(
                    asyncio.shield(client.request("tasks/cancel", {"taskId": task_id}, timeout=5.0)), 5.0
                )
        raise
    finally:
        watch.leave(task_id)
    return _unrelated(result)


def _unrelated(result: Any) -> dict[str, Any]:
    """A ``tasks/result`` answer without the related-task ``_meta`` entry (2025-11-25)."""
    if isinstance(result, dict) and isinstance(result.get("_meta"), dict) and RELATED_TASK in result["_meta"]:
        meta = {k: v for k, v in result["_meta"].items() if k != RELATED_TASK}
        result = {k: v for k, v in result.items() if k != "_meta"} | ({"_meta": meta} if meta else {})
    return cast("dict[str, Any]", result)


# ---------------------------------------------------------------- task handles (the inspector's view)
async def start_tool_task(client: Client, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """``tools/call`` as a task, not followed: ``{"task": Task}`` when the server made one,
    ``{"result": CallToolResult}`` when it answered at once. 2026-07-28: the tasks extension is
    declared and the server decides; 2025-11-25: the call carries ``task`` (the client asks)."""
    era, session = client._era, client.session
    if era is None or session is None:
        raise RuntimeError("not connected: connect first")
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if era.name == "legacy":
        created = await client.request("tools/call", {**params, "task": {}})
        task = created.get("task") if isinstance(created, dict) else None
        return {"task": task} if isinstance(task, dict) else {"result": created}
    result = await cast("ModernEra", era).request(
        session, "tools/call", params, timeout=client.timeout, max_timeout=None, on_progress=None, follow_task=False
    )
    if isinstance(result, dict) and result.get("resultType") == "task":
        return {"task": {k: v for k, v in result.items() if k != "resultType"}}
    return {"result": result}


async def follow_tool_task(
    client: Client, task: dict[str, Any], on_status: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Follow a task :func:`start_tool_task` made to its end, giving ``on_status`` every state
    seen; returns the tool's result, raises its error (:class:`TaskCancelled` when cancelled).
    2026-07-28: :func:`await_task` (input requests answered with the client's handlers);
    2025-11-25: ``tasks/get`` at the task's ``pollInterval``, then ``tasks/result`` (the
    server's questions come as ordinary requests, answered by the handlers)."""
    era, session = client._era, client.session
    if era is None or session is None:
        raise RuntimeError("not connected: connect first")
    if era.name != "legacy":
        return await await_task(
            cast("ModernEra", era), session, task, timeout=client.timeout, max_timeout=None, on_status=on_status
        )
    task_id = task.get("taskId")
    while True:
        on_status(task)
        status = task.get("status")
        if status in ("completed", "failed"):
            return _unrelated(await client.request("tasks/result", {"taskId": task_id}))
        if status == "cancelled":
            raise TaskCancelled(f"task {task_id} was cancelled")
        await asyncio.sleep(_interval(task))
        task = await client.request("tasks/get", {"taskId": task_id})
        if not isinstance(task, dict):
            raise RemoteProtocolError(f"task {task_id}: tasks/get answered {type(task).__name__}, not an object")
