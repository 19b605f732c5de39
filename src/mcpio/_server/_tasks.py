"""The tasks extension (``io.modelcontextprotocol/tasks``, 2026-07-28; ext-tasks spec, SEP-2663):
a ``tools/call`` may be answered with a task handle, and the client polls for the outcome.

Which calls become tasks is the server's decision (spec §Capability Negotiation), made per tool:

* ``task_support="forbidden"`` (the default): never a task.
* ``"optional"``: a task when the request's ``_meta`` client capabilities declare the extension,
  a plain call otherwise.
* ``"required"``: as optional, but a request that does not declare the extension gets -32021
  with ``data.requiredCapabilities.extensions`` naming it (spec §Capability Negotiation).

When a call may become a task, ``task_after`` (seconds, per tool) says when it does: 0 (the
default) makes the task before the function runs; a number lets the function answer directly
if it finishes (or asks for input through an MRTR round trip) sooner; None waits for the
function to call ``await ctx.start_task()`` — the pattern of a tool that gathers input through
MRTR first and then goes asynchronous (spec §Task Creation: resolve MRTR exchanges before
answering ``CreateTaskResult``).

Inside a task the function runs on as a server-owned asyncio task, detached from the request
that created it. ``ctx.elicit`` / ``ctx.sample`` / ``ctx.list_roots`` park it in
``input_required`` with the request in ``inputRequests`` until ``tasks/update`` answers (keys
are never reused within a task); ``ctx.report_progress`` sets the task's ``statusMessage``
(progress and log notifications are not sent for tasks, spec §Task Status Notifications). A
result — ``isError`` ones included — completes the task; an :class:`MCPError` raised on purpose
fails it with that JSON-RPC error (spec §Task Execution Errors); ``tasks/cancel`` cancels it.

Tasks live in this process's memory (``TaskStore``), and they do not survive a restart. Served
over HTTP with a shared state backend (``http_app(state=RedisState(...))``), every task's record
is also kept there, so ``tasks/get``/``update``/``cancel``/``result``/``list`` are answered by
any process, the bounds below hold for all processes together, and the tasks of a process that
dies are reported failed (``_tasks_shared``, :mod:`mcpio._state._redis_tasks`). A finished task
is kept for its ``ttlMs`` from creation (and at least ``RETAIN_AFTER_END`` seconds after it
ends); at most ``max_tasks`` tasks are kept at once.

Bounds: when the store is full, a new task evicts the terminal task
(completed, failed or cancelled) that ended first; only when every kept task is still live is
the new one refused (-32603 "Too many tasks"). ``tasks/cancel`` makes a task terminal, so it
frees its slot. A requester — the authenticated caller when there is one, else the session
(2025-11-25 core tasks) — holds at most ``max_tasks_per_requester`` live tasks (default
``max(1, max_tasks // 10)``); anonymous 2026-07-28 requests have no requester to tell apart
and share the global cap only.

Binding (ext-tasks §Security Considerations): a task created by an authenticated caller is
that principal's, here and on every process sharing the store: another principal's
``tasks/get``, ``tasks/update``, ``tasks/cancel`` (and 2025-11-25 ``tasks/result``), or a
``subscriptions/listen`` naming it, get what an unknown id gets (-32602; not acknowledged). Core
tasks are also bound to their session. Without auth a 2026-07-28 task is bound to no caller
(the era has no session): its id, 144 random bits, is the access.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .. import _log
from .._errors import (
    INTERNAL_ERROR,
    InvalidParams,
    MCPError,
    MethodNotFound,
    MissingRequiredClientCapability,
    to_error_object,
)
from .._versions import TASKS_EXTENSION, Rules
from . import _tasks_shared
from ._mrtr import ANSWER_SHAPES, KEY_PREFIX
from ._tasks_shared import TERMINAL, TaskView
from ._tools import check_task_options

if TYPE_CHECKING:
    import asyncio

    from ._context import Context
    from ._tools import Tool

log = _log.logger("mcpio.server", globals())

RETAIN_AFTER_END = 60.0  # seconds a task that ends after its TTL is still kept
REQUIRED: dict[str, Any] = {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
CANCELLED = "Cancelled at the client's request (tasks/cancel)."
RELATED_TASK = "io.modelcontextprotocol/related-task"  # _meta of messages that belong to a core task


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def declares_tasks(capabilities: dict[str, Any]) -> bool:
    """True when a request's client capabilities include the tasks extension."""
    ext = capabilities.get("extensions")
    return isinstance(ext, dict) and isinstance(ext.get(TASKS_EXTENSION), dict)


