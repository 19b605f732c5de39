"""Async functions that hold the event loop: noticed, and logged naming the function.

An ``async def`` tool (or resource, prompt) runs on the event loop from one ``await`` to the
next; a blocking call inside it (``time.sleep``, ``requests.get``, a long computation) stalls
every other request of the process meanwhile. :class:`Watched` awaits the function's coroutine
step by step, timing each step; one that held the loop over :data:`BLOCKING` is logged as a
WARNING naming the function, the time and what to do, once per function — the rule the
watchdog of sync tools run inline follows (:mod:`._inline`: the tool named, logged once).
The cost is two clock reads per step (an await that suspends), nothing per call otherwise.
"""

from __future__ import annotations

import time
from typing import Any

from .. import _log

log = _log.logger("mcpio.server", globals())

# An async function holds the event loop from one await to the next: nothing else is served
# meanwhile. A step longer than this is logged (the watchdog rule of sync tools run inline,
# ._inline: the function named, the time it held the loop, what to do), once per function.
BLOCKING = 0.1  # seconds (asyncio's debug mode flags callbacks over 100 ms too)
_blocked: set[str] = set()


class Watched:
    """Await ``coro`` step by step, timing each step (the time it held the loop); a step over
    :data:`BLOCKING` is logged as a WARNING naming the function (``time.sleep`` in an async def)."""

    __slots__ = ("coro", "name")

    def __init__(self, coro: Any, name: str) -> None:
        self.coro, self.name = coro, name

    def __await__(self) -> Any:
        coro, send, error = self.coro, None, None
        while True:
            t0 = time.perf_counter()
            try:
                step = coro.send(send) if error is None else coro.throw(error)
            except StopIteration as done:
                self._took(time.perf_counter() - t0)
                return done.value
            except BaseException:
                self._took(time.perf_counter() - t0)
                raise
            self._took(time.perf_counter() - t0)
            try:
                send, error = (yield step), None
            except BaseException as exc:  # cancellation, thrown in: passed on to the function
                send, error = None, exc

    def _took(self, seconds: float) -> None:
        if seconds > BLOCKING and self.name not in _blocked:
            _blocked.add(self.name)
            log.warning(
                "async tool %r held the event loop for %.2f s without awaiting (a blocking call such as "
                "time.sleep or requests in an async def): every other request waited. Await an async "
                "equivalent (asyncio.sleep, httpx.AsyncClient), or make it a plain def: it then runs on a "
                "worker thread",
                self.name,
                seconds,
            )
