"""HTTP/2 for ``mcpio run -t http --http2``: hypercorn against granian, side by side in one run
(``--servers hypercorn,granian,uvicorn`` adds uvicorn over HTTP/1.1, a connection per client:
its requests/s and latency are not comparable, the client being httpx's HTTP/1.1 pool).

    python benchmarks/http2_servers.py            # 3 rounds of 3 s per figure
    python benchmarks/http2_servers.py --quick    # 1 round of 1.5 s

Every server is ``benchmarks/servers/h2_server.py KIND`` in its own subprocess, serving the same
mcpio ``http_app()`` (tools ``add`` and ``ticks``) on 127.0.0.1: hypercorn and granian over h2c
(cleartext HTTP/2, prior knowledge) where all the client's requests share ONE connection as
concurrent streams; uvicorn over HTTP/1.1, one connection per concurrent request. The client is
httpx (with ``h2``), the same for every server; C tasks (default 50) send requests one after the
other for a fixed time after a warm-up, stateless 2026-07-28 era:

* ``call``: ``tools/call add`` answered as JSON;
* ``sse``: ``tools/call ticks`` (n=10, with a progressToken) answered as an SSE stream of 10
  progress notifications and the result: every event is counted and checked.

Figures per server and workload: requests (streams) completed per second, p99 latency, and
server CPU per request (utime + stime of the server process from ``/proc/PID/stat``, all its
threads, Rust ones included; steadier than wall time on a shared machine). Rounds are
interleaved (every round starts each server afresh, in a rotated order); each figure is the
median over rounds. Prints a Markdown table with ratios to hypercorn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
SERVER = HERE / "servers" / "h2_server.py"
KINDS = ("hypercorn", "granian", "uvicorn")
DEFAULT_KINDS = "hypercorn,granian"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcpio-h2-bench", "version": "1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
TICKS = 10


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def body(workload: str, id_: int) -> bytes:
    if workload == "call":
        params: dict[str, Any] = {"name": "add", "arguments": {"a": id_, "b": 2}, "_meta": META}
    else:
        params = {"name": "ticks", "arguments": {"n": TICKS}, "_meta": {**META, "progressToken": id_}}
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}).encode()


def headers(workload: str) -> dict[str, str]:
    return {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "add" if workload == "call" else "ticks",
    }


async def one(client: httpx.AsyncClient, url: str, workload: str, id_: int) -> None:
    async with client.stream("POST", url, content=body(workload, id_), headers=headers(workload)) as r:
        raw = await r.aread()
    if r.status_code != 200:
        raise RuntimeError(f"HTTP {r.status_code}: {raw[:200]!r}")
    if workload == "call":
        assert json.loads(raw)["result"]["structuredContent"]["result"] == id_ + 2, raw
        return
    events = [json.loads(line[5:]) for line in raw.decode().splitlines() if line.startswith("data:")]
    progress = [e for e in events if e.get("method") == "notifications/progress"]
    assert len(progress) == TICKS and events[-1]["result"]["structuredContent"]["result"] == TICKS, raw


async def load(kind: str, port: int, pid: int, workload: str, clients: int, warmup: float, duration: float) -> dict:
    url = f"http://127.0.0.1:{port}/mcp"
    h2 = kind != "uvicorn"  # ONE connection, many streams; uvicorn: a connection per client
    limits = httpx.Limits(max_connections=1 if h2 else clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(http1=not h2, http2=h2, limits=limits, timeout=30) as client:
        latencies: list[float] = []
        state = {"measure": False, "stop": False, "errors": 0}
        counter = iter(range(1, 10**9))

        async def worker() -> None:
            while not state["stop"]:
                t0 = time.perf_counter()
                try:
                    await one(client, url, workload, next(counter))
                except Exception as exc:
                    state["errors"] += 1
                    if state["errors"] == 1:
                        print(f"{kind} {workload}: {type(exc).__name__}: {exc}", file=sys.stderr)
                    continue
                if state["measure"]:
                    latencies.append(time.perf_counter() - t0)

        tasks = [asyncio.create_task(worker()) for _ in range(clients)]
        await asyncio.sleep(warmup)
        cpu0, t0 = cpu_seconds(pid), time.perf_counter()
        state["measure"] = True
        await asyncio.sleep(duration)
        state["measure"] = False
        cpu1, t1 = cpu_seconds(pid), time.perf_counter()
        state["stop"] = True
        await asyncio.gather(*tasks)
    n = len(latencies)
    latencies.sort()
    return {
        "rps": n / (t1 - t0),
        "p99_ms": latencies[min(n - 1, int(n * 0.99))] * 1000 if n else None,
        "cpu_us": (cpu1 - cpu0) / n * 1e6 if n else None,
        "errors": state["errors"],
    }


def start(kind: str) -> tuple[subprocess.Popen, int]:
    p = subprocess.Popen([sys.executable, str(SERVER), kind], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert p.stdout is not None
    port = int(p.stdout.readline().split()[1])
    deadline = time.monotonic() + 30
    while True:  # answered once the app's lifespan has run
        try:
            httpx.post(f"http://127.0.0.1:{port}/mcp", content=b"{}", timeout=2)
            return p, port
        except httpx.TransportError:
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{kind} did not start") from None
            time.sleep(0.05)


def stop(p: subprocess.Popen) -> None:
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 round of 1.5 s per figure")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--servers", default=DEFAULT_KINDS, help="comma-separated, of: " + ", ".join(KINDS))
    args = ap.parse_args()
    rounds, duration = (1, 1.5) if args.quick else (args.rounds, args.duration)
    kinds = [k for k in args.servers.split(",") if k]
    results: dict[tuple[str, str], list[dict]] = {}
    for r in range(rounds):
        order = kinds[r % len(kinds) :] + kinds[: r % len(kinds)]
        for kind in order:
            p, port = start(kind)
            try:
                for workload in ("call", "sse"):
                    fig = asyncio.run(load(kind, port, p.pid, workload, args.clients, 0.5, duration))
                    results.setdefault((kind, workload), []).append(fig)
            finally:
                stop(p)
    base = {w: results.get((kinds[0], w)) for w in ("call", "sse")}

    def med(rows: list[dict] | None, key: str) -> float | None:
        values = [row[key] for row in rows or [] if row[key] is not None]
        return statistics.median(values) if values else None

    print(
        f"\n{args.clients} concurrent clients, {rounds} round(s) of {duration:g} s; h2c over one connection "
        "(uvicorn: HTTP/1.1, a connection per client)\n"
    )
    print("| server | workload | requests/s | p99 ms | server CPU µs/request | errors | CPU vs first |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for workload in ("call", "sse"):
        for kind in kinds:
            rows = results[(kind, workload)]
            cpu, base_cpu = med(rows, "cpu_us"), med(base[workload], "cpu_us")
            ratio = f"{cpu / base_cpu:.2f}×" if cpu and base_cpu else "-"
            print(
                f"| {kind} | {workload} | {med(rows, 'rps') or 0:.0f} | {med(rows, 'p99_ms') or 0:.1f} | "
                f"{cpu or 0:.0f} | {sum(r['errors'] for r in rows)} | {ratio} |"
            )


if __name__ == "__main__":
    main()
