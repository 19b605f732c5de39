"""The platform seam: everything that differs between Linux, macOS and Windows, behind one
narrow interface. Nothing outside this package calls ``os.killpg``, uses a pidfd, kqueue, a Job
Object, ``start_new_session`` or ``os.dup`` on the protocol fds.

* :func:`claim_wire` / :func:`is_stream` — open the protocol streams (the stdout claim).
* :func:`stdio_mode` — ``"loop"`` (event-loop pipe transports; POSIX default) or ``"threads"``
  (blocking reader/writer threads; the Windows default, selectable anywhere with
  ``MCPIO_STDIO_MODE=threads``).
* :func:`wait_parent_exit` — watch the parent: a pidfd (Linux), kqueue ``NOTE_EXIT`` (macOS),
  a process handle waited on in a thread (Windows), ``getppid()`` polling (anything else, and
  the ``events=False`` mode).
* :func:`spawn_options` / :class:`ProcessTree` — spawn a server in its own group or job and end
  its whole tree (``killpg`` SIGTERM → SIGKILL; CTRL_BREAK_EVENT → ``TerminateJobObject``).
* :func:`on_terminate` — the polite stop request a server honours (SIGTERM; SIGBREAK).
* :func:`interpreter`, :func:`check_batch_args`, :func:`which_path` — command lines for host
  configs (``npx`` → ``npx.cmd`` on Windows).

The implementation is chosen with ``sys.platform`` checks that type checkers understand, so
``mypy --platform win32`` / ``darwin`` / ``linux`` check each one against what exists there.
"""

from __future__ import annotations

import sys

from ._common import (
    STDIO_MODES,
    check_batch_args,
    claim_wire,
    interpreter,
    is_claimed,
    is_stream,
    poll_parent,
    which_path,
)
from ._common import stdio_mode as _stdio_mode

if sys.platform == "win32":
    from ._windows import (
        DEFAULT_STDIO_MODE,
        ProcessTree,
        on_terminate,
        restore_blocking,
        spawn_options,
        wait_parent_exit,
        wait_ready,
    )
elif sys.platform == "linux":
    from ._posix import (
        DEFAULT_STDIO_MODE,
        ProcessTree,
        on_terminate,
        restore_blocking,
        spawn_options,
        wait_parent_exit,
        wait_ready,
    )
elif sys.platform == "darwin" or "bsd" in sys.platform:
    from ._darwin import (
        DEFAULT_STDIO_MODE,
        ProcessTree,
        on_terminate,
        restore_blocking,
        spawn_options,
        wait_parent_exit,
        wait_ready,
    )
else:  # other POSIX systems: no pidfd (the Linux branch is skipped there), getppid polling
    from ._posix import (
        DEFAULT_STDIO_MODE,
        ProcessTree,
        on_terminate,
        restore_blocking,
        spawn_options,
        wait_parent_exit,
        wait_ready,
    )

__all__ = [
    "DEFAULT_STDIO_MODE",
    "STDIO_MODES",
    "ProcessTree",
    "check_batch_args",
    "claim_wire",
    "interpreter",
    "is_claimed",
    "is_stream",
    "on_terminate",
    "poll_parent",
    "restore_blocking",
    "spawn_options",
    "stdio_mode",
    "wait_parent_exit",
    "wait_ready",
    "which_path",
]


def stdio_mode(mode: str | None = None) -> str:
    """``mode``, else ``MCPIO_STDIO_MODE``, else this platform's default (see the module docstring)."""
    return _stdio_mode(mode, DEFAULT_STDIO_MODE)
