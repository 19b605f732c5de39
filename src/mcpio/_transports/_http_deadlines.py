"""Timed waits of the HTTP response streams, one timer per wait length instead of one per wait.

Every POST's :class:`~._http_server_streams.Stream` waits up to ``sse_after`` seconds for its
answer before turning into an event stream, and an open event stream waits ``keepalive``
seconds between comments. A timer handle per wait (``loop.call_later`` then ``cancel``) costs a
heap push with Python-level comparisons, and the cancelled handle stays in the loop's heap until
its time comes: at thousands of requests a second that heap holds thousands of dead handles, and
each push and pop compares a dozen of them (about 8 % of a legacy request's instructions,
measured). Waits of one length on one loop end in the order they start, so a FIFO of deadlines and one
timer armed for the earliest does the same: :func:`start` records a deadline; a wait that ends
early leaves a stale entry, skipped when its time comes (it holds the stream weakly, so a
stream, its session and its frames are never kept alive by it).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from typing import Protocol


class Waiter(Protocol):
    """What a timed wait needs of the stream: a token that changes with each wait, and the
    callback that ends the wait as timed out."""

    wait_token: int

    def _time_up(self) -> None: ...


class _Deadlines:
    """The pending timed waits of one length on one loop, earliest first."""

    __slots__ = ("armed", "queue", "timeout")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.queue: deque[tuple[float, weakref.ref[Waiter], int]] = deque()
        self.armed = False  # a timer is set for the head (holding no loop reference here)

    def add(self, loop: asyncio.AbstractEventLoop, waiter: Waiter, token: int) -> None:
        deadline = loop.time() + self.timeout
        self.queue.append((deadline, weakref.ref(waiter), token))
        if not self.armed:
            self.armed = True
            loop.call_at(deadline, self._fire)

    def _fire(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        queue = self.queue
        while queue and queue[0][0] <= now:
            _, ref, token = queue.popleft()
            waiter = ref()
            if waiter is not None and waiter.wait_token == token:  # still in that same wait
                waiter._time_up()
        if queue:
            loop.call_at(queue[0][0], self._fire)
        else:
            self.armed = False


_LOOPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, _Deadlines]] = weakref.WeakKeyDictionary()


def start(waiter: Waiter, timeout: float) -> None:
    """Call ``waiter._time_up()`` in ``timeout`` seconds unless ``waiter.wait_token`` has changed
    by then (the wait ended: the waiter changes its token). On the running loop."""
    loop = asyncio.get_running_loop()
    lengths = _LOOPS.get(loop)
    if lengths is None:
        lengths = _LOOPS[loop] = {}
    deadlines = lengths.get(timeout)
    if deadlines is None:
        deadlines = lengths[timeout] = _Deadlines(timeout)
    deadlines.add(loop, waiter, waiter.wait_token)
