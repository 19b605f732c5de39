"""Worker threads for sync handlers: they never block the event loop, and a handler that
blocks forever never keeps the process from exiting.

``asyncio``'s default executor uses non-daemon threads that Python joins at exit, so a sync
tool stuck in ``time.sleep`` or a hung socket would delay a server's exit on stdin EOF or
SIGTERM until it returned. These workers are daemon threads: at exit they are abandoned.
Each call runs in a copy of the caller's ``contextvars`` context (as ``asyncio.to_thread``).

Three rules keep one client from starving the others:

* **A cancelled job never starts.** A call whose request was cancelled (``notifications/
  cancelled``, its session deleted or ended) before a worker took it is dropped when its turn
  comes. A call already running runs to its end in its thread (Python cannot stop a thread);
  its result is dropped.
* **Fair share.** Jobs queue per *owner* — the session (transport) whose request they serve —
  and workers take them round-robin across owners. One owner has at most ``share`` jobs
  running at once: ``max(1, max_workers // 2)`` by default (16 of the 32 workers; set the
  pool's size with ``MCPIO_WORKERS``), so a
  session that floods the pool leaves at least half of it to everyone else. A stateless
  (2026-07-28) HTTP request is its own owner: its share is a bound per request, and the
  round-robin keeps a stream of them from overtaking a session's queue.
* The number of queued jobs is bounded upstream, by each session's ``max_in_flight``
  (a batch counts item by item).
"""

from __future__ import annotations

import contextvars
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from time import perf_counter
from typing import TYPE_CHECKING, Any

from .._transports._base import serving

if TYPE_CHECKING:
    import asyncio

#: In a worker thread, the event loop that handed it the call it runs (see :func:`loop_here`).
handing_loop: contextvars.ContextVar[Any] = contextvars.ContextVar("mcpio_handing_loop", default=None)


