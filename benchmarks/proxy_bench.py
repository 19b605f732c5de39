"""Proxies and gateways over stdio (issue 35): the same ``add`` tool called directly, through
``mcpio run "COMMAND"`` (a proxy: one hop), through ``mcpio run gateway.json`` (a gateway
mounting the server), and through FastMCP's proxy when FastMCP is installed (``scripts/bench``'s
``.venv-bench`` has it), side by side in one run; then a gateway over 10 upstreams: its memory
and its cold start against the upstreams' own; then, where a peer bridge is installed
(``mcp-proxy`` from PyPI, ``supergateway`` from npm), the same call through ``mcpio run URL`` and
through each peer, all bridging stdio to one Streamable HTTP server, with mcpio's throughput
ratio to each.

    python benchmarks/proxy_bench.py            # ~1 min on 2 cores
    python benchmarks/proxy_bench.py --quick    # a few seconds (tests/bench runs it)

Targets (printed with their ratios): one proxy hop adds at most the direct call's p50 (p50
through it ≤ 2× direct); ≥ 5× the throughput of every peer proxy; RSS of a gateway over 10
upstreams, its upstreams included, ≤ 1.5× what those upstreams use alone; a gateway's cold start
to its first answer ≤ the slowest upstream's cold start + 50 ms (the upstreams start in
parallel). The client is the standard library: raw pipes, ``select``; JSON parsing outside the
timed sections. No timing is asserted anywhere: the smoke test checks answers and the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "servers" / "mcpio_server.py"
PY = sys.executable
SCRUBBED = {"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONDEVMODE", "PYTHONASYNCIODEBUG", "MCPIO_TRACE"}


class Server:
    """One stdio MCP server on pipes."""

    def __init__(self, argv: list[str]) -> None:
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
        env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
        self.err = tempfile.TemporaryFile()
        self.started = time.perf_counter()
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=env, bufsize=0
        )
        self.buf = bytearray()
        self.early: dict[Any, dict[str, Any]] = {}  # answers read before they were waited for

    def send(self, msg: dict[str, Any]) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")

    def line(self, timeout: float = 60.0) -> bytes:
        assert self.p.stdout is not None
        deadline = time.perf_counter() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.perf_counter()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                raise TimeoutError(f"no answer within {timeout} s{self.tail()}")
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError(f"the server closed its stdout{self.tail()}")
            self.buf += chunk
        nl = self.buf.index(b"\n")
        out = bytes(self.buf[:nl])
        del self.buf[: nl + 1]
        return out

    def answer(self, id_: int) -> dict[str, Any]:
        """The answer to request ``id_`` (answers to pipelined requests may come in any order)."""
        while id_ not in self.early:
            msg = json.loads(self.line())
            if "result" in msg or "error" in msg:
                self.early[msg.get("id")] = msg
        return self.early.pop(id_)

    def initialize(self) -> float:
        """Send initialize; the seconds from spawn to its answer."""
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "b", "version": "1"},
                },
            }
        )
        self.answer(0)
        took = time.perf_counter() - self.started
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return took

    def rss_kib(self) -> int:
        """Resident memory of this process and every process below it."""
        return sum(_rss(pid) for pid in {self.p.pid, *_descendants(self.p.pid)})

    def tail(self) -> str:
        self.err.seek(0)
        text = self.err.read().decode(errors="replace").strip()
        return f"; its stderr ends: {text[-500:]}" if text else ""

    def close(self) -> None:
        assert self.p.stdin is not None
        self.p.stdin.close()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def call(name: str, id_: int, a: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": name, "arguments": {"a": a, "b": 2}},
    }


def latency_and_throughput(argv: list[str], tool: str, calls: int, pipelined: int) -> dict[str, Any]:
    s = Server(argv)
    try:
        s.initialize()
        for i in range(20):  # warm-up: every lazy import and cache on the way
            s.send(call(tool, 1000 + i, i))
            s.answer(1000 + i)
        times = []
        for i in range(calls):
            t0 = time.perf_counter()
            s.send(call(tool, i + 1, i))
            msg = s.answer(i + 1)
            times.append(time.perf_counter() - t0)
            assert msg["result"]["content"][0]["text"] == str(i + 2), msg
        t0 = time.perf_counter()
        for i in range(pipelined):
            s.send(call(tool, 100_000 + i, i))
        for i in range(pipelined):
            assert s.answer(100_000 + i)["result"]["content"][0]["text"] == str(i + 2)
        elapsed = time.perf_counter() - t0
        return {"p50_us": statistics.median(times) * 1e6, "calls_per_s": pipelined / elapsed}
    finally:
        s.close()


def fastmcp_proxy_script(folder: Path) -> Path | None:
    """A FastMCP proxy of the same upstream, if FastMCP is importable here."""
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        return None
    script = folder / "fastmcp_proxy.py"
    script.write_text(
        "import sys\n"
        "from fastmcp import FastMCP\n"
        "config = {'mcpServers': {'s': {'command': sys.executable, 'args': [" + repr(str(UPSTREAM)) + "]}}}\n"
        "FastMCP.as_proxy(config, name='proxy').run(show_banner=False)\n"
    )
    return script


def bridge_peers() -> dict[str, list[str]]:
    """The stdio-to-Streamable-HTTP bridges installed here, by name, as argv prefixes (the URL
    is appended): ``mcp-proxy`` (PyPI, beside this interpreter or on PATH; benchmarks/install_peers.py
    installs it) and ``supergateway`` (npm, in .cache/peers when scripts/setup-peers has it)."""
    found: dict[str, list[str]] = {}
    beside = Path(sys.executable).parent / "mcp-proxy"
    mcp_proxy = str(beside) if beside.exists() else shutil.which("mcp-proxy")
    if mcp_proxy:
        found["mcp-proxy bridge"] = [mcp_proxy, "--transport", "streamablehttp"]
    npm_bin = HERE.parent / ".cache" / "peers" / "node_modules" / ".bin" / "supergateway"
    supergateway = str(npm_bin) if npm_bin.exists() else shutil.which("supergateway")
    if supergateway:
        found["supergateway bridge"] = [supergateway, "--streamableHttp"]
    return found


def bridges(calls: int, pipelined: int) -> dict[str, dict[str, Any]]:
    """The same call through ``mcpio run URL`` and each peer bridge, all in front of one
    Streamable HTTP server (``mcpio run UPSTREAM -t http``); nothing when no peer is installed."""
    peers = bridge_peers()
    if not peers:
        return {}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    http = subprocess.Popen(
        [PY, "-m", "mcpio", "run", str(UPSTREAM), "-t", "http", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.perf_counter() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.perf_counter() > deadline or http.poll() is not None:
                    raise RuntimeError("the Streamable HTTP upstream did not start") from None
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
        routes = {"mcpio bridge": [PY, "-m", "mcpio", "run", url], **{n: [*a, url] for n, a in peers.items()}}
        return {name: latency_and_throughput(argv, "add", calls, pipelined) for name, argv in routes.items()}
    finally:
        http.terminate()
        http.wait(10)


def gateway_config(folder: Path, n: int) -> Path:
    path = folder / f"gateway{n}.json"
    entries = {f"s{i}": {"command": PY, "args": [str(UPSTREAM)]} for i in range(n)}
    path.write_text(json.dumps({"mcpServers": entries}))
    return path


def fleet(folder: Path, n: int) -> dict[str, Any]:
    """A gateway over ``n`` upstreams against the upstreams alone: memory and cold start, to the
    ``initialize`` answer and to the first ``tools/list`` answer (a host's first useful one: for
    the gateway, with every upstream's tools), each timed from the spawn."""
    alone = [Server([PY, str(UPSTREAM)]) for _ in range(n)]
    try:
        starts, lists = [], []
        for s in alone:  # each started alone (one at a time): its own cold start
            starts.append(s.initialize())
            s.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})  # like for like: as under the gateway
            s.answer(7)
            lists.append(time.perf_counter() - s.started)
        rss_alone = sum(s.rss_kib() for s in alone)
    finally:
        for s in alone:
            s.close()
    g = Server([PY, "-m", "mcpio", "run", str(gateway_config(folder, n))])
    try:
        cold = g.initialize()
        g.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
        tools = g.answer(7)["result"]["tools"]
        cold_list = time.perf_counter() - g.started
        assert len(tools) >= 2 * n, f"the gateway lists {len(tools)} tools for {n} upstreams{g.tail()}"
        rss_gateway = g.rss_kib()
    finally:
        g.close()
    return {
        "upstreams": n,
        "rss_alone_kib": rss_alone,
        "rss_gateway_kib": rss_gateway,
        "rss_ratio": rss_gateway / rss_alone,
        "slowest_upstream_cold_ms": max(starts) * 1e3,
        "gateway_cold_ms": cold * 1e3,
        "slowest_upstream_list_ms": max(lists) * 1e3,
        "gateway_list_ms": cold_list * 1e3,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", metavar="PATH", help="write the results here")
    args = ap.parse_args(argv)
    calls, pipelined, rounds, n = (50, 100, 1, 3) if args.quick else (400, 2000, args.rounds, 10)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        routes: dict[str, tuple[list[str], str]] = {
            "direct": ([PY, str(UPSTREAM)], "add"),
            "mcpio proxy": ([PY, "-m", "mcpio", "run", f"{PY} {UPSTREAM}"], "add"),
            "mcpio gateway": ([PY, "-m", "mcpio", "run", str(gateway_config(folder, 1))], "s0__add"),
        }
        peer = fastmcp_proxy_script(folder)
        if peer is not None:
            routes["fastmcp proxy"] = ([PY, str(peer)], "add")
        measured: dict[str, list[dict[str, Any]]] = {name: [] for name in routes}
        for r in range(rounds):  # routes in a rotated order each round: a noisy minute hurts all alike
            order = list(routes)[r % len(routes) :] + list(routes)[: r % len(routes)]
            for name in order:
                route, tool = routes[name]
                measured[name].append(latency_and_throughput(route, tool, calls, pipelined))
        medians = {
            name: {key: statistics.median(m[key] for m in runs) for key in runs[0]} for name, runs in measured.items()
        }
        memory = fleet(folder, n)
    bridged = bridges(calls, pipelined)
    direct = medians["direct"]
    targets = {
        "proxy p50 <= 2x direct": medians["mcpio proxy"]["p50_us"] / direct["p50_us"],
        "gateway p50 <= 2x direct": medians["mcpio gateway"]["p50_us"] / direct["p50_us"],
        f"gateway RSS over {n} upstreams <= 1.5x theirs": memory["rss_ratio"],
        "gateway cold start <= slowest upstream + 50 ms": memory["gateway_cold_ms"]
        - memory["slowest_upstream_cold_ms"],
        "gateway cold start to tools/list <= slowest upstream's + 50 ms": memory["gateway_list_ms"]
        - memory["slowest_upstream_list_ms"],
    }
    if "fastmcp proxy" in medians:
        targets["proxy throughput >= 5x fastmcp proxy"] = (
            medians["mcpio proxy"]["calls_per_s"] / medians["fastmcp proxy"]["calls_per_s"]
        )
    met = {
        name: (
            value <= 50
            if "cold start" in name
            else value >= 5
            if ">=" in name
            else value <= float(name.split("<= ")[1].split("x")[0])
        )
        for name, value in targets.items()
    }
    print(f"{'route':<16}{'p50 (us)':>10}{'calls/s':>10}")
    for name, m in medians.items():
        print(f"{name:<16}{m['p50_us']:>10.0f}{m['calls_per_s']:>10.0f}")
    print(
        f"\ngateway over {n} upstreams: RSS {memory['rss_gateway_kib'] / 1024:.0f} MiB vs {memory['rss_alone_kib'] / 1024:.0f} MiB "
        f"alone; cold start {memory['gateway_cold_ms']:.0f} ms vs the slowest upstream's {memory['slowest_upstream_cold_ms']:.0f} ms"
        f" (initialize), {memory['gateway_list_ms']:.0f} ms vs {memory['slowest_upstream_list_ms']:.0f} ms (the first tools/list)"
    )
    if bridged:
        ours = bridged["mcpio bridge"]
        print(f"\n{'stdio -> HTTP bridge':<22}{'p50 (us)':>10}{'calls/s':>10}{'mcpio faster':>14}")
        for name, m in bridged.items():
            print(
                f"{name:<22}{m['p50_us']:>10.0f}{m['calls_per_s']:>10.0f}{ours['calls_per_s'] / m['calls_per_s']:>13.2f}x"
            )
    print("\ntargets:")
    for name, value in targets.items():
        unit = " ms" if "cold start" in name else "x"
        print(f"  {name:<62} {value:>7.2f}{unit}  {'met' if met[name] else 'NOT met'}")
    if peer is None:
        print("  (FastMCP is not installed here: its proxy is measured by scripts/bench in .venv-bench)")
    if not bridged:
        print("  (no peer bridge here: benchmarks/install_peers.py installs mcp-proxy; supergateway comes from npm)")
    result = {
        "quick": args.quick,
        "routes": medians,
        "bridges": bridged,
        "fleet": memory,
        "targets": targets,
        "met": met,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
