"""The subject of the hardening tests (issue 12): a Streamable HTTP server in its own process
whose tools let a test count what the worker pool and the task store did.

    python tests/faults/harden_server.py [--port N] [--max-in-flight N] [--max-tasks N]
        [--expose-errors] [--max-connections N] [--header-timeout S] [--max-head N]
        [--http-parser auto|httptools|h11]

Tools: ``block`` (sync: counts itself started, then waits until ``release`` or 30 s),
``quick`` (sync, returns at once), ``delete_all`` (destructive: confirms through
``ctx.elicit``, an MRTR round in 2026-07-28), ``deleted`` (how many times it deleted), ``release`` (lets every ``block`` return), ``stats`` (the
worker pool's counts and how many ``block`` calls started), ``slow_task`` (task-optional,
async: waits until released), ``crash`` (raises an unexpected exception whose message holds a
path), ``refuse`` (raises ToolError), ``read_file`` (a SafePath under the temp folder), and the
resource ``internal://boom`` (raises an unexpected exception).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import threading

from mcpio import Context, SafePath, Server, ToolError
from mcpio._server._threads import WORKERS

_released = threading.Event()
_counts = {"block": 0, "deleted": 0}
_lock = threading.Lock()


def build(max_in_flight: int, max_tasks: int, expose_errors: bool) -> Server:
    options = {"expose_errors": True} if expose_errors else {}
    server = Server("harden", version="1.0.0", max_in_flight=max_in_flight, max_tasks=max_tasks, **options)

    @server.tool
    def block() -> str:
        with _lock:
            _counts["block"] += 1
        _released.wait(30)
        return "released"

    @server.tool
    def quick() -> str:
        return "quick"

    @server.tool
    async def release() -> str:
        _released.set()
        return "ok"

    @server.tool
    async def stats() -> dict:
        with _lock:
            return {**WORKERS.stats(), "block_started": _counts["block"]}

    @server.tool(task_support="optional")
    async def slow_task() -> str:
        while not _released.is_set():
            await asyncio.sleep(0.01)
        return "done"

    @server.tool
    async def delete_all(ctx: Context) -> str:
        answer = await ctx.elicit("Delete everything?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        if answer.get("action") == "accept" and (answer.get("content") or {}).get("ok"):
            _counts["deleted"] += 1
            return "deleted"
        return "kept"

    @server.tool
    async def deleted() -> int:
        return _counts["deleted"]

    @server.tool
    def crash() -> str:
        raise RuntimeError("cannot open /srv/secret/internal/config.yaml")

    @server.tool
    def refuse() -> str:
        raise ToolError("this message is for the client")

    @server.tool
    def read_file(path: str) -> str:
        return SafePath(tempfile.gettempdir()).read_text(path)

    @server.resource("internal://boom")
    def boom() -> str:
        raise KeyError("/srv/secret/table")

    return server


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=None, help="serve Streamable HTTP on this port (else stdio)")
    ap.add_argument("--max-in-flight", type=int, default=1024)
    ap.add_argument("--max-tasks", type=int, default=1000)
    ap.add_argument("--expose-errors", action="store_true")
    ap.add_argument("--max-connections", type=int, default=None)
    ap.add_argument("--header-timeout", type=float, default=None)
    ap.add_argument("--max-head", type=int, default=None)
    ap.add_argument("--http-parser", default=None)
    a = ap.parse_args()
    limits = (
        ("max_connections", a.max_connections),
        ("header_timeout", a.header_timeout),
        ("h11_max_incomplete_event_size", a.max_head),
        ("http_parser", a.http_parser),
    )
    extra = {k: v for k, v in limits if v is not None}
    server = build(a.max_in_flight, a.max_tasks, a.expose_errors)
    if a.port is None:
        server.run()
    else:
        server.run(transport="http", port=a.port, **extra)
