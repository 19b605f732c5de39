"""Helpers for the client tests: bounded event loops, paths, process-group checks."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from mcpio._transports._base import abilities, routing_key

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


class Recorder:
    """A transport wrapper that keeps every message sent and received (decoded), in order."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[Any] = []
        self.received: list[Any] = []
        # What stays true through a recording: all but what would skip its send (the nowait ones)
        # or feed the engine frames it never saw (attach, push).
        offers = abilities(inner)
        self.abilities = offers._replace(
            send_nowait=None, answer_nowait=None, attach=None, push=None, routing_key=routing_key(inner)
        )
        self.key = offers.key
        self._arrival: asyncio.Event | None = None

    async def send(self, frame: bytes) -> None:
        self.sent.append(json.loads(frame))
        await self.inner.send(frame)

    async def receive(self) -> Any:
        frame = await self.inner.receive()
        self.received.append(json.loads(getattr(frame, "raw", frame)))  # Decoded, Related: their bytes
        if self._arrival is not None:
            self._arrival.set()
        return frame

    async def wait_received(self, pred: Any, start: int = 0) -> Any:
        """The first message received (from index ``start`` on) with ``pred(msg)``, waiting for
        arrivals (bound it with ``within``)."""
        seen = start
        while True:
            for m in self.received[seen:]:
                if pred(m):
                    return m
            seen = len(self.received)
            self._arrival = asyncio.Event()
            await self._arrival.wait()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def methods(self) -> list[str | None]:
        return [m.get("method") for m in self.sent]

    def validate(self, version: str) -> int:
        """Check every message both ways against the ``version`` schema; returns how many."""
        from tests.support import wire

        asked = {m["id"]: m["method"] for m in self.sent if "method" in m and "id" in m}
        for msg in self.sent:
            wire.check(msg, version)
        for msg in self.received:
            wire.check(msg, version, asked.get(msg.get("id")) if "method" not in msg else None)
        return len(self.sent) + len(self.received)


def in_memory(server: Any) -> tuple[Recorder, asyncio.Task[Any]]:
    """A recorded memory transport to ``server`` (served in a task) for ``Client(transport=…)``."""
    from mcpio._transports._memory import memory_pair

    ours, theirs = memory_pair()
    ours.key = f"memory:{id(server)}"
    return Recorder(ours), asyncio.get_running_loop().create_task(server.serve(theirs))
