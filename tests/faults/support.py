"""Shared pieces of the fault tests: the servers and a memory check (pipes and process waits:
``tests/support/pipes.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FAULTS = [sys.executable, str(HERE / "fault_server.py")]
GARBAGE = [sys.executable, str(HERE / "garbage_server.py")]
MiB = 1024 * 1024


def peak_rss(pid: int | str = "self") -> int:
    """VmHWM (peak resident memory) of a process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for {pid}")
