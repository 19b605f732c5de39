"""Shared pieces of the fault tests: the servers, process checks, bounded waits."""

from __future__ import annotations

import os
import select
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FAULTS = [sys.executable, str(HERE / "fault_server.py")]
GARBAGE = [sys.executable, str(HERE / "garbage_server.py")]
MiB = 1024 * 1024


def wait_pid_gone(pid: int, timeout: float) -> bool:
    """True when process ``pid`` (not necessarily our child) has exited within ``timeout``."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def peak_rss(pid: int | str = "self") -> int:
    """VmHWM (peak resident memory) of a process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for {pid}")