def loop_here() -> Any:
    """The event loop the calling code belongs to: the running one, or in a worker thread the one
    that handed it its call (None elsewhere)."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return handing_loop.get()


def _max_workers() -> int:
    """``MCPIO_WORKERS`` (default 32): the most worker threads of the process."""
    raw = os.environ.get("MCPIO_WORKERS", "")
    return int(raw) if raw.isascii() and raw.isdigit() and int(raw) > 0 else 32


MAX_WORKERS = _max_workers()


class Workers:
    """A growing pool of at most ``max_workers`` daemon threads fed by per-owner queues served
    round-robin, each owner running at most ``share`` jobs at once (see the module docstring)."""

    def __init__(self, max_workers: int = MAX_WORKERS, share: int | None = None) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, not {max_workers!r}")
        self._max = max_workers
        self.share = share if share is not None else max(1, max_workers // 2)
        self._cond = threading.Condition(threading.Lock())
        self._queues: dict[Any, deque[tuple[Any, ...]]] = {}  # owner -> its jobs, oldest first
        self._ready: deque[Any] = deque()  # owners with queued jobs, in round-robin order
        self._running: dict[Any, int] = {}  # owner -> jobs running now
        self._threads = 0
        self._idle = 0
        self.started = 0  # jobs handed to a thread (for tests and stats)
        self.skipped = 0  # cancelled jobs dropped unstarted

    def stats(self) -> dict[str, int]:
        """Counts for monitoring and tests: threads, queued and running jobs, started and skipped."""
        with self._cond:
            return {
                "threads": self._threads,
                "idle": self._idle,  # waiting for work, not yet woken
                "queued": sum(len(q) for q in self._queues.values()),
                "running": sum(self._running.values()),
                "started": self.started,
                "skipped": self.skipped,
                "share": self.share,
            }

    async def run(self, fn: Callable[..., Any], kwargs: dict[str, Any], probe: Any = None) -> Any:
        """Run ``fn(**kwargs)`` in a worker thread; ``probe.observe(seconds)`` gets the wall time
        of a call that returned (adaptive inlining, :mod:`._inline`)."""
        import asyncio

        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        current = serving.get()
        owner = current[0] if current is not None else None
        context = contextvars.copy_context()
        context.run(handing_loop.set, loop)
        job = (owner, _inbox(loop), fut, context, fn, kwargs, probe)
        with self._cond:
            q = self._queues.get(owner)
            if q is None:
                q = self._queues[owner] = deque()
                self._ready.append(owner)
            q.append(job)
            if self._idle:
                self._wake()
            elif self._threads < self._max:
                self._threads += 1
                threading.Thread(target=self._work, name=f"mcpio-worker-{self._threads}", daemon=True).start()
        return await fut

    def _wake(self) -> None:
        """Wake one idle thread (the lock is held). It leaves the idle count here, not when it
        runs again: two jobs queued before a woken thread got the lock back must not both count
        on it — the second would wait, unserved, behind the first (a blocking one: forever)."""
        self._idle -= 1
        self._cond.notify()

    def _take(self) -> tuple[Any, ...] | None:
        """The next job, round-robin over owners under their share (the lock is held)."""
        for _ in range(len(self._ready)):
            owner = self._ready.popleft()
            q = self._queues[owner]
            while q and q[0][2].cancelled():  # cancelled before it started: never run it
                q.popleft()
                self.skipped += 1
            if not q:
                del self._queues[owner]
                continue
            if self._running.get(owner, 0) >= self.share:
                self._ready.append(owner)
                continue
            job = q.popleft()
            if q:
                self._ready.append(owner)
            else:
                del self._queues[owner]
            self._running[owner] = self._running.get(owner, 0) + 1
            self.started += 1
            return job
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                job = self._take()
                while job is None:
                    self._idle += 1  # the thread that wakes us takes it off (_wake)
                    self._cond.wait()
                    job = self._take()
            owner, inbox, fut, ctx, fn, kwargs, probe = job
            outcome: tuple[Any, BaseException | None]
            try:
                if probe is None:
                    outcome = (ctx.run(fn, **kwargs), None)
                else:
                    t0 = perf_counter()
                    outcome = (ctx.run(fn, **kwargs), None)
                    probe.observe(perf_counter() - t0)
            except Exception as exc:  # handed to the awaiting task, which decides
                outcome = (None, exc)
            except BaseException as exc:  # SystemExit & co. end a thread, not the server
                outcome = (None, RuntimeError(f"the handler raised {type(exc).__name__}: {exc}"))
            # The slot is given back before the outcome is: whoever learns of the call's end (its
            # client, over the wire) finds it no longer running (stats(), the owner's share).
            with self._cond:
                left = self._running[owner] - 1
                if left:
                    self._running[owner] = left
                else:
                    del self._running[owner]
                if owner in self._queues and self._idle:  # its queue may have waited for this slot
                    self._wake()
            inbox.post(fut, *outcome)
            del job, inbox, fut, ctx, fn, kwargs, owner, probe, outcome


class _Inbox:
    """Finished calls for one event loop, handed over in batches: the first result of a batch
    schedules one ``drain`` (one ``call_soon_threadsafe``, one loop wake-up); results that
    arrive before it runs ride along. Under load that is one wake-up for many calls instead of
    one per call."""

    __slots__ = ("__weakref__", "done", "lock", "loop", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.done: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        self.lock = threading.Lock()
        self.scheduled = False

    def post(self, fut: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:  # a worker thread
        with self.lock:
            self.done.append((fut, result, exc))
            if self.scheduled:
                return
            self.scheduled = True
        try:
            self.loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # the loop is closed: nobody waits for these any more
            pass

    def drain(self) -> None:  # the event loop
        with self.lock:
            done, self.done = self.done, []
            self.scheduled = False
        for fut, result, exc in done:
            _settle(fut, result, exc)


_inboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Inbox] = weakref.WeakKeyDictionary()


def _inbox(loop: asyncio.AbstractEventLoop) -> _Inbox:
    inbox = _inboxes.get(loop)
    if inbox is None:
        inbox = _inboxes[loop] = _Inbox(loop)
    return inbox


def _settle(fut: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if fut.done():  # the request was cancelled meanwhile
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)


WORKERS = Workers()
