"""A server's lifespan held once for every connection it serves at the same time.

``Server.running()`` is entered by each connection ``Server.serve`` serves (two in-memory
clients of one server are two), by the HTTP app's lifespan and by a parent for its mounted
children. The first to enter starts the lifespan, the last to leave ends it: a client that
leaves early never closes what the others still use (a proxy's upstream connections).

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


class Held:
    """One async context manager (made by ``enter``) held while anyone uses it."""

    __slots__ = ("enter", "entered", "holder", "release", "users")

    def __init__(self, enter: Callable[[], contextlib.AbstractAsyncContextManager[Any]]) -> None:
        self.enter = enter
        self.users = 0
        self.holder: asyncio.Task[None] | None = None  # holds it open; None when nobody does
        self.entered: asyncio.Future[Any] | None = None  # what it yielded, or why entering failed
        self.release: asyncio.Event | None = None  # set when the last user leaves

    @contextlib.asynccontextmanager
    async def use(self) -> AsyncIterator[Any]:
        """Hold it for the block's duration; yields what it yielded. Entering's error is every
        waiting user's; exiting's is the last user's."""
        import asyncio

        if self.holder is not None and self.holder.get_loop() is not asyncio.get_running_loop():
            self.users, self.holder = 0, None  # a loop that ended without closing it (not ours to close)
        while self.users == 0 and self.holder is not None:  # the last one out still closes it
            await asyncio.wait({self.holder})
        if self.users == 0:
            self.entered = asyncio.get_running_loop().create_future()
            self.release = asyncio.Event()
            self.holder = asyncio.create_task(self._hold(self.entered, self.release))
        holder, entered, release = self.holder, self.entered, self.release
        assert holder is not None and entered is not None and release is not None
        self.users += 1
        awaiting = True
        try:
            # shield: a user cancelled while it starts must not cancel it for the others
            yield await asyncio.shield(entered)
        except GeneratorExit:  # closed unawaited (its loop is gone): nothing more can be awaited
            awaiting = False
            raise
        finally:
            self.users -= 1
            if self.users == 0:
                release.set()
                if awaiting:
                    await holder

    async def _hold(self, entered: asyncio.Future[Any], release: asyncio.Event) -> None:
        import asyncio

        try:
            try:
                manager = self.enter()
                value = await manager.__aenter__()
            except asyncio.CancelledError:
                entered.cancel()
                raise
            except BaseException as exc:
                entered.set_exception(exc)
                return
            entered.set_result(value)
            try:
                await release.wait()
            except BaseException as exc:
                if not await manager.__aexit__(type(exc), exc, exc.__traceback__):
                    raise
            else:
                await manager.__aexit__(None, None, None)
        finally:
            self.holder = None
