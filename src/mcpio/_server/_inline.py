"""Adaptive inlining of plain ``def`` tools: a sync tool that has always returned
within microseconds runs on the event loop itself, saving the hop to a worker thread and back
(two thread wake-ups, ~30 µs of CPU and ~100 µs of latency per call); a watchdog notices one
that blocks and sends it back to the worker threads for good.

The policy, per tool (``@server.tool`` with ``inline`` left at its default, ``None``):

* **Probation.** A call runs on a worker thread (:mod:`._threads`), which times it. After
  ``PROMOTE_AFTER`` calls in a row that each returned within ``FAST`` seconds (wall time,
  measured in the worker: a tool waiting on I/O is not fast), the tool is *promoted*.
* **Inline.** A promoted tool's calls run on the loop thread, each timed. ``STRIKES`` calls
  longer than ``SLOW`` within ``WINDOW`` inline calls *demote* the tool for good: its later calls
  run on worker threads again. (One slow call is not enough: on a busy machine the OS may
  preempt the process in the middle of a 1 µs call, and wall time is all that is cheap to read —
  a thread's CPU time costs a system call, more than the call it would measure.)
* **Watchdog.** A daemon thread (started at the first promotion, asleep while no inline call
  runs) looks every ``TICK`` seconds at the inline call running, if any; one still running at
  two ticks in a row (so for at least ``TICK``) demotes its tool at once. It can look only when
  the loop's thread lets go of the GIL — a call blocked in I/O or a sleep does, and CPython
  makes a busy one do so every 5 ms. Either way the demotion is logged once per tool, as a
  WARNING naming the tool.

What this keeps and what it gives up: a blocking call of a tool on probation or demoted never
stalls the loop (worker threads, fair share, cancellation before start — :mod:`._threads`).
A tool that blocks *after* being promoted stalls the loop for that one call (Python cannot move
a running call to another thread); it is noticed while it blocks, and every later call of it
runs on a worker thread — at most one stalled call per tool per process. ``inline=False`` keeps
a tool on worker threads from its first call (a tool that is fast in tests but may hang in
production: a network call with a cache in front of it); ``inline=True`` inlines it always.
Tools that take a :class:`~mcpio.Context` are never inlined by this policy.
"""

from __future__ import annotations

import _thread
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import _log

if TYPE_CHECKING:
    import threading

log = _log.logger("mcpio.server", globals())

FAST = 100e-6  # a call this quick (seconds, wall time) counts towards promotion
PROMOTE_AFTER = 16  # consecutive fast calls on worker threads before a tool runs inline
SLOW = 1e-3  # an inline call longer than this is a strike
STRIKES = 3  # strikes within WINDOW inline calls demote the tool
WINDOW = 1000
TICK = 0.01  # the watchdog's period while inline calls run


class Speed:
    """One tool's record: whether it runs inline now, and why it stopped if it did."""

    __slots__ = ("demoted", "fast", "inline", "name", "since", "strikes")

    def __init__(self, name: str) -> None:
        self.name = name
        self.fast = 0  # consecutive fast calls on worker threads
        self.inline = False
        self.demoted = False
        self.strikes = 0  # slow inline calls in the current window
        self.since = 0  # WATCHDOG.seq at the window's first strike

    def observe(self, seconds: float) -> None:  # a worker thread, after a call returned
        """Count a probation call (races between workers only delay a promotion)."""
        if seconds <= FAST:
            self.fast += 1
            if self.fast >= PROMOTE_AFTER and not self.demoted and not self.inline:
                self.inline = True
                WATCHDOG.start()
        else:
            self.fast = 0

    def demote(self, why: str) -> None:
        """Back to worker threads for good; logged once."""
        if self.demoted:
            return
        self.demoted = True
        self.inline = False
        log.warning(
            "tool %r %s while running on the event loop (it had returned within %d µs %d times in a row, "
            "so it ran inline); from now on it runs on worker threads. Declare it with inline=False to keep "
            "it off the event loop from its first call, or make it async def",
            self.name,
            why,
            round(FAST * 1e6),
            PROMOTE_AFTER,
        )

    def call(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:  # the event loop's thread
        """Run ``fn`` inline, watched; demote its tool if it was slow."""
        wd = WATCHDOG
        wd.seq += 1
        wd.running = self
        if not wd.awake:
            wd.wake()
        ticks = wd.ticks
        t0 = time.perf_counter()
        try:
            return fn(**kwargs)
        finally:
            took = time.perf_counter() - t0
            wd.running = None
            # A call the watchdog looked in on is its to judge: its wake-up took the GIL from
            # this thread (CPython hands it over within 5 ms), which alone can make a 1 µs call
            # look slow.
            if took > SLOW and wd.ticks == ticks:
                self.strike(took)

    def strike(self, took: float) -> None:
        """A slow inline call: the STRIKES-th within WINDOW inline calls demotes the tool."""
        seq = WATCHDOG.seq
        if not self.strikes or seq - self.since > WINDOW:
            self.strikes, self.since = 0, seq
        self.strikes += 1
        if self.strikes >= STRIKES:
            self.demote(f"took {took * 1e3:.1f} ms ({self.strikes} calls over {SLOW * 1e3:.0f} ms)")


class Watchdog:
    """The thread that notices an inline call blocking the loop (module docstring)."""

    def __init__(self) -> None:
        self.running: Speed | None = None  # the inline call now running (set by the loop thread)
        self.seq = 0  # inline calls started
        self.awake = False
        self.noticed = 0  # blocked calls noticed (for tests and stats)
        self.ticks = 0  # looks taken
        self._event: threading.Event | None = None  # with the thread: threading loads then
        self._thread: threading.Thread | None = None
        self._lock = _thread.allocate_lock()

    def start(self) -> None:
        import threading  # not at start-up: the first promotion comes after asyncio loaded it

        with self._lock:
            if self._thread is None:
                self._event = threading.Event()
                self.awake = True
                self._thread = threading.Thread(target=self._watch, name="mcpio-inline-watchdog", daemon=True)
                self._thread.start()

    def wake(self) -> None:
        if self._thread is None:  # a forked child: the parent's thread did not come along
            self.start()
            return
        self.awake = True
        self._event.set()  # type: ignore[union-attr]  # made with the thread

    def _forked(self) -> None:  # in a child process, right after fork()
        self._thread = None
        self.awake = False
        self.running = None
        self._event = None
        self._lock = _thread.allocate_lock()

    def _watch(self) -> None:
        event = self._event  # made by start() before this thread
        assert event is not None
        last_seq, idle = -1, 0
        while True:
            time.sleep(TICK)
            self.ticks += 1
            running, seq = self.running, self.seq
            if running is not None and seq == last_seq:  # the same call as a tick ago: it blocks
                self.noticed += 1
                running.demote(f"has blocked for over {TICK * 1e3:.0f} ms")
            if running is None and seq == last_seq:
                idle += 1
                if idle >= 2:  # no inline call for two ticks: sleep until the next one
                    event.clear()
                    self.awake = False
                    if self.running is None:  # set before the loop thread reads `awake`: no lost wake-up
                        event.wait()
                    self.awake = True
                    idle = 0
            else:
                idle = 0
            last_seq = seq


WATCHDOG = Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WATCHDOG._forked)
