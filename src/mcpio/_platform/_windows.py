"""Windows: Job Objects and console control events for server trees, a process handle for the
parent, blocking threads for the pipes (the default stdio mode). Win32 through ``ctypes``."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from ctypes import wintypes
from typing import TYPE_CHECKING, Any

from ._common import resolver as _resolver

if TYPE_CHECKING:
    import asyncio

assert sys.platform == "win32"

# Overlapped I/O is what the Proactor loop's pipe transports need, and nothing guarantees it for
# the pipes a host hands its server: stdio runs on blocking reader and writer threads here.
DEFAULT_STDIO_MODE = "threads"

_kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)

SYNCHRONIZE = 0x00100000
PROCESS_TERMINATE = 0x0001
PROCESS_SET_QUOTA = 0x0100
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
INFINITE = 0xFFFFFFFF
WAIT_OBJECT_0 = 0
ERROR_INVALID_PARAMETER = 87  # OpenProcess on a pid that no longer exists
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
JobObjectExtendedLimitInformation = 9


class _BasicLimits(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", wintypes.DWORD),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", wintypes.DWORD),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", wintypes.DWORD),
        ("SchedulingClass", wintypes.DWORD),
    ]


class _IoCounters(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_uint64)
        for name in (
            "ReadOperationCount",
            "WriteOperationCount",
            "OtherOperationCount",
            "ReadTransferCount",
            "WriteTransferCount",
            "OtherTransferCount",
        )
    ]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", _IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


_kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
_kernel32.OpenProcess.restype = wintypes.HANDLE
_kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
_kernel32.CloseHandle.restype = wintypes.BOOL
_kernel32.CreateEventW.argtypes = [ctypes.c_void_p, wintypes.BOOL, wintypes.BOOL, wintypes.LPCWSTR]
_kernel32.CreateEventW.restype = wintypes.HANDLE
_kernel32.SetEvent.argtypes = [wintypes.HANDLE]
_kernel32.SetEvent.restype = wintypes.BOOL
_kernel32.WaitForMultipleObjects.argtypes = [
    wintypes.DWORD,
    ctypes.POINTER(wintypes.HANDLE),
    wintypes.BOOL,
    wintypes.DWORD,
]
_kernel32.WaitForMultipleObjects.restype = wintypes.DWORD
_kernel32.GetProcessTimes.argtypes = [wintypes.HANDLE] + [ctypes.POINTER(wintypes.FILETIME)] * 4
_kernel32.GetProcessTimes.restype = wintypes.BOOL
_kernel32.GetCurrentProcess.argtypes = []
_kernel32.GetCurrentProcess.restype = wintypes.HANDLE
_kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
_kernel32.CreateJobObjectW.restype = wintypes.HANDLE
_kernel32.SetInformationJobObject.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD]
_kernel32.SetInformationJobObject.restype = wintypes.BOOL
_kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
_kernel32.AssignProcessToJobObject.restype = wintypes.BOOL
_kernel32.TerminateJobObject.argtypes = [wintypes.HANDLE, wintypes.UINT]
_kernel32.TerminateJobObject.restype = wintypes.BOOL


def _created(handle: Any) -> int:
    """A process's creation time (100 ns ticks since 1601), 0 when it cannot be read."""
    times = [wintypes.FILETIME() for _ in range(4)]
    if not _kernel32.GetProcessTimes(handle, *(ctypes.byref(t) for t in times)):
        return 0
    return (times[0].dwHighDateTime << 32) | times[0].dwLowDateTime


