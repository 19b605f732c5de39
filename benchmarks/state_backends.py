"""The state backend's cost: legacy-era tools/call throughput and p99 with the in-process
state (the default) vs Redis (issue 14), one server process each, on this machine.

    python benchmarks/state_backends.py [--calls 1000] [--concurrency 8]

Needs ``redis-server`` on PATH (``bash scripts/setup-system redis-server``) and
``mcpio[http,redis]``. Two tools: ``add`` (its answer is the first thing sent, so a plain
JSON response: the event store is not involved) and ``step`` (one progress notification first,
so an SSE stream whose events go through the event store). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support.http import free_port, wait_port  # noqa: E402

SERVER = """
import sys
from mcpio import Context, Server
server = Server("bench")

@server.tool
def add(a: int, b: int) -> int:
    return a + b

@server.tool
async def step(ctx: Context) -> str:
    await ctx.report_progress(1, 2)
    return "done"

state = None
if len(sys.argv) > 2:
    from mcpio._state import RedisState
    state = RedisState(sys.argv[2])
server.run("http", port=int(sys.argv[1]), state=state)
"""
VERSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


async def session(c: httpx.AsyncClient, url: str) -> dict[str, str]:
    r = await c.post(
        url,
        headers={"accept": ACCEPT},
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        },
    )
    h = {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": VERSION, "accept": ACCEPT}
    await c.post(url, headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return h


async def load(url: str, tool: str, calls: int, concurrency: int) -> tuple[float, float]:
    args = {"a": 1, "b": 2} if tool == "add" else {}
    latencies: list[float] = []
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=concurrency * 2)) as c:
        heads = [await session(c, url) for _ in range(concurrency)]
        counter = iter(range(calls))

        async def worker(h: dict[str, str]) -> None:
            for i in counter:
                t = time.perf_counter()
                body = {
                    "jsonrpc": "2.0",
                    "id": i + 1,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": args, "_meta": {"progressToken": i}},
                }
                r = await c.post(url, headers=h, json=body)
                assert r.status_code == 200 and b'"result"' in r.content, r.text[:200]
                latencies.append(time.perf_counter() - t)

        start = time.perf_counter()
        await asyncio.gather(*(worker(h) for h in heads))
        elapsed = time.perf_counter() - start
        for h in heads:
            await c.delete(url, headers=h)
    latencies.sort()
    return calls / elapsed, latencies[int(len(latencies) * 0.99) - 1] * 1000


def commands(port: int) -> int:
    """Commands Redis has processed (those inside Lua scripts included), counting this one."""
    import redis

    client = redis.Redis(port=port)
    try:
        return int(client.info("stats")["total_commands_processed"])
    finally:
        client.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    opts = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mcpio-bench-")
    script = Path(tmp) / "server.py"
    script.write_text(SERVER)
    rport = free_port()
    redis = subprocess.Popen(
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(rport),
            "--bind",
            "127.0.0.1",
            "--dir",
            tmp,
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )
    rows = []
    try:
        wait_port(rport, proc=redis)
        for name, extra in (("memory", []), ("redis", [f"redis://127.0.0.1:{rport}/0"])):
            port = free_port()
            proc = subprocess.Popen(
                [sys.executable, str(script), str(port), *extra], env={**os.environ}, stdin=subprocess.DEVNULL
            )
            try:
                wait_port(port, proc=proc)
                url = f"http://127.0.0.1:{port}/mcp"
                for tool in ("add", "step"):
                    asyncio.run(load(url, tool, 100, opts.concurrency))  # warm up
                    before = commands(rport)
                    runs = [asyncio.run(load(url, tool, opts.calls, opts.concurrency)) for _ in range(opts.rounds)]
                    per_call = (commands(rport) - before - 1) / (opts.calls * opts.rounds)
                    rows.append(
                        (
                            name,
                            tool,
                            statistics.median(r[0] for r in runs),
                            statistics.median(r[1] for r in runs),
                            per_call,
                        )
                    )
            finally:
                proc.terminate()
                proc.wait(10)
    finally:
        redis.terminate()
        redis.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"legacy tools/call, 1 server process, {opts.concurrency} sessions in parallel, {opts.calls} calls x "
        f"{opts.rounds} rounds (medians)\n"
    )
    print("| state | tool | calls/s | p99 ms | vs memory | Redis commands per call |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    base = {tool: rps for name, tool, rps, _, _ in rows if name == "memory"}
    for name, tool, rps, p99, per_call in rows:
        shown = f"{per_call:.1f}" if name == "redis" else "-"
        print(f"| {name} | {tool} | {rps:.0f} | {p99:.1f} | {rps / base[tool]:.0%} | {shown} |")
    print(
        f"\nload average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
        "(calls/s are only comparable on a quiet machine; the command counts are exact)"
    )


if __name__ == "__main__":
    main()
