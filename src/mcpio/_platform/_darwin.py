"""macOS (and the BSDs' kqueue): the POSIX implementation, with the parent watched by kqueue."""

from __future__ import annotations

import os
import select
import sys

assert sys.platform != "win32" and sys.platform != "linux"

from ._common import poll_parent
from ._common import resolver as _resolver
from ._posix import DEFAULT_STDIO_MODE, ProcessTree, on_terminate, restore_blocking, spawn_options, wait_ready

__all__ = [
    "DEFAULT_STDIO_MODE",
    "ProcessTree",
    "on_terminate",
    "restore_blocking",
    "spawn_options",
    "wait_parent_exit",
    "wait_ready",
]


async def wait_parent_exit(ppid: int, poll: float, *, events: bool = True) -> None:
    """Return when the parent ``ppid`` has exited.

    With ``events``: a kqueue ``EVFILT_PROC``/``NOTE_EXIT`` filter on the parent, registered
    while it is still our parent (registration fails with ESRCH once it is gone), so the exit
    is seen at once and PID reuse cannot fool it. Otherwise ``getppid()`` every ``poll`` s.
    """
    import asyncio

    if events and ppid > 1:
        try:
            kq = select.kqueue()
        except OSError:
            kq = None
        if kq is not None:
            try:
                event = select.kevent(
                    ppid,
                    filter=select.KQ_FILTER_PROC,
                    flags=select.KQ_EV_ADD | select.KQ_EV_ONESHOT,
                    fflags=select.KQ_NOTE_EXIT,
                )
                try:
                    kq.control([event], 0, 0)
                except ProcessLookupError:  # ESRCH: the parent is already gone
                    return
                if os.getppid() != ppid:  # it exited before the filter was in place
                    return
                loop = asyncio.get_running_loop()
                gone = loop.create_future()
                try:
                    loop.add_reader(kq.fileno(), _resolver(gone))
                except NotImplementedError:  # a loop without add_reader: poll instead
                    pass
                else:
                    try:
                        await gone
                    finally:
                        loop.remove_reader(kq.fileno())
                    return
            except OSError:  # kqueue refused the filter: poll instead
                pass
            finally:
                kq.close()
    await poll_parent(ppid, poll)
