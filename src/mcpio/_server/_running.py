"""A server's lifespan held once for every connection it serves at the same time.

``Server.running()`` is entered by each connection ``Server.serve`` serves (two in-memory
clients of one server are two), by the HTTP app's lifespan and by a parent for its mounted
children. The first to enter starts the lifespan, the last to leave ends it: a client that
leaves early never closes what the others still use (a proxy's upstream connections). It is
held once per event loop: what it holds (connections, tasks) belongs to the loop that made it.

The lifespan runs in a task of its own, so it is entered and exited in the same task whoever
leaves last (a lifespan that opens a task group or a timeout needs that). asyncio is imported
by the caller's first use, never by ``import mcpio``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio


def drop_closed_loops(by_loop: dict[Any, Any]) -> None:
    """Forget what ``by_loop`` keeps for event loops that closed without giving it up (a list
    copy first: another loop's thread may change it)."""
    for gone in [loop for loop in list(by_loop) if loop.is_closed()]:
        by_loop.pop(gone, None)


class Held:
    """One async context manager (made by ``enter``) held while anyone uses it."""

    __slots__ = ("enter", "holdings")

    def __init__(self, enter: Callable[[], contextlib.AbstractAsyncContextManager[Any]]) -> None:
        self.enter = enter
        # event loop -> the latest time it was entered there (what it holds belongs to that loop)
        self.holdings: dict[Any, _Holding] = {}

    @contextlib.asynccontextmanager
    async def use(self) -> AsyncIterator[Any]:
        """Hold it for the block's duration; yields what it yielded. Entering's error is every
        waiting user's; exiting's is the last user's."""
        import asyncio

        loop = asyncio.get_running_loop()
        while True:
            holding = self.holdings.get(loop)
            # Entered anew when it is not held on this loop: never entered, failed to enter, exited.
            if holding is None or holding.task.done():
                drop_closed_loops(self.holdings)  # ended without exiting it: not ours to close
                holding = self.holdings[loop] = _Holding(self, loop)
                break
            if not holding.release.is_set():
                break
            await asyncio.wait({holding.task})  # the last one out still exits it: enter after that
        holding.users += 1
        awaiting = True
        try:
            # shield: a user cancelled while it starts must not cancel it for the others
            yield await asyncio.shield(holding.entered)
        except GeneratorExit:  # closed unawaited (its loop is gone): nothing more can be awaited
            awaiting = False
            raise
        finally:
            holding.users -= 1
            if holding.users == 0:
                holding.release.set()
                starting = not holding.entered.done()
                if starting:  # the last user was cancelled while it started: stop starting it
                    holding.task.cancel()
                if awaiting:
                    try:
                        await holding.task
                    except asyncio.CancelledError:
                        if not starting:  # else the cancellation just made (this user's own is in flight)
                            raise


class _Holding:
    """One time it is held: entered by ``task`` (what it yielded, or why entering failed, is
    ``entered``), exited when ``release`` is set (its last user left)."""

    __slots__ = ("entered", "release", "task", "users")

    def __init__(self, held: Held, loop: asyncio.AbstractEventLoop) -> None:
        import asyncio

        self.users = 0
        self.entered: asyncio.Future[Any] = loop.create_future()
        self.release = asyncio.Event()
        self.task: asyncio.Task[None] = loop.create_task(self._hold(held.enter))

    async def _hold(self, enter: Callable[[], contextlib.AbstractAsyncContextManager[Any]]) -> None:
        import asyncio

        try:
            manager = enter()
            value = await manager.__aenter__()
        except asyncio.CancelledError:
            self.entered.cancel()
            raise
        except BaseException as exc:
            self.entered.set_exception(exc)
            return
        self.entered.set_result(value)
        try:
            await self.release.wait()
        except BaseException as exc:
            if not await manager.__aexit__(type(exc), exc, exc.__traceback__):
                raise
        else:
            await manager.__aexit__(None, None, None)
