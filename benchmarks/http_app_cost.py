"""Where an HTTP request's server CPU goes inside the ASGI app: mcpio's ``http_app()`` and the
floor (``servers/http_floor.py``) driven in one process, without uvicorn or sockets.

    python benchmarks/http_app_cost.py                      # both apps, both eras, CPU µs/request
    python benchmarks/http_app_cost.py --profile legacy     # + cProfile of mcpio's loop thread
    python benchmarks/http_app_cost.py --apps mcpio --requests 20000 --profile modern --top 40

C concurrent "connections" (default 50) each send ``tools/call add`` N times in a row through
the app's ASGI interface, the way uvicorn calls it: one ``http.request`` message with the whole
body, then ``receive()`` waits until the response is complete (or forever while it is not) and
answers ``http.disconnect``; ``send`` collects the messages. Legacy: each connection opens its
session first (initialize + notifications/initialized, untimed). The figure is this process's
CPU time (every thread: mcpio's worker threads included) per request, so the difference between
the two apps is what mcpio adds over the floor on top of uvicorn + HTTP (which this leaves out).
Uses no private API; for profiling, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib.util
import io
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import http_common as hc  # noqa: E402

HOST = [(b"host", b"127.0.0.1:8000")]
ACCEPT = [(b"accept", b"application/json, text/event-stream"), (b"content-type", b"application/json")]


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(kind: str) -> Any:
    if kind == "floor":
        return _load("bench_http_floor", HERE / "servers" / "http_floor.py").app
    script = "mcpio_inline_server.py" if kind == "mcpio-inline" else "mcpio_server.py"
    return _load("bench_" + script[:-3], HERE / "servers" / script).server.http_app("/mcp")


def scope_of(method: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }


async def call(app: Any, method: str, headers: list[tuple[bytes, bytes]], body: bytes) -> tuple[int, dict, bytes]:
    """One request through the app as uvicorn makes it: (status, response headers, body)."""
    done = asyncio.Event()
    read = False
    out: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal read
        if not read:
            read = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        out.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    await app(scope_of(method, headers), receive, send)
    done.set()
    start = out[0]
    return start["status"], dict(start.get("headers") or ()), b"".join(m.get("body", b"") for m in out[1:])


async def client(app: Any, k: int, era: str, n: int, ready: Any, go: asyncio.Event) -> int:
    modern = era == "modern"
    if modern:
        headers = (
            HOST
            + ACCEPT
            + [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"), (b"mcp-name", b"add")]
        )
    else:
        status, h, _ = await call(app, "POST", HOST + ACCEPT, hc.initialize_body(0))
        sid = h[b"mcp-session-id"]
        headers = HOST + ACCEPT + [(b"mcp-session-id", sid), (b"mcp-protocol-version", b"2025-11-25")]
        status, _, _ = await call(app, "POST", headers, hc.INITIALIZED_BODY)
        assert status == 202, status
    ready()
    await go.wait()
    bad = 0
    for i in range(n):
        a = k * 1_000_000 + i
        status, h, body = await call(app, "POST", headers, hc.add_body(i + 1, a, 2, modern))
        ctype = h.get(b"content-type", b"").decode()
        if status != 200 or hc.add_value(hc.answer_of(ctype, body, i + 1)) != a + 2:
            bad += 1
    if not modern:
        await call(app, "DELETE", headers, b"")
    return bad


async def run(app: Any, era: str, clients: int, n: int, prof: cProfile.Profile | None) -> tuple[float, int]:
    started = asyncio.Event()
    # lifespan as uvicorn runs it
    lq: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await lq.put({"type": "lifespan.startup"})

    async def lsend(m: dict[str, Any]) -> None:
        if m["type"] == "lifespan.startup.complete":
            started.set()

    life = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}}, lq.get, lsend))
    await started.wait()
    waiting = clients
    all_ready = asyncio.Event()
    go = asyncio.Event()

    def ready() -> None:
        nonlocal waiting
        waiting -= 1
        if waiting == 0:
            all_ready.set()

    tasks = [asyncio.create_task(client(app, k, era, n, ready, go)) for k in range(clients)]
    await all_ready.wait()
    if prof is not None:
        prof.enable()
    c0 = time.process_time()
    go.set()
    bad = sum(await asyncio.gather(*tasks))
    c1 = time.process_time()
    if prof is not None:
        prof.disable()
    await lq.put({"type": "lifespan.shutdown"})
    await life
    return (c1 - c0) / (clients * n) * 1e6, bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", default="mcpio,floor", help="of mcpio, mcpio-inline (inline=True tools), floor")
    ap.add_argument("--eras", default="legacy,modern")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=6000, help="in all, per app and era (default 6000)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", choices=("legacy", "modern"), help="cProfile the first app in this era (one run)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--sort", default="tottime")
    args = ap.parse_args()
    apps = args.apps.split(",")
    n = max(1, args.requests // args.clients)
    if args.profile:
        prof = cProfile.Profile()
        cpu, bad = asyncio.run(run(build(apps[0]), args.profile, args.clients, n, prof))
        print(f"mcpio {args.profile}: {cpu:.1f} µs/request under the profiler; {bad} wrong answers")
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats(args.sort).print_stats(args.top)
        print(s.getvalue())
        return 0
    figs: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for era in args.eras.split(","):
            for kind in apps:
                cpu, bad = asyncio.run(run(build(kind), era, args.clients, n, None))
                if bad:
                    print(f"!! {kind} {era}: {bad} wrong answers", file=sys.stderr)
                figs.setdefault((kind, era), []).append(cpu)
    for era in args.eras.split(","):
        row = {kind: statistics.median(figs[(kind, era)]) for kind in apps}
        ratio = f"  mcpio/floor {row['mcpio'] / row['floor']:.2f}×" if "mcpio" in row and "floor" in row else ""
        print(f"{era:<7} " + "  ".join(f"{k} {v:6.1f} µs" for k, v in row.items()) + ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
