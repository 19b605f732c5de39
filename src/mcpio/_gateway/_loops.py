"""A proxy served on several event loops at once (threads, each with a loop and clients of its
own): its upstream connection is one loop's, the owner's (``Upstream.claim``), since a client,
its streams and its tasks belong to the loop that made them.

A request another loop serves is run on the owner's loop (:func:`handed`): the upstream call,
its flight of 2026-07-28 rounds, its cancellation. What comes back during it for the caller
(progress, log messages, what the upstream asks, the states of its task) is sent from the
caller's own loop (:func:`at_home`): a session is written to only by the loop that runs it.
Cancelling the request cancels its run on the owner's loop, and with it the upstream request.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import INTERNAL_ERROR
from .._server._changes import running_loop as running_loop  # the one rule: the caller's loop, or None

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from .._server._context import Context
    from ._proxy import Upstream

T = TypeVar("T")


async def handed(upstream: Upstream, owner: asyncio.AbstractEventLoop, ctx: Context | None, call: Any) -> Any:
    """``upstream.forward(ctx, call)`` run on ``owner``, the loop owning its connection, for a
    caller on another loop; an ``UpstreamError`` when that loop stops serving it first."""
    import asyncio

    from ._proxy import UpstreamError

    def gone() -> UpstreamError:
        return UpstreamError(
            f"upstream {upstream.label!r} went away during the request (the event loop holding its "
            "connection stopped serving it); it is started again on the next request",
            INTERNAL_ERROR,
        )

    async def there() -> Any:
        if upstream.owner is not asyncio.get_running_loop():  # it stopped serving it meanwhile
            raise _Moved
        return await upstream.forward(ctx, call)

    run = there()
    try:
        future = asyncio.run_coroutine_threadsafe(run, owner)
    except RuntimeError:  # the owner's loop is closed
        run.close()
        raise gone() from None
    try:
        return await asyncio.wrap_future(future)  # cancelling this cancels the run there
    except _Moved:  # not begun there: where it goes now (this loop, when none holds it)
        return await upstream.forward(ctx, call)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        raise gone() from None  # the owner's loop cancelled it as it ended


class _Moved(Exception):
    """A request handed to a loop that no longer holds the connection when it comes to run it."""


def at_home(ctx: Context, sending: Coroutine[Any, Any, T]) -> Awaitable[T]:
    """``sending`` (it writes to ``ctx``'s session), run on the loop that runs that session."""
    import asyncio

    home = ctx.session.loop
    if home is None or home is running_loop():
        return sending
    try:
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(sending, home))
    except RuntimeError:  # its loop is closed: the caller is gone
        sending.close()
        raise
