#!/usr/bin/env python3
"""What a server generated from an OpenAPI document costs: a tool call through it against the same
HTTP request made directly with httpx, and the time to convert the largest real document.

    python benchmarks/openapi_bench.py            # ~1 min; prints a Markdown table
    python benchmarks/openapi_bench.py --quick    # a few seconds (the test suite's smoke run)
    python benchmarks/openapi_bench.py --rounds 4 --calls 100   # a shorter full run

The API is a raw ASGI app served by uvicorn in its own process on 127.0.0.1 (``GET /pets/{pet_id}``,
a small JSON object). Measured, sequential calls, p50 and p99 of every call after a warm-up, the
rounds of each way interleaved:

* ``httpx direct``: ``AsyncClient.get`` of the URL: the floor;
* ``mcpio stdio``: ``mcpio run --openapi URL/openapi.json`` as a subprocess, ``call_tool`` through
  the mcpio Client over stdio (what a host does); the target is at most 1.5x the floor's p50;
* ``mcpio in-process``: ``Server.from_openapi`` driven by ``Client(server)`` (the in-memory transport);
* ``FastMCP in-process``: ``FastMCP.from_openapi`` driven by its own in-memory client, when
  ``fastmcp`` is installed (scripts/bench's .venv-bench has it): the peer figure.

Beside latency, the CPU time this process spends per call (``time.process_time``): on a shared
machine the wall clock also measures the other processes, the CPU time does not. For the
in-process ways it is the whole MCP layer (client, server and the httpx request); for stdio it
is the client's side only.

Conversion: ``Server.from_openapi`` of the largest document at hand (GitHub's REST API, 1,200+
operations, from .cache/openapi-specs: scripts/setup-peers), loading the JSON included; the target
is at most 1 s. FastMCP's ``from_openapi`` of the same document beside it (full runs only).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GITHUB = ROOT / ".cache" / "openapi-specs" / "api.github.com.json"
PET = {"id": 1, "name": "Rex", "kind": "dog", "age": 3, "tags": ["good"]}


def document(base: str) -> dict[str, Any]:
    pet = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "name": {"type": "string"},
            "kind": {"type": "string", "enum": ["cat", "dog"]},
            "age": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["id", "name"],
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "bench pets", "version": "1.0"},
        "servers": [{"url": base}],
        "paths": {
            "/pets/{pet_id}": {
                "get": {
                    "operationId": "get_pet",
                    "summary": "Get a pet",
                    "parameters": [{"name": "pet_id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                    "responses": {"200": {"description": "the pet", "content": {"application/json": {"schema": pet}}}},
                }
            }
        },
    }


async def api(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The API: the pet as JSON, and the document at /openapi.json (a raw ASGI app: no framework)."""
    if scope["type"] != "http":
        return
    if scope["path"] == "/openapi.json":
        host = dict(scope["headers"]).get(b"host", b"127.0.0.1").decode()
        body = json.dumps(document(f"http://{host}")).encode()
    else:
        body = json.dumps({**PET, "id": int(scope["path"].rsplit("/", 1)[-1])}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def serve(port: int) -> None:
    import uvicorn

    uvicorn.run(api, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[Any]) -> None:
    import socket

    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"the API process exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit("the API process did not listen within 30 s") from None
            time.sleep(0.05)


async def timed(samples: list[float], n: int, call: Any) -> None:
    for _ in range(n):
        t = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - t)


async def measure(base: str, rounds: int, per_round: int) -> dict[str, list[float]]:
    import httpx

    from mcpio import Client, Server

    samples: dict[str, list[float]] = {}
    url = f"{base}/pets/1"
    ways: dict[str, Any] = {}
    async with httpx.AsyncClient() as direct:

        async def http_direct() -> None:
            r = await direct.get(url)
            assert r.status_code == 200 and r.json()["id"] == 1

        ways["httpx direct"] = http_direct
        stdio = Client([sys.executable, "-m", "mcpio", "run", "--openapi", f"{base}/openapi.json"], timeout=30)
        inproc = Client(await Server.from_openapi_async(f"{base}/openapi.json"))
        async with stdio, inproc:

            async def over_stdio() -> None:
                r = await stdio.call_tool("get_pet", {"pet_id": 1})
                assert r["structuredContent"]["id"] == 1

            async def in_process() -> None:
                r = await inproc.call_tool("get_pet", {"pet_id": 1})
                assert r["structuredContent"]["id"] == 1

            ways["mcpio stdio"] = over_stdio
            ways["mcpio in-process"] = in_process
            peer = fastmcp_client(base)
            if peer is not None:
                async with peer:

                    async def fastmcp_call() -> None:
                        r = await peer.call_tool("get_pet", {"pet_id": 1})
                        assert r.structured_content["id"] == 1

                    ways["FastMCP in-process"] = fastmcp_call
                    await run_rounds(ways, samples, rounds, per_round)
            else:
                await run_rounds(ways, samples, rounds, per_round)
    return samples


