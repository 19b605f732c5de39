"""A small mcpio server for robustness tests: echo, a slow tool, a task, a tool that prints."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from mcpio import Context, Server

# No result cap: this server exists to move huge messages through the transport.
server = Server(
    "echo",
    version="1.0.0",
    max_message_size=int(os.environ.get("ECHO_MAX_MESSAGE", 256 * 1024 * 1024)),
    max_result_bytes=None,
)


@server.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
async def sleep(seconds: float, ctx: Context) -> str:
    """Sleep, then say so."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool(task_support="optional")
async def job(seconds: float, ctx: Context) -> str:
    """A task for clients that declare the tasks extension: sleep, then say so."""
    await asyncio.sleep(seconds)
    return f"job done after {seconds}"


@server.tool
def noisy(text: str) -> str:
    """Print to stdout, log, and run a child that writes to fd 1 — none of it may reach the wire."""
    print("this print must not reach the protocol stream")
    sys.stdout.write("neither must this\n")
    os.write(1, b"nor a raw write to fd 1\n")
    subprocess.run([sys.executable, "-c", "print('child stdout')"], check=True)
    return text


if __name__ == "__main__":
    server.run()
