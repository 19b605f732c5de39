"""Soak test: memory and file descriptors stay flat under a long, mixed load (pain point #45).

    python benchmarks/soak.py                              # 1,000,000 calls + 10,000 cycles
    python benchmarks/soak.py --calls 20000 --cycles 500   # a quick look (seconds)
    python benchmarks/soak.py --json soak.json             # also write every sample as JSON
    python benchmarks/soak.py --proxy http --calls 100000  # one proxy route only (none: --proxy "")

Part 1, **stdio**: one server process (this file with ``--serve``) and one ``mcpio.Client``,
``--calls`` ``tools/call`` over the one connection, ``--window`` in flight at a time. The mix:
``add`` (a sync tool: a worker thread) and ``echo`` (async) with payloads of 0–8 KiB, and in
every thousand calls one with bad arguments, one whose tool raises, one unknown tool, one
cancelled by the caller 1 ms after it was sent, and a ping. Sampled ``--samples`` times: the
server's and the client's RSS and open fds; at the end, the requests the server still holds
as in flight (only the asking one may remain).

Part 1 again **through a proxy** (``--proxy stdio|http``, both by default): the same client and
mix, but the server is ``Server.proxy(upstream)`` in a process of its own (this file with
``--serve-proxy``) whose upstream is the part-1 server, spawned over stdio or served over
Streamable HTTP (``mcpio run -t http``). The ``add`` calls (half the mix) are plain ``tools/call``
requests and the rest are ``Client.call_tool``'s, with a progress token: the proxy relays both by
callback (the token's progress route opened and closed with each call); bad arguments and the
unknown tool are answered by the proxy's engine. Sampled and traced in the proxy's process (its
own ``proxy_memstat`` and ``proxy_in_flight`` tools).

Part 2, **connect/disconnect**: ``--cycles`` times ``async with mcpio.Client(server)`` (in
memory, same process): initialize, ``tools/list``, one call, close. Sampled likewise, plus
the server's live sessions, asyncio tasks and threads.

Both parts start ``tracemalloc`` after a warm-up (1% of the run, at least 2,000 calls / 100
cycles) in the process that serves, and print the 10 largest differences between the
snapshot at the start and at the end (a leak shows up there with the line that allocates it).
The verdict compares the first sample after warm-up with the last: RSS growth, fd change,
tracemalloc net growth. Linux only (``/proc``). Run it nice'd on a shared machine:
``nice -n 10 python benchmarks/soak.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shlex
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MiB = 1024 * 1024

sys.path.insert(1, str(ROOT / "src"))  # a checkout without an installed mcpio works too
from mcpio import Context  # noqa: E402 - module level: tool annotations are resolved here


# =============================================================================== the server
def make_server() -> Any:
    from mcpio import Server, ToolError

    server = Server("soak", version="1.0.0")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers (sync: runs in a worker thread)."""
        return a + b

    @server.tool
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool
    async def fail(why: str) -> str:
        raise ToolError(why)

    @server.tool
    async def nap(ms: float) -> str:
        await asyncio.sleep(ms / 1000)
        return "napped"

    @server.tool
    async def in_flight(ctx: Context) -> dict[str, int]:
        """Requests the session and its Connection hold as running (this one included)."""
        return {"session": ctx.session.in_flight(), "connection": ctx.session.connection.in_flight()}

    @server.tool
    def memstat(op: str) -> dict[str, Any]:
        """ "start": begin tracing (after warm-up); "diff": the top growth since then."""
        return trace(op)

    return server


def make_proxy(target: str) -> Any:
    """``Server.proxy(target)`` with two tools of its own, which measure the proxy's process."""
    from mcpio import Server

    proxy = Server.proxy(target, name="soak-proxy")

    @proxy.tool
    def proxy_memstat(op: str) -> dict[str, Any]:
        """As ``memstat``, in the proxy's process."""
        return trace(op)

    @proxy.tool
    async def proxy_in_flight(ctx: Context) -> dict[str, int]:
        """As ``in_flight``, for the proxy's session with this client."""
        return {"session": ctx.session.in_flight(), "connection": ctx.session.connection.in_flight()}

    return proxy


