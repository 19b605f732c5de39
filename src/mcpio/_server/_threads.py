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
        self._jobs.put((loop, fut, contextvars.copy_context(), fn, kwargs))
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
            loop, fut, ctx, fn, kwargs = job
            try:
                result = ctx.run(fn, **kwargs)
            except Exception as exc:  # handed to the awaiting task, which decides
                loop.call_soon_threadsafe(_settle, fut, None, exc)
            except BaseException as exc:  # SystemExit & co. end a thread, not the server
                error = RuntimeError(f"the handler raised {type(exc).__name__}: {exc}")
                loop.call_soon_threadsafe(_settle, fut, None, error)
            else:
                loop.call_soon_threadsafe(_settle, fut, result, None)
            del job, loop, fut, ctx, fn, kwargs


def _settle(fut: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    if fut.done():  # the request was cancelled meanwhile
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)


WORKERS = Workers()
