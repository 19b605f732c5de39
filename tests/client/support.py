"""Helpers for the client tests: bounded event loops, paths, process-group checks."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SERVERS = ROOT / "tests" / "servers"
RAW = [sys.executable, str(SERVERS / "raw_server.py")]


def arun(coro: Coroutine[Any, Any, Any], timeout: float = 30.0) -> Any:
    """Run ``coro`` in a fresh event loop; the test fails if it takes longer than ``timeout``."""

    async def bounded() -> Any:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())


async def within(aw: Any, seconds: float = 10.0) -> Any:
    async with asyncio.timeout(seconds):
        return await aw


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``, from /proc."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            out.append(int(entry))
    return out


def group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
