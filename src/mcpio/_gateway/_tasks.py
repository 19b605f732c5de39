"""Tasks through a proxy (``Server.proxy``): which of the upstream's tools the proxy serves as
tasks, and when the proxy's own call becomes one. The proxy's task is its own (its id, its
store); the upstream's task, if any, is followed by the proxy's upstream ``Client``.

What a proxied tool's task support is (:func:`task_options`):

* the upstream lists ``execution.taskSupport`` (2025-11-25): that, as listed. The proxy's task
  is made as mcpio's Server makes one for its own tools: when a 2025-11-25 client asks
  (``params.task``), and at once for a 2026-07-28 client declaring the tasks extension; the
  upstream call is then a task too (``Client.call_tool(task=True)``: an ``"optional"`` tool as
  a ``"required"`` one), whose states the proxy's task shows.
* a 2026-07-28 upstream announcing the tasks extension (``extensions[TASKS_EXTENSION]``), which
  the proxy's upstream client declares (``Client(tasks=True)``, the default): its ``Tool`` has
  no task support to list (the server decides per call), so each of its tools is served
  ``"optional"``. A 2025-11-25 client of the proxy may ask for a task (the proxy's task then
  follows the upstream call, a task there or not); for a 2026-07-28 client declaring the
  extension the proxy decides as the upstream does: its call becomes a task when, and as soon
  as, the upstream answers the call with a task (``task_after=None`` and
  ``ctx.start_task()``), and is answered directly when the upstream answers directly.
* anything else: ``"forbidden"`` (a 2026-07-28 upstream without the extension never makes a
  task, so the proxy makes none either).

While the proxy's call is a task, each status of the upstream's task with a ``statusMessage``
becomes the proxy task's (:func:`follower`); cancelling the proxy's task cancels the upstream
call, and the upstream client then cancels the upstream's task (``tasks/cancel``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._server._tasks import declares_tasks
from .._server._tasks_shared import TERMINAL
from .._server._tools import TASK_SUPPORT
from .._versions import TASKS_EXTENSION
from ._loops import at_home
from ._rounds import Flight

if TYPE_CHECKING:
    from .._client._client import Client
    from .._server._context import Context


def task_options(client: Client, t: dict[str, Any]) -> dict[str, Any]:
    """The ``Tool`` options (``task_support``, ``task_after``) of the upstream's tool ``t``."""
    execution = t.get("execution")
    listed = execution.get("taskSupport") if isinstance(execution, dict) else None
    if listed in TASK_SUPPORT:
        return {"task_support": listed}
    extensions = client.server_capabilities.get("extensions")
    decides = isinstance(extensions, dict) and TASKS_EXTENSION in extensions  # a 2026-07-28 upstream
    if decides and client.negotiated_era == "modern" and client.tasks:
        return {"task_support": "optional", "task_after": None}  # the upstream decides, per call
    return {"task_support": "forbidden"}


def follower(ctx: Context, caller: Callable[[], Any]) -> Callable[[dict[str, Any]], Any] | None:
    """The ``on_task_status`` of the upstream call made for ``ctx``: None when the proxy's call
    is not a task and cannot become one. ``caller()``: the caller of the upstream call running
    now (a :class:`Flight` when the client answers in rounds: the Context of its latest round is
    the one that can become a task)."""
    rules = ctx.rules
    if ctx.task_id is None and not (
        rules is not None and rules.tasks_extension and declares_tasks(ctx.client_capabilities)
    ):
        return None

    async def follow(status: dict[str, Any]) -> None:
        now = ctx
        flight = caller()
        if ctx.task_id is None and isinstance(flight, Flight) and flight.ctx is not None:
            now = flight.ctx
        if status.get("status") in TERMINAL:
            return  # the call's own end ends the proxy's task (with the upstream's result)
        await at_home(now, mirrored(now, status.get("statusMessage")))  # on the loop serving the task

    return follow


async def mirrored(ctx: Context, message: Any) -> None:
    """The proxy's task of ``ctx`` follows a state of the upstream's task (``follower``)."""
    if ctx.task_id is None:
        await ctx.start_task()  # the upstream made a task of the call: so does the proxy
    if isinstance(message, str):
        ctx.set_task_status(message)