async def run_rounds(ways: dict[str, Any], samples: dict[str, list[float]], rounds: int, per_round: int) -> None:
    for call in ways.values():  # warm-up: connections, caches, the first thread hand-offs
        await timed([], max(5, per_round // 5), call)
    for _ in range(rounds):
        for name, call in ways.items():
            c = time.process_time()
            await timed(samples.setdefault(name, []), per_round, call)
            samples.setdefault(f"cpu:{name}", []).append((time.process_time() - c) / per_round)


def fastmcp_client(base: str) -> Any:
    try:
        import httpx
        from fastmcp import Client as FastClient
        from fastmcp import FastMCP
    except ImportError:
        return None
    mcp = FastMCP.from_openapi(openapi_spec=document(base), client=httpx.AsyncClient(base_url=base), name="bench")
    return FastClient(mcp)


def convert_largest(runs: int, peer: bool) -> list[list[str]]:
    from mcpio import Server

    if not GITHUB.is_file():
        return [["convert GitHub's document", "missing: run scripts/setup-peers", "", ""]]
    rows = []
    walls, cpus = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        server = Server.from_openapi(str(GITHUB))
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    n = len(server.registry.tools)
    cpu = min(cpus)  # CPU time: on a shared machine the wall clock measures the other processes too
    rows.append(
        [
            f"mcpio Server.from_openapi, GitHub ({n} tools, JSON load included)",
            f"{cpu * 1000:.0f} ms CPU ({min(walls) * 1000:.0f} ms wall)",
            "≤ 1000 ms",
            "met" if cpu <= 1 else "NOT met",
        ]
    )
    if peer:
        try:
            import httpx
            from fastmcp import FastMCP
        except ImportError:
            return rows
        t, c = time.perf_counter(), time.process_time()
        with open(GITHUB) as f:
            doc = json.load(f)
        FastMCP.from_openapi(openapi_spec=doc, client=httpx.AsyncClient(base_url="https://api.github.com"))
        cpu, wall = time.process_time() - c, time.perf_counter() - t
        rows.append(
            [
                "FastMCP.from_openapi, GitHub (JSON load included)",
                f"{cpu * 1000:.0f} ms CPU ({wall * 1000:.0f} ms wall)",
                "",
                "peer",
            ]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a few seconds: the smoke run of tests/bench")
    parser.add_argument("--rounds", type=int, help="rounds of each way, interleaved (default 10; quick 2)")
    parser.add_argument("--calls", type=int, help="calls of each way per round (default 200; quick 20)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    rounds, per_round = (2, 20) if args.quick else (10, 200)
    rounds, per_round = args.rounds or rounds, args.calls or per_round
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port)], env={**os.environ})
    try:
        wait_port(port, proc)
        samples = asyncio.run(measure(f"http://127.0.0.1:{port}", rounds, per_round))
    finally:
        proc.terminate()
        proc.wait(10)
    floor = statistics.median(samples["httpx direct"])
    cpu_floor = statistics.median(samples["cpu:httpx direct"])
    print(
        f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (latency on a busy machine measures it too)"
    )
    print("| way | p50 | p99 | p50 / httpx direct | target | CPU per call in this process |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, s in samples.items():
        if name.startswith("cpu:"):
            continue
        s.sort()
        p50, p99 = statistics.median(s), s[min(len(s) - 1, int(len(s) * 0.99))]
        target = "≤ 1.5x: " + ("met" if p50 / floor <= 1.5 else "NOT met") if name == "mcpio stdio" else ""
        cpu = statistics.median(samples[f"cpu:{name}"])
        where = " (the client only: the server is its own process)" if name == "mcpio stdio" else ""
        print(
            f"| {name} | {p50 * 1e6:.0f} µs | {p99 * 1e6:.0f} µs | {p50 / floor:.2f}x | {target} "
            f"| {cpu * 1e6:.0f} µs ({cpu / cpu_floor:.2f}x){where} |"
        )
    print()
    print("| conversion | time | target | |")
    print("| --- | --- | --- | --- |")
    for row in convert_largest(1 if args.quick else 5, peer=not args.quick):
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