async def wait_parent_exit(ppid: int, poll: float, *, events: bool = True) -> None:
    """Return when the parent ``ppid`` has exited.

    A handle from ``OpenProcess`` is waited on (``WaitForMultipleObjects``, with an event that
    cancellation sets) in a daemon thread. A parent created after us is not our parent (its pid
    was reused), and one that no longer exists has exited: both return at once. If the parent
    cannot be opened (access denied), there is nothing to watch and this never returns.
    ``poll`` and ``events`` are unused: Windows has no "parent changed" to poll.
    """
    import asyncio

    handle = _kernel32.OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, False, ppid)
    if not handle:
        if ctypes.get_last_error() == ERROR_INVALID_PARAMETER:
            return
        await asyncio.get_running_loop().create_future()  # cannot watch it; wait to be cancelled
        return
    cancel = _kernel32.CreateEventW(None, True, False, None)
    try:
        mine, theirs = _created(_kernel32.GetCurrentProcess()), _created(handle)
        if mine and theirs and theirs > mine:
            return
        loop = asyncio.get_running_loop()
        gone = loop.create_future()
        handles = (wintypes.HANDLE * 2)(handle, cancel)

        def wait() -> None:
            if _kernel32.WaitForMultipleObjects(2, handles, False, INFINITE) == WAIT_OBJECT_0:
                with contextlib.suppress(RuntimeError):  # the loop is closed
                    loop.call_soon_threadsafe(_resolver(gone))

        watcher = threading.Thread(target=wait, name="mcpio-parent", daemon=True)
        watcher.start()
        try:
            await gone
        finally:
            _kernel32.SetEvent(cancel)
            watcher.join(1.0)  # the event makes it return at once; the handles outlive the wait
    finally:
        _kernel32.CloseHandle(cancel)
        _kernel32.CloseHandle(handle)


def spawn_options() -> dict[str, Any]:
    """Keyword arguments for ``subprocess``/``subprocess_exec``: a new process group, so a
    CTRL_BREAK_EVENT reaches the server (and not us)."""
    return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}


class ProcessTree:
    """A spawned server and everything it starts: a Job Object with kill-on-close.

    The process is assigned to the job right after it starts (children it creates from then on
    are in the job too); closing the last handle of the job — ours, also when this process dies —
    ends every process in it.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._job = _kernel32.CreateJobObjectW(None, None)
        if self._job:
            limits = _ExtendedLimits()
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            process = _kernel32.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, False, pid)
            ok = bool(process) and bool(
                _kernel32.SetInformationJobObject(
                    self._job, JobObjectExtendedLimitInformation, ctypes.byref(limits), ctypes.sizeof(limits)
                )
            )
            ok = ok and bool(_kernel32.AssignProcessToJobObject(self._job, process))
            if process:
                _kernel32.CloseHandle(process)
            if not ok:  # no job: kill() falls back to TerminateProcess on the server alone
                _kernel32.CloseHandle(self._job)
                self._job = None

    def terminate(self) -> None:
        """Ask the server's process group to exit (CTRL_BREAK_EVENT; it needs a shared console)."""
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.CTRL_BREAK_EVENT)

    def kill(self) -> None:
        """End every process of the job now (TerminateJobObject). Safe to repeat."""
        if self._job:
            _kernel32.TerminateJobObject(self._job, 1)
        else:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGTERM)  # TerminateProcess

    def close(self) -> None:
        """Close the job handle (kill-on-close ends whatever is still in it)."""
        job, self._job = self._job, None
        if job:
            _kernel32.CloseHandle(job)


def on_terminate(loop: asyncio.AbstractEventLoop, callback: Callable[[], Any]) -> bool:
    """Call ``callback`` in ``loop`` on CTRL_BREAK_EVENT (SIGBREAK: what ``ProcessTree.terminate``
    sends); False when it cannot be installed (not the main thread)."""

    def handler(signum: int, frame: Any) -> None:
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(callback)

    try:
        signal.signal(signal.SIGBREAK, handler)
    except (ValueError, OSError):
        return False
    return True


def restore_blocking(fd: int) -> None:
    """Nothing to restore: the Proactor loop does not change a handle's mode."""


def wait_ready(fd: int, write: bool) -> None:
    """A pipe someone set to PIPE_NOWAIT has no readiness to wait on: retry shortly."""
    time.sleep(0.01)