_BASELINE: list[Any] = []


def trace(op: str) -> dict[str, Any]:
    gc.collect()
    if op == "start":
        tracemalloc.start(1)  # one frame: "lineno" statistics need no more, and it costs far less
        _BASELINE[:] = [tracemalloc.take_snapshot()]
        return {"traced": tracemalloc.get_traced_memory()[0]}
    snap = tracemalloc.take_snapshot()
    filters = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    ]
    base = _BASELINE[0].filter_traces(filters)
    stats = snap.filter_traces(filters).compare_to(base, "lineno")
    net = sum(s.size_diff for s in stats)
    top = [
        {"where": str(s.traceback[0]), "size_diff": s.size_diff, "count_diff": s.count_diff}
        for s in sorted(stats, key=lambda s: -abs(s.size_diff))[:10]
    ]
    return {"net_bytes": net, "top": top, "traced": tracemalloc.get_traced_memory()[0]}


# =============================================================================== measuring
def rss(pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def fds(pid: int | str = "self") -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def verdict(samples: list[dict[str, Any]], key: str) -> dict[str, Any]:
    first, last = samples[1] if len(samples) > 1 else samples[0], samples[-1]
    return {
        "first": first[key],
        "last": last[key],
        "max": max(s[key] for s in samples[1:] or samples),
        "growth": last[key] - first[key],
    }


# =============================================================================== part 1
async def soak_stdio(
    calls: int, samples: int = 20, window: int = 32, echo: bool = True, via: str | None = None
) -> dict[str, Any]:
    """``calls`` tools/call over one stdio connection; samples of both processes. ``via``
    "stdio" or "http": the server is a proxy of the part-1 server reached that way (the
    samples and the trace are the proxy's)."""
    import mcpio

    with contextlib.ExitStack() as stack:  # the HTTP upstream, closed whatever happens
        serve = [sys.executable, __file__, "--serve"]
        if via == "http":
            sys.path.insert(0, str(Path(__file__).parent))
            from proxy_http import HttpServer, free_port

            port = free_port()
            argv = [sys.executable, "-m", "mcpio", "run", "-t", "http", f"{__file__}:make_server", "--port", str(port)]
            upstream = HttpServer(argv, port).ready()
            stack.callback(upstream.close)
            serve = [sys.executable, __file__, "--serve-proxy", upstream.url]
        elif via == "stdio":
            serve = [sys.executable, __file__, "--serve-proxy", shlex.join(serve)]
        elif via is not None:
            raise ValueError(f"via: 'stdio', 'http' or None, not {via!r}")
        own = "proxy_" if via else ""  # the measuring tools of the process sampled
        out: dict[str, Any] = {"calls": calls, "window": window, "via": via, "samples": [], "errors": 0}
        # Through a proxy, a 2025-era client: a 2026-07-28 client's calls are all awaited (what the
        # upstream asks becomes input_required rounds), a legacy client's plain calls are relayed.
        async with mcpio.Client(serve, timeout=60, **({"era": "legacy"} if via else {})) as client:
            pid = client._transport.pid
            n = 0
            errors = 0
            started = time.perf_counter()

            async def one(i: int) -> None:
                nonlocal errors
                kind = i % 1000
                if kind == 1:
                    r = await client.call_tool("add", {"a": "not a number", "b": 1})
                    errors += not r.get("isError")
                elif kind == 2:
                    r = await client.call_tool("fail", {"why": f"planned failure {i}"})
                    errors += not r.get("isError")
                elif kind == 3:
                    try:
                        await client.call_tool("no_such_tool")
                        errors += 1
                    except mcpio.MCPError:
                        pass
                elif kind == 4:
                    task = asyncio.ensure_future(client.call_tool("nap", {"ms": 50}))
                    await asyncio.sleep(0.001)
                    task.cancel()
                    try:
                        await task
                    except asyncio.CancelledError:
                        pass
                elif kind == 5:
                    await client.ping()
                elif i % 2 and via:  # no progress token: a proxy relays it by callback
                    r = await client.request("tools/call", {"name": "add", "arguments": {"a": i, "b": 1}})
                    errors += r["structuredContent"]["result"] != i + 1
                elif i % 2:
                    r = await client.call_tool("add", {"a": i, "b": 1})
                    errors += r["structuredContent"]["result"] != i + 1
                else:
                    text = "e" * (i % 8192)
                    r = await client.call_tool("echo", {"text": text})
                    errors += r["content"][0]["text"] != text

            async def run(count: int) -> None:
                nonlocal n
                end = n + count
                while n < end:
                    batch = range(n, min(n + window, end))
                    await asyncio.gather(*(one(i) for i in batch))
                    n = batch[-1] + 1

            def sample() -> None:
                s = {
                    "calls": n,
                    "seconds": round(time.perf_counter() - started, 2),
                    "server_rss": rss(pid),
                    "server_fds": fds(pid),
                    "client_rss": rss(),
                    "client_fds": fds(),
                }
                out["samples"].append(s)
                if echo:
                    print(
                        f"  {s['calls']:>9,} calls {s['seconds']:>8.1f} s   server RSS {s['server_rss'] / MiB:7.1f} MiB, "
                        f"{s['server_fds']} fds   client RSS {s['client_rss'] / MiB:7.1f} MiB, {s['client_fds']} fds",
                        flush=True,
                    )

            warm = max(2000, calls // 100)
            await run(min(warm, calls))
            sample()
            await client.call_tool(f"{own}memstat", {"op": "start"})
            step = max(1, (calls - n) // max(1, samples))
            while n < calls:
                await run(min(step, calls - n))
                sample()
            out["tracemalloc"] = (await client.call_tool(f"{own}memstat", {"op": "diff"}))["structuredContent"]
            out["pending_after"] = len(client.session._pending)
            out["in_flight_after"] = (await client.call_tool(f"{own}in_flight"))["structuredContent"]
            out["rate_per_s"] = round(calls / (time.perf_counter() - started))
        out["errors"] = errors
        out["exit_code"] = client._transport.returncode
        out["server_rss"] = verdict(out["samples"], "server_rss")
        out["server_fds"] = verdict(out["samples"], "server_fds")
        out["client_rss"] = verdict(out["samples"], "client_rss")
        out["client_fds"] = verdict(out["samples"], "client_fds")
        return out

    # =============================================================================== part 2


async def soak_cycles(cycles: int, samples: int = 20, echo: bool = True) -> dict[str, Any]:
    """``cycles`` in-memory connect/use/disconnect cycles against one Server, in this process."""
    import mcpio

    server = make_server()
    out: dict[str, Any] = {"cycles": cycles, "samples": [], "errors": 0}
    done = 0
    started = time.perf_counter()

    async def cycle(i: int) -> None:
        async with mcpio.Client(server) as client:
            tools = await client.list_tools()
            r = await client.call_tool("add", {"a": i, "b": 2})
            out["errors"] += len(tools) != len(server.registry.tools) or r["structuredContent"]["result"] != i + 2

    def sample() -> None:
        gc.collect()
        s = {
            "cycles": done,
            "seconds": round(time.perf_counter() - started, 2),
            "rss": rss(),
            "fds": fds(),
            "sessions": len(server.sessions_now()),
            "tasks": len(asyncio.all_tasks()),
            "threads": threading.active_count(),
        }
        out["samples"].append(s)
        if echo:
            print(
                f"  {s['cycles']:>9,} cycles {s['seconds']:>7.1f} s   RSS {s['rss'] / MiB:7.1f} MiB, {s['fds']} fds, "
                f"{s['sessions']} sessions, {s['tasks']} tasks, {s['threads']} threads",
                flush=True,
            )

    warm = min(cycles, max(100, cycles // 100))
    for _ in range(warm):
        await cycle(done)
        done += 1
    sample()
    trace("start")
    step = max(1, (cycles - done) // max(1, samples))
    while done < cycles:
        for _ in range(min(step, cycles - done)):
            await cycle(done)
            done += 1
        sample()
    out["tracemalloc"] = trace("diff")
    tracemalloc.stop()
    out["rate_per_s"] = round(cycles / (time.perf_counter() - started))
    out["rss"] = verdict(out["samples"], "rss")
    out["fds"] = verdict(out["samples"], "fds")
    out["sessions_after"] = out["samples"][-1]["sessions"]
    return out


# =============================================================================== main
def _print_trace(t: dict[str, Any]) -> None:
    print(
        f"  tracemalloc: net {t['net_bytes'] / 1024:+.1f} KiB between the first and the last sample; largest changes:"
    )
    for row in t["top"]:
        print(f"    {row['size_diff'] / 1024:+9.1f} KiB {row['count_diff']:+7d} blocks  {row['where']}")


def main() -> None:
    if "--serve" in sys.argv:
        make_server().run()
        return
    if "--serve-proxy" in sys.argv:
        make_proxy(sys.argv[sys.argv.index("--serve-proxy") + 1]).run()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--cycles", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--window", type=int, default=32, help="calls in flight at once (part 1)")
    parser.add_argument("--json", help="write the samples and the verdict here")
    parser.add_argument(
        "--proxy", default="stdio,http", help="part 1 through a proxy, over these upstream transports (comma-separated)"
    )
    args = parser.parse_args()
    report: dict[str, Any] = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    if args.calls:
        for via in [None, *(v for v in args.proxy.split(",") if v)]:
            where = f"through a proxy of a server over {via}" if via else "over one connection"
            print(f"stdio: {args.calls:,} tools/call {where}, {args.window} in flight")
            s = report[f"proxy_{via}" if via else "stdio"] = asyncio.run(
                soak_stdio(args.calls, args.samples, args.window, via=via)
            )
            server = "proxy" if via else "server"
            print(
                f"  {s['rate_per_s']:,} calls/s; wrong answers: {s['errors']}; exit code {s['exit_code']}; "
                f"held in flight at the end: {s['in_flight_after']} (1 = the asking call)"
            )
            print(
                f"  {server} RSS {s['server_rss']['first'] / MiB:.1f} -> {s['server_rss']['last'] / MiB:.1f} MiB "
                f"(max {s['server_rss']['max'] / MiB:.1f}); fds {s['server_fds']['first']} -> {s['server_fds']['last']}"
            )
            print(
                f"  client RSS {s['client_rss']['first'] / MiB:.1f} -> {s['client_rss']['last'] / MiB:.1f} MiB "
                f"(max {s['client_rss']['max'] / MiB:.1f}); fds {s['client_fds']['first']} -> {s['client_fds']['last']}"
            )
            _print_trace(s["tracemalloc"])
    if args.cycles:
        print(f"connect/disconnect: {args.cycles:,} in-memory Client(server) cycles")
        c = report["cycles"] = asyncio.run(soak_cycles(args.cycles, args.samples))
        print(
            f"  {c['rate_per_s']:,} cycles/s; wrong answers: {c['errors']}; live sessions after: {c['sessions_after']}"
        )
        print(
            f"  RSS {c['rss']['first'] / MiB:.1f} -> {c['rss']['last'] / MiB:.1f} MiB (max {c['rss']['max'] / MiB:.1f}); "
            f"fds {c['fds']['first']} -> {c['fds']['last']}"
        )
        _print_trace(c["tracemalloc"])
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
