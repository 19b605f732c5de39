"""The response streams' timed waits (``_transports/_http_deadlines``, issue 17): one timer per
wait length, a FIFO of deadlines; a wait that ended is never timed out later, a stream is not
kept alive by its stale deadline, and waits of different lengths keep their own order."""

from __future__ import annotations

import asyncio
import gc
import weakref

from mcpio._transports import _http_deadlines as deadlines


class Waiter:
    def __init__(self, name: str, log: list[str], done: asyncio.Event | None = None) -> None:
        self.name = name
        self.log = log
        self.done = done
        self.wait_token = 0

    def _time_up(self) -> None:
        self.log.append(self.name)
        if self.done is not None:
            self.done.set()


def test_deadlines_fire_in_order_and_skip_ended_waits() -> None:
    async def go() -> None:
        log: list[str] = []
        last = asyncio.Event()
        a, ended, b = Waiter("a", log), Waiter("ended", log), Waiter("b", log)
        longer = Waiter("longer", log, last)
        deadlines.start(a, 0.001)
        deadlines.start(ended, 0.001)
        ended.wait_token += 1  # that wait ended before its deadline: never timed out
        deadlines.start(longer, 0.002)  # another length: its own queue and timer
        deadlines.start(b, 0.001)
        await asyncio.wait_for(last.wait(), 10)  # a bound against hanging, not a timing check
        assert log == ["a", "b", "longer"]

    asyncio.run(go())


def test_a_stale_deadline_does_not_keep_its_stream_alive() -> None:
    async def go() -> None:
        log: list[str] = []
        fired = asyncio.Event()
        gone = Waiter("gone", log)
        ref = weakref.ref(gone)
        deadlines.start(gone, 0.001)
        del gone
        gc.collect()
        assert ref() is None
        after = Waiter("after", log, fired)  # a waiting stream is alive (its wait holds it)
        deadlines.start(after, 0.001)  # the queue goes on past the dead entry
        await asyncio.wait_for(fired.wait(), 10)
        assert log == ["after"]

    asyncio.run(go())


def test_each_loop_has_its_own_queues() -> None:
    for _ in range(2):  # a second loop after the first has closed (its queue armed a timer)
        log: list[str] = []

        async def go(log: list[str] = log) -> None:
            fired = asyncio.Event()
            waiter = Waiter("x", log, fired)
            deadlines.start(waiter, 0.0)
            await asyncio.wait_for(fired.wait(), 10)

        asyncio.run(go())
        assert log == ["x"]
