"""A server's lifespan held once for every connection it serves at the same time, and its
requests held until what it serves from elsewhere has first started.

``Server.running()`` is entered by each connection ``Server.serve`` serves (two in-memory
clients of one server are two), by the HTTP app's lifespan and by a parent for its mounted
children. The first to enter starts the lifespan, the last to leave ends it: a client that
leaves early never closes what the others still use (a proxy's upstream connections). It is
held once per event loop: what it holds (connections, tasks) belongs to the loop that made it.

The lifespan runs in a task of its own, so it is entered and exited in the same task whoever
leaves last (a lifespan that opens a task group or a timeout needs that). asyncio is imported
by the caller's first use, never by ``import mcpio``.

The first start (:class:`Starting`, ``Registry.first_start``: a gateway's upstream, begun by its
proxy's lifespan): until it has ended, a request other than :data:`AT_ONCE` waits for it
(:class:`HeldUntilStarted`), in the server it belongs to and in every server that one is mounted
in, so the first ``tools/list`` lists what the upstream serves (also to a host that ignores
``list_changed``). It holds every session of those servers, those open before it was mounted
too, from the moment it is made or mounted (``Registry.held``). :data:`AT_ONCE` requests are
answered meanwhile, as by a plain server: a gateway served on stdio answers ``initialize``
before asyncio loads (``_stdio.fast_start``).

A server mounted in one whose lifespan is held (:class:`LateMounts`: mounted while serving) has
its own lifespan entered at once and left with the parent's: what it opens (a proxy's upstream)
never outlives the parent's serving. Until that lifespan has been entered it is a first start
(``Registry.late``): no request reaches its items before, as none reaches a child's at the
parent's start.
"""

from __future__ import annotations

import _thread  # loaded with the interpreter (importlib's locks): ``threading`` is not, at registration
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from .. import _log

if TYPE_CHECKING:
    import asyncio
    from typing import Protocol

    from .._protocol._events import RequestReceived
    from .._session import RequestHandler, Session
    from ._registry import Registry
    from ._server import Server

    class Starting(Protocol):
        """Something a server serves from elsewhere that starts once, as serving begins
        (``Registry.first_start``: a gateway's ``Upstream``)."""

        @property
        def starting(self) -> bool:
            """Whether its first start has yet to end (or to begin)."""

        async def start(self) -> None:
            """Return when its first start has ended (begun now if it has not begun)."""


log = _log.logger("mcpio.server", globals())

#: The requests answered without waiting for a first start: nothing of what starts is in their
#: answers (the handshake, ``ping``, the log level).
AT_ONCE = frozenset({"initialize", "server/discover", "ping", "logging/setLevel"})


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


