"""The parts of the platform seam that are the same everywhere (``os.dup`` and ``os.dup2`` work
on the C runtime's descriptors on Windows too), and the ``getppid`` poll every POSIX system
falls back to."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

STDIO_MODES = ("loop", "threads")

# The wire as fds 0 and 1 were before the first claim, kept for the life of the process (so a
# later transport in this process finds it again); fds 0 and 1 stay redirected from then on.
_WIRE: dict[int, int] = {}


def claim_wire(fd: int) -> int:
    """Take the protocol stream off fd 0 or fd 1 and return a private duplicate of it.

    fd 0 then reads /dev/null (``NUL`` on Windows) and fd 1 writes to stderr, and
    ``sys.stdout`` becomes ``sys.stderr``, so nothing else in the process (a ``print``, a C
    ``printf``, a child that inherits the fds) can read or write protocol bytes. Idempotent per
    fd: a second claim returns a new duplicate of the same wire. The duplicate is not
    inheritable (PEP 446), so children never see it. OSError if ``fd`` is not open.
    """
    wire = _WIRE.get(fd)
    if wire is None:
        wire = _WIRE[fd] = os.dup(fd)
        if fd == 0:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
        else:
            try:
                os.dup2(2, 1)
            except OSError:  # no stderr at all: stray output is discarded
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.close(null)
            # Whatever print() buffered before now lands on stderr, not on the wire.
            for stream in (sys.stdout, sys.__stdout__):
                with contextlib.suppress(Exception):
                    stream.flush()  # type: ignore[union-attr]
            if sys.stderr is not None:
                sys.stdout = sys.stderr
    proto = os.dup(wire)
    if sys.platform == "win32":  # CRT descriptors: never translate \r\n or stop at ^Z
        import msvcrt

        msvcrt.setmode(proto, os.O_BINARY)
    return proto


def is_claimed(fd: int) -> bool:
    return fd in _WIRE


def is_stream(fd: int) -> bool:
    """A pipe or a socket (what the event loop's pipe transports serve); not a tty or a file."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def stdio_mode(mode: str | None, default: str) -> str:
    """The stdio transport mode: ``mode`` if given, else ``MCPIO_STDIO_MODE``, else ``default``.

    ``"loop"``: the event loop's pipe transports (POSIX). ``"threads"``: a blocking reader and
    writer thread per pipe (what Windows uses; selectable everywhere). ValueError otherwise.
    """
    chosen = mode or os.environ.get("MCPIO_STDIO_MODE") or default
    if chosen not in STDIO_MODES:
        raise ValueError(f"the stdio mode must be one of {', '.join(STDIO_MODES)} (MCPIO_STDIO_MODE), not {chosen!r}")
    return chosen


async def poll_parent(ppid: int, interval: float) -> None:
    """Return once our parent is no longer ``ppid``: a *change* of parent counts (not ``== 1``:
    subreapers exist), so PID reuse cannot fool it."""
    import asyncio

    while os.getppid() == ppid:
        await asyncio.sleep(interval)


def resolver(future: asyncio.Future[None]) -> Callable[[], None]:
    """A callback that resolves ``future`` (once; later calls do nothing)."""

    def resolve() -> None:
        if not future.done():
            future.set_result(None)

    return resolve


def interpreter() -> str:
    """The absolute path of the Python running us, for host configs that start a server.

    On Windows ``pythonw.exe`` has no usable stdio, so its ``python.exe`` sibling is named.
    """
    exe = os.path.abspath(sys.executable)
    head, tail = os.path.split(exe)
    if tail.lower() == "pythonw.exe":
        sibling = os.path.join(head, "python.exe")
        if os.path.isfile(sibling):
            return sibling
    return exe


def which_path(candidate: str) -> str | None:
    """``candidate`` (a path with a folder) if it is an executable file, else None; on Windows
    also ``candidate`` plus each ``PATHEXT`` ending (``C:\\nodejs\\npx`` is ``npx.cmd``), which
    ``shutil.which`` only does for such paths from Python 3.12 on."""
    import shutil  # here, not at start-up: it pulls bz2, lzma and fnmatch

    found = shutil.which(candidate)
    if found is None and sys.platform == "win32":
        for ext in os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").split(os.pathsep):
            if ext and os.path.isfile(candidate + ext):
                return candidate + ext
    return found


# Characters cmd.exe interprets in a command line (and quotes, which it re-parses): Windows runs
# a .cmd/.bat file through cmd.exe, so an argument holding one could run something else.
_CMD_META = frozenset('"&|<>^%!\r\n')


def check_batch_args(exe: str, args: list[str]) -> None:
    """Refuse arguments that cmd.exe would reinterpret when ``exe`` is a .cmd or .bat file.

    Windows starts batch files (``npx.cmd``) through ``cmd.exe``, which parses the command line
    again; an argument with ``& | < > ^ % ! "`` or a newline could then run another command.
    ValueError names the argument; other executables are not checked.
    """
    if not exe.lower().endswith((".cmd", ".bat")):
        return
    for arg in args:
        bad = sorted(set(arg) & _CMD_META)
        if bad:
            raise ValueError(
                f"cannot start {os.path.basename(exe)} with the argument {arg!r}: Windows runs batch files through "
                f"cmd.exe, which would interpret {''.join(bad)!r} in it; start the program the batch file runs "
                "(node, python) directly instead"
            )
