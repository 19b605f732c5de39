"""Serve one of the benchmark servers (benchmarks/servers/*_server.py) over Streamable HTTP.

    python benchmarks/http_server.py mcpio [--port 0] [--max-sessions N] [--session-timeout S]

Used by benchmarks/http_sessions.py and benchmarks/http_load.py, one subprocess per server. It
imports the stdio benchmark's server module (so the tools are the very same ``add`` and
``echo``), builds the framework's own Streamable HTTP ASGI app with its defaults, and serves it
with uvicorn, configured alike for every framework (``lifespan="on"``, log level warning,
``timeout_graceful_shutdown=5``; uvicorn picks its HTTP parser and loop as it would for the
framework's own ``run``):

* ``mcpio``: ``server.http_app("/mcp")`` (what ``server.run("http")`` serves); ``mcpio-inline``:
  the same with ``inline=True`` tools (no worker-thread hop: what HTTP itself costs);
* ``mcp``: the official SDK's ``MCPServer.streamable_http_app()`` (defaults: stateful, SSE
  answers); ``mcp-json``: the same with ``json_response=True``;
* ``fastmcp``: ``FastMCP.http_app()`` (defaults);
* ``floor``: ``servers/http_floor.py``, a hand-written ASGI app answering the same requests with
  msgspec and no MCP library (the cost of uvicorn + HTTP + JSON alone).

``--hold-tool`` also registers ``hold_add(a, b, ms)`` (an ``async def`` that sleeps ``ms``
milliseconds, then answers ``a + b``): http_sessions.py holds N modern requests in flight with it.

It binds 127.0.0.1 on the given port (0: an ephemeral one), prints ``PORT <n>`` on stdout once
the socket listens, and serves until SIGTERM/SIGINT. ``GET /_bench/stats`` (outside the MCP
endpoint) answers JSON for the harness: ``sessions`` (live legacy sessions: mcpio's
``app.sessions``; for the peers the SDK session manager's private ``_server_instances``),
``tasks`` (``asyncio.all_tasks()``), ``threads``, ``session_objects`` (mcpio: LegacyTransport
objects still alive after a full collection, ``?gc=1`` only), ``rss_kib`` / ``hwm_kib``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import json
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCRIPTS = {
    "mcpio": HERE / "servers" / "mcpio_server.py",
    "mcpio-inline": HERE / "servers" / "mcpio_inline_server.py",
    "mcp": HERE / "servers" / "mcp_server.py",
    "mcp-json": HERE / "servers" / "mcp_server.py",
    "fastmcp": HERE / "servers" / "fastmcp_server.py",
    "floor": HERE / "servers" / "http_floor.py",
}
STATS_PATH = "/_bench/stats"


def load(kind: str) -> Any:
    script = SCRIPTS[kind]
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


async def hold_add(a: int, b: int, ms: int) -> int:
    """Wait ``ms`` milliseconds, then add two integers."""
    await asyncio.sleep(ms / 1000)
    return a + b


def build(kind: str, args: argparse.Namespace) -> tuple[Any, Any]:
    """(the ASGI app to serve, a function giving the live legacy-session count or None)."""
    if kind == "floor":  # a hand-written ASGI app, no MCP library (servers/http_floor.py)
        spec = importlib.util.spec_from_file_location("bench_http_floor", SCRIPTS["floor"])
        assert spec is not None and spec.loader is not None
        floor = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(floor)
        return floor.app, lambda: len(floor.SESSIONS)
    server = load(kind)
    if args.hold_tool:  # http_sessions: requests that stay in flight, to hold N of them at once
        if kind in ("mcp", "mcp-json"):
            server.tool()(hold_add)
        else:
            server.tool(hold_add)
    if kind in ("mcpio", "mcpio-inline"):
        options: dict[str, Any] = {}
        if args.max_sessions is not None:
            options["max_sessions"] = args.max_sessions
        if args.session_timeout is not None:
            options["session_timeout"] = args.session_timeout
        app = server.http_app("/mcp", **options)
        return app, lambda: len(app.sessions)
    if kind in ("mcp", "mcp-json"):
        app = server.streamable_http_app(json_response=kind == "mcp-json")
        low = server._lowlevel_server

        def count() -> int | None:
            manager = getattr(low, "_session_manager", None)
            instances = getattr(manager, "_server_instances", None)  # private: for information only
            return len(instances) if instances is not None else None

        return app, count
    if kind == "fastmcp":
        app = server.http_app()

        def count() -> int | None:
            for route in getattr(app, "routes", []):
                manager = getattr(getattr(route, "endpoint", None), "session_manager", None)
                instances = getattr(manager, "_server_instances", None)  # private: for information only
                if instances is not None:
                    return len(instances)
            return None

        return app, count
    raise SystemExit(f"unknown server {kind!r}; one of {', '.join(SCRIPTS)}")


def _proc_status() -> dict[str, int]:
    out = {}
    try:
        with open("/proc/self/status") as f:
            for row in f:
                k, _, v = row.partition(":")
                if k in ("VmHWM", "VmRSS"):
                    out["hwm_kib" if k == "VmHWM" else "rss_kib"] = int(v.split()[0])
    except OSError:
        pass
    return out


def with_stats(app: Any, count: Any, kind: str) -> Any:
    async def wrapped(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("path") == STATS_PATH:
            stats: dict[str, Any] = {
                "server": kind,
                "sessions": count(),
                "tasks": len(asyncio.all_tasks()),
                "threads": threading.active_count(),
                **_proc_status(),
            }
            if kind == "mcpio":
                stats["modern_in_flight"] = len(getattr(app, "_requests", ()))  # private: for information only
            if b"gc=1" in scope.get("query_string", b""):
                gc.collect()
                if kind == "mcpio":
                    from mcpio._transports._http_legacy import LegacyTransport

                    stats["session_objects"] = sum(1 for o in gc.get_objects() if type(o) is LegacyTransport)
            body = json.dumps(stats).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return wrapped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("server", choices=sorted(SCRIPTS))
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--max-sessions", type=int, help="mcpio: http_app(max_sessions=...) (default: mcpio's own)")
    ap.add_argument("--session-timeout", type=float, help="mcpio: http_app(session_timeout=...) (default: mcpio's own)")
    ap.add_argument(
        "--hold-tool", action="store_true", help="also register hold_add(a, b, ms) (async: sleeps ms, returns a+b)"
    )
    ap.add_argument("--backlog", type=int, default=2048)
    args = ap.parse_args()
    os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
    import uvicorn

    app, count = build(args.server, args)
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say so (accepted ones inherit
    # it); with proto 0, Nagle + delayed ACKs add ~40 ms to every response uvicorn writes in two parts.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(args.backlog)
    config = uvicorn.Config(
        with_stats(app, count, args.server),
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
        backlog=args.backlog,
    )
    server = uvicorn.Server(config)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    sys.exit(main())