def missing_extension(what: str) -> MissingRequiredClientCapability:
    return MissingRequiredClientCapability(
        f"{what} needs the client capability extensions[{TASKS_EXTENSION!r}]; declare it in this "
        "request's _meta clientCapabilities",
        data=REQUIRED,
    )


class Task(TaskView):
    """One task: its state, the function's run, and the input requests it waits on."""

    __slots__ = (
        "_asking",
        "_dirty",
        "_next",
        "_used_keys",
        "core",
        "created",
        "created_at",
        "done",
        "ended",
        "error",
        "id",
        "owner",
        "pending",
        "poll_ms",
        "principal",
        "requester",
        "result",
        "runner",
        "status",
        "status_message",
        "store",
        "ttl",
        "updated_at",
        "writer",
    )

    def __init__(
        self, store: TaskStore, core: bool = False, owner: Any = None, ttl: float | None = None, requester: Any = None
    ) -> None:
        import asyncio

        self.store = store
        self.requester = requester  # who counts it against max_tasks_per_requester (None: nobody)
        # The authenticated caller that created it (a str requester is one): only it may reach it.
        self.principal: str | None = requester if isinstance(requester, str) else None
        self.core = core  # 2025-11-25 core tasks (_core_tasks) rather than the 2026-07-28 extension
        self.owner = owner  # core tasks belong to the session that created them
        self.done = asyncio.Event()  # set when the task reaches a terminal status
        self._asking = 0  # core tasks: requests to the client in flight
        import secrets  # on the first task, not at start-up (cold start)

        self.id = secrets.token_urlsafe(18)  # unguessable: knowing the id is the access
        self.status = "working"
        self.status_message: str | None = None
        self.created_at = self.updated_at = _now_iso()
        self.created = time.monotonic()
        self.ended: float | None = None
        self.ttl = store.ttl if ttl is None else ttl
        self.poll_ms = store.poll_ms
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.pending: dict[str, tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = {}
        self._used_keys: set[str] = set()
        self._next = 0
        self.runner: asyncio.Task[dict[str, Any]] | None = None
        self._dirty = False  # a change not yet written to the shared task store
        self.writer: asyncio.Task[None] | None = None  # writes it (_tasks_shared.mirror)

    def input_requests(self) -> dict[str, Any]:
        return {key: request for key, (request, _) in self.pending.items()}

    # ---------------------------------------------------------------- state changes
    def _set(self, status: str, message: str | None = None) -> None:
        self.status = status
        if message is not None:
            self.status_message = message
        self.updated_at = _now_iso()
        if status in TERMINAL:
            self.done.set()
            self.ended = time.monotonic()
            if self.ended - self.created > self.ttl:  # the TTL MAY change (spec §Tasks): keep it a while
                self.ttl = self.ended - self.created + RETAIN_AFTER_END
        self.store.changed(self)

    def progress(self, message: str) -> None:
        if self.status not in TERMINAL:
            self.status_message = message
            self.updated_at = _now_iso()
            self.store.changed(self)

    async def ask(self, method: str, params: dict[str, Any] | None, key: str | None) -> dict[str, Any]:
        """Park the task in ``input_required`` until ``tasks/update`` answers this request."""
        import asyncio

        if self.status in TERMINAL:
            raise asyncio.CancelledError
        base = key or f"{KEY_PREFIX[method]}-{self._next}"
        self._next += 1
        key, n = base, 1
        while key in self._used_keys:  # a key names one request over the task's life (spec §Task Update)
            n += 1
            key = f"{base}-{n}"
        self._used_keys.add(key)
        request: dict[str, Any] = {"method": method}
        if params is not None:
            request["params"] = params
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[key] = (request, future)
        self._set("input_required")
        try:
            return await future
        finally:
            self.pending.pop(key, None)
            if not self.pending and self.status == "input_required":
                self._set("working")

    async def ask_client(self, session: Any, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
        """Core tasks (2025-11-25): send the request to the client now, tagged with the task
        (``_meta`` related-task), the task ``input_required`` until it is answered."""
        params = dict(params or {})
        params["_meta"] = {**(params.get("_meta") or {}), RELATED_TASK: {"taskId": self.id}}
        self._asking += 1
        if self.status == "working":
            self._set("input_required")
        try:
            return await session.request(method, params, timeout=timeout)
        finally:
            self._asking -= 1
            if not self._asking and self.status == "input_required":
                self._set("working")

    def answer(self, responses: dict[str, Any]) -> None:
        """Deliver ``inputResponses``: keys not outstanding and malformed answers are ignored
        (spec §Task Update Requests; a malformed one stays asked). An answered key leaves
        ``inputRequests`` at once (the next tasks/get must not show it), and the task is
        ``working`` again when none is left."""
        answered = False
        for key, answer in responses.items():
            entry = self.pending.get(key)
            if entry is None or not isinstance(answer, dict):
                continue
            request, future = entry
            if not future.done() and ANSWER_SHAPES[request["method"]](answer):
                future.set_result(answer)
                del self.pending[key]
                answered = True
        if not answered or self.status != "input_required":
            return
        if not self.pending:
            self._set("working")
        elif self.store.shared is not None:  # still input_required, with fewer requests: record it
            _tasks_shared.mirror(self.store.shared, self)

    def cancel(self) -> None:
        if self.status in TERMINAL:
            return
        self._set("cancelled", CANCELLED)
        if self.runner is not None:
            self.runner.cancel()

    def finish(self, run: asyncio.Task[dict[str, Any]]) -> None:
        """The function's run ended: complete or fail the task (unless already cancelled)."""
        if self.status in TERMINAL:
            return
        if run.cancelled():
            self._set("cancelled")
            return
        exc = run.exception()
        if exc is None:
            result = run.result()
            if self.core:  # 2025-11-25: an isError result is a failed task; tasks/result returns it as is
                self.result = result
                self._set("failed" if isinstance(result, dict) and result.get("isError") else "completed")
                return
            self.result = {"resultType": "complete", **result} if isinstance(result, dict) else result
            self._set("completed")
        elif isinstance(exc, MCPError):  # a JSON-RPC error raised on purpose: "failed" (spec §Task Execution Errors)
            self.error = to_error_object(exc)
            self._set("failed", f"The tool failed with JSON-RPC error {exc.code}: {exc.message}")
        else:
            log.error("task %s: the tool's run raised", self.id, exc_info=exc)
            self.error = {"code": INTERNAL_ERROR, "message": f"Internal error: {type(exc).__name__}"}
            self._set("failed", "The tool's run ended with an internal error.")


class TaskStore:
    """The tasks of one Server, by id, in memory."""

    def __init__(
        self,
        ttl: float,
        poll_interval: float,
        max_tasks: int,
        max_per_requester: int | None = None,
        on_change: Callable[[Task], None] | None = None,
    ) -> None:
        check_task_options(ttl, poll_interval, max_tasks, max_per_requester)
        self.ttl = ttl
        self.poll_ms = max(1, round(poll_interval * 1000))
        self.max_tasks = max_tasks
        self.max_per_requester = max_per_requester if max_per_requester is not None else max(1, max_tasks // 10)
        self._tasks: dict[str, Task] = {}
        self.on_change = on_change  # told of every change: status notifications (the Server's Changes)
        self.shared: Any = None  # the state backend's task directory when processes share tasks

    def share(self, directory: Any, on_changed: Callable[[str], Awaitable[None]] | None = None) -> None:
        """Keep every task's record in ``directory`` too (``http_app(state=RedisState(...))``):
        the tasks of this process are then answered on every process (``_tasks_shared``), and the
        commands meant for them run here. ``on_changed`` is told the id of each task another
        process changed."""
        self.shared = directory
        directory.attach(self._command, on_changed)

    def __len__(self) -> int:
        return len(self._tasks)

    def changed(self, task: Task) -> None:
        if self.on_change is not None:
            self.on_change(task)
        if self.shared is not None:
            _tasks_shared.mirror(self.shared, task)

    async def begin(
        self, core: bool = False, owner: Any = None, ttl: float | None = None, requester: Any = None
    ) -> Task:
        """:meth:`create`, and with a shared store the slot reserved cluster-wide (the record is
        written before ``CreateTaskResult`` is sent); the same -32603 when it is refused."""
        task = self.create(core, owner, ttl, requester)
        if self.shared is not None:
            try:
                await _tasks_shared.reserve(self, task)
            except BaseException:
                self._tasks.pop(task.id, None)
                raise
        return task

    async def find(self, params: dict[str, Any], owner: Any = None, principal: str | None = None) -> TaskView:
        """:meth:`get`, or with a shared store the record of a task another process runs."""
        try:
            task = self.get(params, owner, principal)
        except InvalidParams:
            if self.shared is None:
                raise
            found = await _tasks_shared.fetch(self.shared, params["taskId"], owner, principal)
            if found is None:
                raise
            return found
        if (
            self.shared is not None
            and task.ended is not None
            and await _tasks_shared.fetch(self.shared, task.id, owner, principal) is None
        ):
            del self._tasks[task.id]  # ended, and evicted by another process's new task (the cap is shared)
            return self.get(params, owner, principal)  # -32602
        return task

    async def answer(self, task: TaskView, responses: dict[str, Any]) -> None:
        """``tasks/update``: to the task here, or to the process that runs it; returns once
        the effect is recorded (a tasks/get on any process then shows it)."""
        if isinstance(task, Task):
            await _tasks_shared.recorded(self._command({"op": "update", "id": task.id, "responses": responses}))
        else:
            await _tasks_shared.send(self.shared, task, {"op": "update", "responses": responses})

    async def cancel(self, task: TaskView) -> bool:
        """``tasks/cancel``: False when the task had already ended (nothing changed)."""
        if isinstance(task, Task):
            if task.status in TERMINAL:
                return False
            task.cancel()
            return True
        return await _tasks_shared.cancel(self.shared, task, CANCELLED)

    async def owned(self, owner: Any) -> list[TaskView]:
        """:meth:`owned_by`, over every process with a shared store (``tasks/list``)."""
        if self.shared is None:
            return list(self.owned_by(owner))
        # the records of every process; this process's own tasks as they are now (newer)
        return [self._tasks.get(t.id, t) for t in await _tasks_shared.owned_by(self.shared, owner)]

    async def wait_end(self, task: TaskView) -> TaskView:
        """The task once terminal (``tasks/result``), wherever it runs."""
        import asyncio

        if isinstance(task, Task):
            await task.done.wait()
            if task.writer is not None:  # shared: the end is recorded before it is announced
                await asyncio.shield(task.writer)
            return task
        return await _tasks_shared.wait_end(self.shared, task)

    def _command(self, message: dict[str, Any]) -> asyncio.Task[None] | None:
        """``tasks/update``/``tasks/cancel`` for a task run here (from another process too);
        returns the write that records the effect, if any (``task.writer``)."""
        task = self._tasks.get(message.get("id"))  # type: ignore[arg-type]
        if task is None:
            return None
        if message.get("op") == "cancel":
            task.cancel()
        elif message.get("op") == "update" and isinstance(message.get("responses"), dict):
            task.answer(message["responses"])
        return task.writer

    def create(self, core: bool = False, owner: Any = None, ttl: float | None = None, requester: Any = None) -> Task:
        """A new live task; at the cap the terminal task that ended first makes room (see the
        module docstring). -32603 "Too many tasks" when every kept task is live, or when
        ``requester`` already holds ``max_per_requester`` live tasks."""
        self.sweep()
        if requester is not None:
            # equal, not identical: a principal is a string made anew for each request
            live = sum(1 for t in self._tasks.values() if t.requester == requester and t.ended is None)
            if live >= self.max_per_requester:
                raise MCPError(
                    f"Too many tasks: this caller already has {live} unfinished tasks, the most this server "
                    f"allows one caller (max_tasks_per_requester); wait for or cancel some (tasks/cancel)",
                    INTERNAL_ERROR,
                )
        if len(self._tasks) >= self.max_tasks and not self._evict_terminal():
            raise MCPError(
                f"Too many tasks: this server keeps at most {self.max_tasks} and all are unfinished; "
                "cancel some (tasks/cancel), or retry later",
                INTERNAL_ERROR,
            )
        task = Task(self, core, owner, ttl, requester)
        self._tasks[task.id] = task  # durable before CreateTaskResult is sent (spec §Task Creation)
        return task

    def runs_here(self, task_id: str) -> bool:
        """Whether task ``task_id`` is one of this process's (a shared store's others are not)."""
        return task_id in self._tasks

    def owned_by(self, owner: Any) -> list[Task]:
        """The core tasks of one session, oldest first."""
        self.sweep()
        return [t for t in self._tasks.values() if t.core and self._same(t.owner, owner)]

    def get(self, params: dict[str, Any], owner: Any = None, principal: str | None = None) -> Task:
        """The task ``params.taskId`` names (of ``owner``'s, for core tasks; of ``principal``'s,
        for a task an authenticated caller created); -32602 when unknown or expired (spec
        §Protocol Errors), and the same for another caller's task: a denial tells nothing."""
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise InvalidParams('Invalid params: "taskId" must be a string (the id of a CreateTaskResult)')
        self.sweep()
        task = self._tasks.get(task_id)
        if task is not None and task.core and not self._same(task.owner, owner):
            task = None  # another session's task is none of this one's business
        if task is not None and not _tasks_shared.bound_to(task, principal):
            task = None  # another principal's (ext-tasks §Security Considerations: check every request)
        if task is None:
            raise InvalidParams(f"Failed to retrieve task: Task not found ({task_id!r} is unknown or has expired)")
        return task

    async def known_anywhere(self, ids: list[Any], principal: str | None = None) -> list[str]:
        """:meth:`known` (of ``principal``'s), and with a shared store the tasks other processes
        run (at most ``max_tasks`` ids are looked up there: no more can be kept)."""
        here = self.known(ids, principal)
        if self.shared is None:
            return here
        out: list[str] = []
        lookups = 0
        for i in ids:
            if not isinstance(i, str):
                continue
            if i in here:
                out.append(i)
            elif lookups < self.max_tasks:
                lookups += 1
                if await _tasks_shared.fetch(self.shared, i, None, principal) is not None:
                    out.append(i)
        return out

    def _same(self, owner: Any, other: Any) -> bool:
        """The same session: the same object; with a shared store, the same ``Mcp-Session-Id``
        (a session may be served by more than one object, one per process)."""
        if owner is other:
            return True
        if self.shared is None:
            return False
        key = _tasks_shared.owner_key(owner)
        return key is not None and key == _tasks_shared.owner_key(other)

    def known(self, ids: list[Any], principal: str | None = None) -> list[str]:
        """The ids among ``ids`` that name tasks kept here that ``principal`` may reach."""
        self.sweep()
        tasks = self._tasks
        return [i for i in ids if isinstance(i, str) and i in tasks and _tasks_shared.bound_to(tasks[i], principal)]

    def sweep(self) -> None:
        """Forget finished tasks whose TTL has passed."""
        now = time.monotonic()
        for task_id, task in list(self._tasks.items()):
            if task.ended is not None and now - task.created > task.ttl:
                del self._tasks[task_id]

    def _evict_terminal(self) -> bool:
        """Forget the terminal task that ended first; False when every task is live."""
        oldest: Task | None = None
        for task in self._tasks.values():
            if task.ended is not None and (oldest is None or task.ended < oldest.ended):  # type: ignore[operator]
                oldest = task
        if oldest is None:
            return False
        del self._tasks[oldest.id]
        return True

    def forget_owner(self, owner: Any) -> None:
        """A session ended: cancel and forget its core tasks (only it could reach them).
        ``owner``: the session, or the ``Mcp-Session-Id`` of a session shared across processes
        (ended on another process: its tasks running here go too)."""
        key = owner if isinstance(owner, str) else _tasks_shared.owner_key(owner)
        for task_id, task in list(self._tasks.items()):
            if task.core and (task.owner is owner or (key is not None and _tasks_shared.owner_key(task.owner) == key)):
                if task.runner is not None and not task.runner.done():
                    task.runner.cancel()
                del self._tasks[task_id]

    def close(self, loop: Any = None) -> None:
        """The server stops serving on event loop ``loop`` (on every one: None): cancel the runs
        still going there (a run is its loop's: another loop's go on)."""
        for task in list(self._tasks.values()):
            runner = task.runner
            if runner is not None and not runner.done() and (loop is None or runner.get_loop() is loop):
                runner.cancel()


async def call_tool(tool: Tool, arguments: Any, ctx: Context, rules: Rules) -> dict[str, Any]:
    """``tools/call`` of a task-supporting tool in an era with the extension (module docstring)."""
    import asyncio

    if not declares_tasks(ctx.client_capabilities):
        if tool.task_support == "required":
            raise missing_extension(f"the tool {tool.name!r}")
        return await tool.call(arguments, ctx, rules)
    loop = asyncio.get_running_loop()
    if tool.task_after == 0:  # a task from the start
        task = await ctx._begin_task()
        run = loop.create_task(tool.call(arguments, ctx, rules))
    else:
        escalate: asyncio.Future[Task] = loop.create_future()
        ctx._escalate = escalate
        run = loop.create_task(tool.call(arguments, ctx, rules))
        try:
            racing: set[asyncio.Future[Any]] = {run, escalate}
            done, _ = await asyncio.wait(racing, timeout=tool.task_after, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the request was cancelled
            if escalate.done():  # ... just as it became a task: the task still ends (and expires)
                attach(escalate.result(), run)
            else:
                run.cancel()
            raise
        ctx._escalate = None
        if escalate.done():  # the function called ctx.start_task()
            task = escalate.result()
        elif run in done:
            return run.result()  # a direct answer, or InputRequired (an MRTR round) raised again
        else:  # task_after elapsed
            try:
                task = await ctx._begin_task()
            except BaseException:
                run.cancel()
                raise
    attach(task, run)
    return task.created_result()


def attach(task: Task, run: asyncio.Task[dict[str, Any]]) -> None:
    task.runner = run
    run.add_done_callback(task.finish)


# ---------------------------------------------------------------------- tasks/* handlers
def _store(ctx: Context, method: str) -> TaskStore:
    assert ctx.rules is not None
    if TASKS_EXTENSION not in ctx.server.capabilities(ctx.rules).get("extensions", {}):
        raise MethodNotFound(
            f"Method not found: {method!r} (this server has no tools that run as tasks, so it "
            f"does not announce the {TASKS_EXTENSION} extension)"
        )
    if not declares_tasks(ctx.client_capabilities):
        raise missing_extension(method)  # spec §Protocol Errors: MUST for non-declaring clients
    return ctx.server.tasks


async def tasks_get(server: Any, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return (await _store(ctx, "tasks/get").find(params, None, ctx.principal)).detailed()


async def tasks_update(server: Any, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    store = _store(ctx, "tasks/update")
    task = await store.find(params, None, ctx.principal)
    responses = params.get("inputResponses")
    if not isinstance(responses, dict):
        raise InvalidParams('Invalid params: "inputResponses" must be an object of answers by inputRequests key')
    await store.answer(task, responses)
    return {}  # an empty ack; the effect shows in the next tasks/get (spec §Task Update Requests)


async def tasks_cancel(server: Any, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    store = _store(ctx, "tasks/cancel")
    await store.cancel(await store.find(params, None, ctx.principal))
    return {}  # the same empty ack for a task already finished (idempotent)
