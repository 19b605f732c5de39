"""Legacy sessions shared by server processes on one Redis (issue 14): N sessions opened,
used and closed across P processes with no affinity (each request of a session goes to the
next process), then what Redis holds afterwards.

    python benchmarks/shared_sessions.py [--sessions 10000] [--processes 2] [--concurrency 32]

Each session: initialize, notifications/initialized, tools/call, DELETE, each on the next
process in turn. Prints errors (must be 0), requests/s, p99, Redis commands and round trips
per request, Redis memory and keys before and after (must be back to the baseline: the one
``epoch`` key). Needs ``redis-server`` on PATH and ``mcpio[http,redis]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support.http import free_port, wait_port  # noqa: E402

SERVER = """
import sys
from mcpio import Server
from mcpio._state import RedisState
server = Server("bench")

@server.tool
def add(a: int, b: int) -> int:
    return a + b

server.run("http", port=int(sys.argv[1]), state=RedisState(sys.argv[2]), max_sessions=1_000_000)
"""
VERSION = "2025-06-18"
ACCEPT = "application/json, text/event-stream"


async def one(c: httpx.AsyncClient, urls: itertools.cycle, latencies: list[float]) -> int:
    """One session's life; the number of failed requests."""
    errors = 0

    async def req(method: str, url: str, **kw: object) -> httpx.Response:
        t = time.perf_counter()
        r = await c.request(method, url, **kw)  # type: ignore[arg-type]
        latencies.append(time.perf_counter() - t)
        return r

    init = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    r = await req("POST", next(urls), headers={"accept": ACCEPT},
                  json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})  # fmt: skip
    if r.status_code != 200:
        return 4
    h = {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": VERSION, "accept": ACCEPT}
    r = await req("POST", next(urls), headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    errors += r.status_code != 202
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    r = await req("POST", next(urls), headers=h, json=call)
    errors += r.status_code != 200 or b'"result"' not in r.content
    r = await req("DELETE", next(urls), headers=h)
    errors += r.status_code != 200
    return errors


async def run(urls: list[str], sessions: int, concurrency: int) -> tuple[int, float, list[float]]:
    latencies: list[float] = []
    errors = 0
    todo = iter(range(sessions))
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=concurrency * 2)) as c:

        async def worker(k: int) -> None:
            nonlocal errors
            cycle = itertools.cycle(urls[k % len(urls) :] + urls[: k % len(urls)])
            for _ in todo:
                errors += await one(c, cycle, latencies)

        start = time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(concurrency)))
        elapsed = time.perf_counter() - start
    return errors, elapsed, latencies


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=32)
    opts = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mcpio-bench-")
    script = Path(tmp) / "server.py"
    script.write_text(SERVER)
    rport = free_port()
    exe = shutil.which("redis-server") or "redis-server"
    rproc = subprocess.Popen(
        [exe, "--port", str(rport), "--bind", "127.0.0.1", "--dir", tmp, "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    procs: list[subprocess.Popen] = []
    try:
        wait_port(rport, proc=rproc)
        url = f"redis://127.0.0.1:{rport}/0"
        db = redis.Redis(port=rport)
        ports = [free_port() for _ in range(opts.processes)]
        procs = [subprocess.Popen([sys.executable, str(script), str(p), url], stdin=subprocess.DEVNULL) for p in ports]
        for p, proc in zip(ports, procs, strict=True):
            wait_port(p, proc=proc)
        urls = [f"http://127.0.0.1:{p}/mcp" for p in ports]
        asyncio.run(run(urls, 50, 4))  # warm up (and the epoch key)
        time.sleep(1)  # the warm-up's last sessions end in the background
        keys0, mem0 = db.dbsize(), db.info("memory")["used_memory"]
        stats0 = db.info("stats")
        errors, elapsed, latencies = asyncio.run(run(urls, opts.sessions, opts.concurrency))
        stats1 = db.info("stats")
        deadline = time.monotonic() + 30
        while db.dbsize() != keys0 and time.monotonic() < deadline:
            time.sleep(0.1)
        keys1, mem1 = db.dbsize(), db.info("memory")["used_memory"]
        requests = len(latencies)
        latencies.sort()
        p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
        commands = stats1["total_commands_processed"] - stats0["total_commands_processed"]
        calls = stats1["total_net_input_bytes"] - stats0["total_net_input_bytes"]
        print(f"{opts.sessions} legacy sessions, {opts.processes} processes, no affinity, {opts.concurrency} at once\n")
        print("| errors | requests | requests/s | p99 ms | Redis commands / request | Redis bytes in / request |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        print(
            f"| {errors} | {requests} | {requests / elapsed:.0f} | {p99:.1f} | {commands / requests:.1f} "
            f"| {calls / requests:.0f} |"
        )
        print(f"\nRedis keys before / after: {keys0} / {keys1}; used_memory before / after: {mem0} / {mem1} bytes")
        print(
            f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (requests/s only comparable when quiet)"
        )
        db.close()
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)
        rproc.terminate()
        rproc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
