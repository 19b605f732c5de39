"""POSIX (Linux and the generic fallback): process groups, signals, a pidfd for the parent."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._common import poll_parent
from ._common import resolver as _resolver

if TYPE_CHECKING:
    import asyncio

assert sys.platform != "win32"

DEFAULT_STDIO_MODE = "loop"


async def wait_parent_exit(ppid: int, poll: float, *, events: bool = True) -> None:
    """Return when the parent ``ppid`` has exited.

    Linux ≥ 5.3 with ``events``: a pidfd of the parent, made while it is still our parent (so
    PID reuse cannot fool it), readable the moment it exits. Otherwise ``getppid()`` is polled
    every ``poll`` seconds.
    """
    import asyncio

    if events and ppid > 1 and sys.platform == "linux":
        pidfd = -1
        with contextlib.suppress(OSError):
            pidfd = os.pidfd_open(ppid)
        if pidfd >= 0:
            try:
                if os.getppid() == ppid:  # it was alive when the pidfd was made: it is ours
                    loop = asyncio.get_running_loop()
                    gone = loop.create_future()
                    try:
                        loop.add_reader(pidfd, _resolver(gone))
                    except NotImplementedError:  # a loop without add_reader: poll instead
                        pass
                    else:
                        try:
                            await gone
                        finally:
                            loop.remove_reader(pidfd)
                        return
            finally:
                os.close(pidfd)
    await poll_parent(ppid, poll)


def spawn_options() -> dict[str, Any]:
    """Keyword arguments for ``subprocess``/``subprocess_exec``: a new session, so the server's
    process group id is its pid and signals at shutdown reach the children of wrappers."""
    return {"start_new_session": True}


class ProcessTree:
    """A spawned server and everything it started (its process group)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def terminate(self) -> None:
        """Ask the whole tree to exit (SIGTERM to the group)."""
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        """End the whole tree now (SIGKILL to the group). Safe to repeat."""
        self._signal(signal.SIGKILL)

    def close(self) -> None:
        """Release what the tree holds (nothing on POSIX)."""


def on_terminate(loop: asyncio.AbstractEventLoop, callback: Callable[[], Any]) -> bool:
    """Call ``callback`` in ``loop`` on SIGTERM; False when this loop cannot install it."""
    try:
        loop.add_signal_handler(signal.SIGTERM, callback)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signal support
        return False
    return True


def restore_blocking(fd: int) -> None:
    """Clear the O_NONBLOCK the event loop's pipe transports set on ``fd`` (it is shared)."""
    with contextlib.suppress(OSError):
        os.set_blocking(fd, True)


def wait_ready(fd: int, write: bool) -> None:
    """Block until ``fd`` (left non-blocking by someone else sharing it) is ready again."""
    if write:
        select.select([], [fd], [])
    else:
        select.select([fd], [], [])
