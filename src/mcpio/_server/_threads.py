"""Worker threads for sync handlers: they never block the event loop, and a handler that
blocks forever never keeps the process from exiting.

``asyncio``'s default executor uses non-daemon threads that Python joins at exit, so a sync
tool stuck in ``time.sleep`` or a hung socket would delay a server's exit on stdin EOF or
SIGTERM until it returned. These workers are daemon threads: at exit they are abandoned.
Each call runs in a copy of the caller's ``contextvars`` context (as ``asyncio.to_thread``).
A call whose request was cancelled still runs to its end in its thread (Python cannot stop a
thread); its result is dropped.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

MAX_WORKERS = 32


class Workers:
    """A growing pool of at most ``max_workers`` daemon threads fed by one queue."""

    def __init__(self, max_workers: int = MAX_WORKERS) -> None:
        self._jobs: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._max = max_workers
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    async def run(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._jobs.put((_inbox(loop), fut, contextvars.copy_context(), fn, kwargs))
        with self._lock:
            if self._idle == 0 and self._threads < self._max:
                self._threads += 1
                threading.Thread(target=self._work, name=f"mcpio-worker-{self._threads}", daemon=True).start()
        return await fut

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
            inbox, fut, ctx, fn, kwargs = job
            try:
                inbox.post(fut, ctx.run(fn, **kwargs), None)
            except Exception as exc:  # handed to the awaiting task, which decides
                inbox.post(fut, None, exc)
            except BaseException as exc:  # SystemExit & co. end a thread, not the server
                inbox.post(fut, None, RuntimeError(f"the handler raised {type(exc).__name__}: {exc}"))
            del job, inbox, fut, ctx, fn, kwargs


class _Inbox:
    """Finished calls for one event loop, handed over in batches: the first result of a batch
    schedules one ``drain`` (one ``call_soon_threadsafe``, one loop wake-up); results that
    arrive before it runs ride along. Under load that is one wake-up for many calls instead of
    one per call."""

    __slots__ = ("loop", "done", "lock", "scheduled", "__weakref__")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.done: list[tuple[asyncio.Future, Any, BaseException | None]] = []
        self.lock = threading.Lock()
        self.scheduled = False

    def post(self, fut: asyncio.Future, result: Any, exc: BaseException | None) -> None:  # a worker thread
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


def _settle(fut: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    if fut.done():  # the request was cancelled meanwhile
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)


WORKERS = Workers()