class LateMounts:
    """The lifespans of the servers mounted in a server while its lifespan is held (``Server.mount``
    of a server already serving). On each event loop holding the parent's lifespan, a child's
    ``running()`` is entered at once, in a task of its own, and left before the parent's lifespan
    ends, last mounted first (the order of the mounts entered with it: ``Server._lifespan_entered``),
    each one left even when that end is cancelled. A child that fails to start is logged; the parent
    serves on. Until a child's lifespan has been entered, it is a first start of the parent's
    (``Registry.late``: :class:`Starting`): requests wait for it, as they wait at the parent's start
    for the children mounted then. A child whose lifespan fails to start is unmounted (``failed``):
    what it serves needs that lifespan, as a child mounted before serving fails the parent's start."""

    __slots__ = ("by_loop", "lock")

    def __init__(self) -> None:
        # event loop -> each child mounted there while the parent is held
        self.by_loop: dict[Any, list[_Late]] = {}
        self.lock = _thread.RLock()  # a mount (Server.mount) and the parent's start (enter): one at a time

    @property
    def starting(self) -> bool:
        """Whether a child's lifespan has yet to be entered (on an event loop still open)."""
        return any(
            not late.entered.is_set()
            for loop, lates in list(self.by_loop.items())
            if not loop.is_closed()
            for late in lates
        )

    async def start(self) -> None:
        """Return when the lifespans of the children mounted on this event loop have been entered
        (or failed to be)."""
        import asyncio

        for late in list(self.by_loop.get(asyncio.get_running_loop(), ())):
            await late.entered.wait()

    async def enter(self, stack: contextlib.AsyncExitStack, mounts: Callable[[], Iterable[Any]]) -> None:
        """On ``stack``, as the parent's lifespan is entered on this loop: each child's lifespan
        that ``mounts()`` lists, in mount order, then :meth:`_held` for those mounted from then on.
        The last look at ``mounts()`` and the registration of this loop's late mounts are one step
        under :attr:`lock`, which ``Server.mount`` holds from its mount to :meth:`add`: a child
        mounted meanwhile (from another thread) is entered here or held late, never neither."""
        import asyncio

        loop = asyncio.get_running_loop()
        done: list[Any] = []
        while True:
            with self.lock:
                pending = [mount for mount in mounts() if all(mount is not d for d in done)]
                if not pending:
                    drop_closed_loops(self.by_loop)
                    lates: list[_Late] = []
                    self.by_loop[loop] = lates
                    break
            for mount in pending:
                await stack.enter_async_context(mount.child.running())
                done.append(mount)
        await stack.enter_async_context(self._held(loop, lates))  # no await before its try: none lost

    @contextlib.asynccontextmanager
    async def _held(self, loop: asyncio.AbstractEventLoop, lates: list[_Late]) -> AsyncIterator[None]:
        """The parent's lifespan is held on ``loop`` for the block: children mounted meanwhile
        (``lates``) are held with it, and left (each waited for) when the block ends."""
        import asyncio

        try:
            yield
        finally:
            self.by_loop.pop(loop, None)  # mounted from now on: entered when the parent is held again
            for late in lates:
                if late.task is None:  # its hold, scheduled from another thread, has yet to run: it never will
                    late.entered.set()
            tasks = [late.task for late in reversed(lates) if late.task is not None]
            left = 0
            try:
                for task in tasks:  # cancelled: its lifespan is left (or, still starting, stopped)
                    task.cancel()
                    await asyncio.wait({task})
                    left += 1
            except asyncio.CancelledError:  # left all the same, together: none outlives the parent
                for task in tasks[left + 1 :]:
                    task.cancel()
                await asyncio.wait(tasks)
                raise

    def add(self, child: Server, failed: Callable[[], None]) -> None:
        """Hold ``child``'s lifespan on every loop the parent's is held on (from any thread);
        ``failed()`` (on that loop) when it fails to start there, before requests are released."""
        if not self.by_loop:  # not serving (asyncio may not be loaded yet: a gateway's fast start)
            return
        import asyncio

        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        for loop, lates in list(self.by_loop.items()):
            if loop.is_closed():
                continue
            late = _Late(child, failed)
            lates.append(late)  # a first start from now on (starting), whichever thread mounts it
            if here is not None and loop is here:
                self._hold(here, lates, late)
            else:
                loop.call_soon_threadsafe(self._hold, loop, lates, late)

    def _hold(self, loop: asyncio.AbstractEventLoop, lates: list[_Late], late: _Late) -> None:
        if self.by_loop.get(loop) is lates:  # else the parent's lifespan has ended meanwhile
            late.task = loop.create_task(_holding(late))
            late.task.add_done_callback(lambda _: late.entered.set())  # also when cancelled before it ran
        else:
            late.entered.set()  # never will be


class _Late:
    """One child mounted while its parent serves, on one event loop: ``task`` holds its lifespan
    (:func:`_holding`), ``entered`` is set once that lifespan has been entered, failed, or never will be;
    ``failed()`` unmounts it."""

    __slots__ = ("child", "entered", "failed", "task")

    def __init__(self, child: Server, failed: Callable[[], None]) -> None:
        import asyncio

        self.child = child
        self.failed = failed
        self.entered = asyncio.Event()
        self.task: asyncio.Task[None] | None = None  # made on its loop (LateMounts._hold)


async def _holding(late: _Late) -> None:
    """Hold ``late.child``'s lifespan until cancelled (``Held.use`` leaves it, or stops its start);
    unmount it when it fails to start (its ``entered`` is set when this task ends: after that)."""
    import asyncio

    child, entered = late.child, late.entered
    try:
        async with child.running():
            entered.set()
            await asyncio.Event().wait()
    except Exception as exc:  # its lifespan's failure: the parent serves on (LateMounts)
        started = entered.is_set()
        log.error(
            "server %r, mounted while serving, failed to start or stop: %s: %s%s",
            child.name,
            type(exc).__name__,
            exc,
            "" if started else "; it is unmounted",
        )
        if not started:
            late.failed()


async def first_started(registry: Registry) -> None:
    """Return when every first start of ``registry`` and of the registries mounted in it has
    ended (``Registry.first_starts``; each begun now if serving has not begun it)."""
    starting = registry.first_starts()
    if starting:
        import asyncio

        await asyncio.gather(*(each.start() for each in starting))  # a failure is logged by its start


class HeldUntilStarted:
    """The ``on_request`` of every session a server makes (module docstring): ``handle``, after
    the first starts under way (``Registry.held``: set when one begins here or is mounted here,
    whichever session is open) for requests other than :data:`AT_ONCE`. When nothing is starting a
    request costs one test of ``Registry.held`` and goes to ``handle`` as it is."""

    __slots__ = ("handle", "registry")

    def __init__(self, registry: Registry, handle: RequestHandler) -> None:
        self.registry = registry
        self.handle = handle

    def __call__(self, session: Session, ev: RequestReceived) -> Awaitable[Any]:
        if not self.registry.held or ev.method in AT_ONCE:
            return self.handle(session, ev)  # the handler's own coroutine: no layer of ours per request
        return self._after_start(session, ev)

    async def _after_start(self, session: Session, ev: RequestReceived) -> Any:
        await first_started(self.registry)
        self.registry.release()
        return await self.handle(session, ev)
