"""An mcpio server whose tools fail in every way a tool can: the subject of tests/faults.

    python tests/faults/fault_server.py

Tools: ``echo``, ``raise_`` (sync or async, any exception kind), ``hang`` (async, cancellable)
and ``hang_sync`` (a worker thread that cannot be stopped), ``alive`` (how many ``hang`` calls
are still running), ``in_flight`` (the requests the session and its Connection hold), ``gate`` (waits until ``n`` calls are in flight at once), ``nap`` (sleeps
``ms``), ``spew`` (prints, writes to fd 1, and leaves a child writing to fd 1 after it returns),
``size`` (the length of its argument), ``big`` (``n`` bytes of text, uncapped) and
``big_capped`` (the default 1 MiB cap applies).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time

from mcpio import Context, Server, ToolError

server = Server("faults", version="1.0.0")
_alive = {"hang": 0}
_gate: dict[str, object] = {}


@server.tool
def echo(text: str) -> str:
    return text


def _raise(kind: str) -> str:
    if kind == "value":
        raise ValueError("bad value")
    if kind == "tool":
        raise ToolError("a clean tool error")
    if kind == "exit":
        sys.exit(3)  # a library calling sys.exit() must not end the server
    if kind == "argparse":
        argparse.ArgumentParser(prog="inner").parse_args(["--no-such-flag"])  # exits with status 2
    if kind == "keyboard":
        raise KeyboardInterrupt
    if kind == "recursion":

        def down(n: int) -> int:
            return down(n + 1) + 1

        down(0)
    if kind == "memory":
        raise MemoryError("pretend we ran out")
    if kind == "unprintable":

        class Weird(Exception):
            def __str__(self) -> str:
                raise RuntimeError("cannot even print me")

        raise Weird()
    return "no error"


@server.tool(name="raise")
def raise_sync(kind: str) -> str:
    return _raise(kind)


@server.tool
async def raise_async(kind: str) -> str:
    return _raise(kind)


@server.tool
async def hang(seconds: float = 3600) -> str:
    _alive["hang"] += 1
    try:
        await asyncio.sleep(seconds)
        return "woke up"
    finally:
        _alive["hang"] -= 1


@server.tool
def hang_sync(seconds: float = 3600) -> str:
    time.sleep(seconds)
    return "woke up"


@server.tool
def alive() -> int:
    return _alive["hang"]


@server.tool
async def in_flight(ctx: Context) -> dict[str, int]:
    """Requests the session and the protocol state hold as running (this call included)."""
    return {"session": ctx.session.in_flight(), "connection": ctx.session.connection.in_flight()}


@server.tool
async def gate(n: int, ctx: Context) -> int:
    """Return only once ``n`` gate calls are in flight together (proves they run concurrently)."""
    state = _gate.setdefault("state", {"count": 0, "event": asyncio.Event(), "peak": 0})
    state["count"] += 1  # type: ignore[index]
    state["peak"] = max(state["peak"], state["count"])  # type: ignore[index]
    if state["count"] >= n:  # type: ignore[index]
        state["event"].set()  # type: ignore[index]
    try:
        await state["event"].wait()  # type: ignore[index]
        return state["peak"]  # type: ignore[index]
    finally:
        state["count"] -= 1  # type: ignore[index]
        if state["count"] == 0:  # type: ignore[index]
            _gate.clear()


@server.tool
async def nap(ms: float) -> str:
    await asyncio.sleep(ms / 1000)
    return f"napped {ms}"


@server.tool
def spew(text: str) -> str:
    print("spew: print to stdout")
    os.write(1, b"spew: raw write to fd 1\n")
    subprocess.run([sys.executable, "-c", "print('spew: child stdout')"], check=True)
    # A grandchild that keeps writing to fd 1 after this tool has returned.
    subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nfor i in range(5):\n    print('spew: late child', i, flush=True); time.sleep(0.02)",
        ]
    )
    return text


@server.tool
def size(text: str) -> int:
    return len(text)


@server.tool(max_result_bytes=None)
def big(n: int) -> str:
    return "b" * n


@server.tool
def big_capped(n: int) -> str:
    return "c" * n


if __name__ == "__main__":
    server.run()
