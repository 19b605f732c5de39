"""Proxies, bridges and gateways (issue 35): the same ``add`` tool of one server
(benchmarks/servers/mcpio_server.py), side by side in one run, called

* stdio -> stdio: directly; through ``mcpio run "COMMAND"`` (a proxy: one more hop); through
  ``mcpio run gateway.json`` (a gateway mounting it); through FastMCP's proxy; and through the
  floor of a hop, a relay copying bytes and nothing else (``servers/floor_relay.py``: no
  target, the p50 the proxy's and the gateway's are also printed against);
* stdio -> HTTP: directly over Streamable HTTP (``mcpio run SERVER -t http``); through a bridge
  from stdio to that server: ``mcpio run URL``, FastMCP's proxy of the URL, ``mcp-proxy URL``
  (sparfenyuk) and ``supergateway --streamableHttp URL``;
* HTTP -> stdio: through a bridge serving the stdio server over Streamable HTTP:
  ``mcpio run "COMMAND" -t http``, FastMCP's proxy served over HTTP, ``mcp-proxy --port P --
  COMMAND`` and ``supergateway --stdio COMMAND --outputTransport streamableHttp --stateful``,
  against the same server served over HTTP directly (the client and the server are the same,
  only the hop differs);

* stdio -> stdio, a 2026-07-28 client (no ``initialize``, each request's ``_meta``): directly,
  and through ``mcpio run "COMMAND"`` (the peers speak 2025-11-25 only);

then a gateway over 10 upstreams: its memory and its cold start against the upstreams' own.
Each route's p50 is printed against its direct call, and mcpio's throughput against each peer
of its section. A peer that is not installed, does not import or fails is left out with one
line saying why (``SKIP``); mcpio's own routes failing stop the run. The peers:
``benchmarks/install_peers.py`` (FastMCP in the running venv, mcp-proxy in
``.venv-bench-mcp-proxy``) and ``benchmarks/install_node_peers.sh`` (supergateway, pinned, in
``.cache/bench-proxy``); ``scripts/bench --only proxy`` installs both and runs this.

    python benchmarks/proxy_bench.py            # ~2-3 min on 2 cores, 3 rounds
    python benchmarks/proxy_bench.py --quick    # under a minute (tests/bench runs it)

Targets (printed with their ratios and PASS/MISS): one proxy hop adds at most the direct call's
p50 (p50 through it ≤ 2× direct, for every mcpio route); ≥ 5× the throughput of every peer of
the same section; RSS of a gateway over 10 upstreams, its upstreams included, ≤ 1.5× what those
upstreams use alone; a gateway's cold start to its first answer ≤ the slowest upstream's cold
start + 50 ms (the upstreams start in parallel; the median of the rounds' differences, each
round's gateway against the upstreams spawned together in the same round). The stdio client is
the standard library: raw pipes, ``select``, 100 (2,000 in full mode, 500 at a time) calls
pipelined for the throughput (encoded before the clock, a batch in one write, the answers
decoded and checked after it: the driver shares the 2 cores), and the CPU the process it talks to used per sequential call
(``CPU/call``: the server itself, or the hop's own process, its upstream apart; /proc, user +
system); the HTTP client is http_common.py's lean keep-alive client, the same number of calls
over 8 connections of one session. No timing is asserted anywhere: the smoke test checks
answers and the JSON. Loopback only (supergateway listens on every interface: it has no option
to bind one; the client connects to 127.0.0.1).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from proxy_http import (  # noqa: E402
    HttpServer,
    bench_env,
    fastmcp_problem,
    fastmcp_proxy_script,
    free_port,
    mcp_proxy,
    measure,
    supergateway,
)

UPSTREAM = HERE / "servers" / "mcpio_server.py"
PY = sys.executable


class Server:
    """One stdio MCP server on pipes."""

    def __init__(self, argv: list[str], modern: bool = False) -> None:
        self.modern = modern  # a 2026-07-28 client: no initialize, _meta on every request (call)
        env = bench_env()
        self.err = tempfile.TemporaryFile()
        self.started = time.perf_counter()
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=env, bufsize=0
        )
        self.buf = bytearray()
        self.early: dict[Any, dict[str, Any]] = {}  # answers read before they were waited for

    def send(self, msg: dict[str, Any]) -> None:
        self.write(_line(msg))

    def write(self, data: bytes) -> None:
        """All of ``data`` to the server's stdin (a pipe may take a large write in parts)."""
        assert self.p.stdin is not None
        view = memoryview(data)
        while view:
            view = view[os.write(self.p.stdin.fileno(), view) :]

    def chunk(self, timeout: float = 60.0) -> bytes:
        """The next bytes the server wrote on its stdout."""
        assert self.p.stdout is not None
        if not select.select([self.p.stdout], [], [], timeout)[0]:
            raise TimeoutError(f"no answer within {timeout} s{self.tail()}")
        chunk = os.read(self.p.stdout.fileno(), 1 << 20)
        if not chunk:
            raise EOFError(f"the server closed its stdout{self.tail()}")
        return chunk

    def lines(self, n: int) -> list[bytes]:
        """The next ``n`` lines that are answers (they carry an id; notifications do not)."""
        out: list[bytes] = []
        rest, self.buf = bytes(self.buf), bytearray()
        while len(out) < n:
            *whole, rest = (rest + self.chunk()).split(b"\n")
            out += [line for line in whole if b'"id"' in line]
        self.buf += rest
        return out

    def line(self, timeout: float = 60.0) -> bytes:
        deadline = time.perf_counter() + timeout
        while b"\n" not in self.buf:
            self.buf += self.chunk(max(0.0, deadline - time.perf_counter()))
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
        """Send initialize (a 2026-07-28 client: ``server/discover``); the seconds from spawn to
        its answer."""
        if self.modern:
            self.send({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": MODERN_META}})
            self.answer(0)
            return time.perf_counter() - self.started
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


# Calls pipelined at most this many at a time: a bridge that opens one HTTP connection per call
# in flight (supergateway) must stay under the upstream server's connection limit (1,000).
IN_FLIGHT = 500


# What a 2026-07-28 client sends with every request (spec: the per-request _meta; no initialize).
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "b", "version": "1"},
}


def _line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


def call(name: str, id_: int, a: int, modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {"a": a, "b": 2}}
    if modern:
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def latency_and_throughput(
    argv: list[str], tool: str, calls: int, pipelined: int, modern: bool = False
) -> dict[str, Any]:
    s = Server(argv, modern)
    try:
        s.initialize()
        for i in range(20):  # warm-up: every lazy import and cache on the way
            s.send(call(tool, 1000 + i, i, modern))
            s.answer(1000 + i)
        times = []
        cpu0 = _cpu_s(s.p.pid)
        for i in range(calls):
            t0 = time.perf_counter()
            s.send(call(tool, i + 1, i, modern))
            msg = s.answer(i + 1)
            times.append(time.perf_counter() - t0)
            assert msg["result"]["content"][0]["text"] == str(i + 2), msg
        cpu_us = (_cpu_s(s.p.pid) - cpu0) / calls * 1e6
        # The throughput: what the hop does, not this process. On 2 cores the driver shares the
        # machine with what it measures (as proxy_http.load does for HTTP): the requests are
        # encoded before the clock, each batch is one write, and the answers are decoded and
        # checked after it. Every route gets the same bytes the same way.
        batches = [range(start, min(start + IN_FLIGHT, pipelined)) for start in range(0, pipelined, IN_FLIGHT)]
        blobs = [b"".join(_line(call(tool, 100_000 + i, i, modern)) for i in batch) for batch in batches]
        answers: list[bytes] = []
        t0 = time.perf_counter()
        for batch, blob in zip(batches, blobs, strict=True):
            s.write(blob)
            answers += s.lines(len(batch))
        elapsed = time.perf_counter() - t0
        texts = {m["id"]: m["result"]["content"][0]["text"] for m in map(json.loads, answers)}
        assert texts == {100_000 + i: str(i + 2) for i in range(pipelined)}, "a pipelined call went wrong"
        return {"p50_us": statistics.median(times) * 1e6, "calls_per_s": pipelined / elapsed, "cpu_us": cpu_us}
    finally:
        s.close()


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def gateway_config(folder: Path, n: int) -> Path:
    path = folder / f"gateway{n}.json"
    entries = {f"s{i}": {"command": PY, "args": [str(UPSTREAM)]} for i in range(n)}
    path.write_text(json.dumps({"mcpServers": entries}))
    return path


def fleet(folder: Path, n: int, rounds: int) -> dict[str, Any]:
    """A gateway over ``n`` upstreams against the upstreams alone: memory and cold start, to the
    ``initialize`` answer and to the first ``tools/list`` answer (a host's first useful one: for
    the gateway, with every upstream's tools), each timed from the spawn. The ``n`` upstreams
    alone are spawned together, as the gateway spawns them (``n`` processes booting on the same
    cores): the slowest of them is what the gateway is read against. ``rounds`` of each, the
    two in alternating order; the medians (one boot of eleven processes on two cores swings by
    ±100 ms), and every round's figures under ``rounds``."""
    each = []
    for i in range(rounds):
        if i % 2:
            gateway = _fleet_gateway(folder, n)
            alone = _fleet_alone(n)
        else:
            alone = _fleet_alone(n)
            gateway = _fleet_gateway(folder, n)
        # the targets, round by round (the gateway against the upstreams of its own round)
        cold_over = gateway["gateway_cold_ms"] - alone["slowest_upstream_cold_ms"]
        list_over = gateway["gateway_list_ms"] - alone["slowest_upstream_list_ms"]
        each.append({**alone, **gateway, "cold_over_ms": cold_over, "list_over_ms": list_over})
    out: dict[str, Any] = {key: statistics.median(r[key] for r in each) for key in each[0]}
    out["upstreams"], out["rss_ratio"], out["rounds"] = n, out["rss_gateway_kib"] / out["rss_alone_kib"], each
    return out


def _fleet_alone(n: int) -> dict[str, float]:
    alone = [Server([PY, str(UPSTREAM)]) for _ in range(n)]
    try:
        starts, lists = [], []
        for s in alone:
            starts.append(s.initialize())
            s.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})  # like for like: as under the gateway
            s.answer(7)
            lists.append(time.perf_counter() - s.started)
        return {
            "rss_alone_kib": sum(s.rss_kib() for s in alone),
            "slowest_upstream_cold_ms": max(starts) * 1e3,
            "slowest_upstream_list_ms": max(lists) * 1e3,
        }
    finally:
        for s in alone:
            s.close()


def _fleet_gateway(folder: Path, n: int) -> dict[str, float]:
    g = Server([PY, "-m", "mcpio", "run", str(gateway_config(folder, n))])
    try:
        cold = g.initialize()
        g.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
        tools = g.answer(7)["result"]["tools"]
        cold_list = time.perf_counter() - g.started
        assert len(tools) >= 2 * n, f"the gateway lists {len(tools)} tools for {n} upstreams{g.tail()}"
        return {"rss_gateway_kib": g.rss_kib(), "gateway_cold_ms": cold * 1e3, "gateway_list_ms": cold_list * 1e3}
    finally:
        g.close()


Measure = Callable[[], dict[str, float]]


class Route(NamedTuple):
    name: str
    section: str  # STDIO, MODERN, TO_HTTP or FROM_HTTP
    mcpio: bool  # mcpio's own route (a failure is a bug: the run stops), or a peer's (left out)
    run: Measure | str  # how to measure it, or why a peer is left out


STDIO, TO_HTTP, FROM_HTTP = "stdio -> stdio", "stdio -> HTTP", "HTTP -> stdio"
MODERN = "stdio, 2026-07-28"  # stdio -> stdio for a client of the stateless era
BASELINE = {STDIO: "direct", TO_HTTP: "direct HTTP", FROM_HTTP: "direct HTTP", MODERN: "direct 2026"}
OURS = {STDIO: "mcpio proxy", TO_HTTP: "mcpio run URL", FROM_HTTP: "mcpio run CMD -t http", MODERN: "mcpio proxy 2026"}
# A hop that copies bytes and does nothing else (servers/floor_relay.py): no target of its own,
# what the stdio hops' p50 is read against.
FLOOR = "floor hop (copies bytes)"
FLOOR_RELAY = Path(__file__).resolve().parent / "servers" / "floor_relay.py"
# The same for the bridges (servers/floor_bridge.py: bodies copied between lines and POSTs): what
# their throughput, mcpio's and the peers', is read against on the same machine.
FLOOR_BRIDGE = Path(__file__).resolve().parent / "servers" / "floor_bridge.py"
FLOOR_OF = {TO_HTTP: "floor URL bridge", FROM_HTTP: "floor CMD bridge"}
FLOORS = {FLOOR, *FLOOR_OF.values()}


def served_measure(argv_for: Callable[[int], list[str]], calls: int, total: int) -> Measure:
    """Start ``argv_for(port)`` (a process serving Streamable HTTP at /mcp), time the call over
    HTTP, stop it; a failure names the process's last stderr line."""

    def run() -> dict[str, float]:
        port = free_port()
        server = HttpServer(argv_for(port), port)
        try:
            server.ready()
            return measure(port, "/mcp", calls, total)
        except Exception as exc:
            raise RuntimeError(f"{exc}{server.tail()}") from exc
        finally:
            server.close()

    return run


def run_rounds(table: list[Route], rounds: int) -> tuple[dict[str, list[dict[str, float]]], dict[str, str]]:
    """Every route's figures, round by round (the routes in a rotated order each round: a noisy
    minute hurts all alike), and why each peer left out was (not installed, or failed: its
    first failure leaves it out of the later rounds). An mcpio route failing is raised."""
    skipped: dict[str, str] = {}
    measured: dict[str, list[dict[str, float]]] = {}
    for route in table:
        if isinstance(route.run, str):
            skipped[route.name] = route.run
        else:
            measured[route.name] = []
    live = [r for r in table if r.name in measured]
    for i in range(rounds):
        for route in live[i % len(live) :] + live[: i % len(live)]:
            if route.name in skipped:
                continue
            assert not isinstance(route.run, str)
            try:
                measured[route.name].append(route.run())
            except Exception as exc:
                if route.mcpio:
                    raise
                skipped[route.name] = f"failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
                del measured[route.name]
    return measured, skipped


def routes(folder: Path, url: str, calls: int, pipelined: int) -> list[Route]:
    """Every route of one run: the same ``add`` call, with the client speaking stdio (directly,
    through a proxy, a gateway, or a bridge to the Streamable HTTP server at ``url``) or HTTP
    (directly to ``url``, or to a bridge in front of the stdio server)."""
    cmd = shlex.join([PY, str(UPSTREAM)])

    def stdio(argv: list[str], tool: str = "add", modern: bool = False) -> Measure:
        return lambda: latency_and_throughput(argv, tool, calls, pipelined, modern)

    def served(argv_for: Callable[[int], list[str]]) -> Measure:
        return served_measure(argv_for, calls, pipelined)

    http_port = int(url.split(":")[2].split("/")[0])
    out = [
        Route("direct", STDIO, True, stdio([PY, str(UPSTREAM)])),
        Route(FLOOR, STDIO, True, stdio([PY, str(FLOOR_RELAY), PY, str(UPSTREAM)])),
        Route("mcpio proxy", STDIO, True, stdio([PY, "-m", "mcpio", "run", cmd])),
        Route(
            "mcpio gateway", STDIO, True, stdio([PY, "-m", "mcpio", "run", str(gateway_config(folder, 1))], "s0__add")
        ),
        Route("direct 2026", MODERN, True, stdio([PY, str(UPSTREAM)], modern=True)),
        Route("mcpio proxy 2026", MODERN, True, stdio([PY, "-m", "mcpio", "run", cmd], modern=True)),
        Route("direct HTTP", TO_HTTP, True, lambda: measure(http_port, "/mcp", calls, pipelined)),
        Route("mcpio run URL", TO_HTTP, True, stdio([PY, "-m", "mcpio", "run", url])),
        Route(
            FLOOR_OF[TO_HTTP],
            TO_HTTP,
            True,
            stdio([PY, str(FLOOR_BRIDGE), "to-http", "127.0.0.1", str(http_port), "/mcp"]),
        ),
        Route(
            "mcpio run CMD -t http",
            FROM_HTTP,
            True,
            served(lambda port: [PY, "-m", "mcpio", "run", cmd, "-t", "http", "--port", str(port)]),
        ),
        Route(
            FLOOR_OF[FROM_HTTP],
            FROM_HTTP,
            True,
            served(lambda port: [PY, str(FLOOR_BRIDGE), "from-http", str(port), PY, str(UPSTREAM)]),
        ),
    ]
    problem = fastmcp_problem(PY)
    if problem is not None:
        why = f"FastMCP does not import here ({problem}); scripts/bench's .venv-bench has it"
        out += [
            Route(f"fastmcp {kind}", section, False, why)
            for kind, section in (("proxy", STDIO), ("URL", TO_HTTP), ("CMD", FROM_HTTP))
        ]
    else:
        to_stdio = fastmcp_proxy_script(folder, "to_stdio", cmd, "stdio")
        to_http = fastmcp_proxy_script(folder, "to_http", url, "stdio")
        from_http = fastmcp_proxy_script(folder, "from_http", cmd, "http")
        out += [
            Route("fastmcp proxy", STDIO, False, stdio([PY, str(to_stdio)])),
            Route("fastmcp URL", TO_HTTP, False, stdio([PY, str(to_http)])),
            Route("fastmcp CMD", FROM_HTTP, False, served(lambda port: [PY, str(from_http), str(port)])),
        ]
    mp = mcp_proxy()
    if mp is None:
        why = "not installed (benchmarks/install_peers.py puts it in .venv-bench-mcp-proxy)"
        out += [
            Route(f"mcp-proxy {kind}", section, False, why) for kind, section in (("URL", TO_HTTP), ("CMD", FROM_HTTP))
        ]
    else:
        out += [
            Route("mcp-proxy URL", TO_HTTP, False, stdio([mp, "--transport", "streamablehttp", url])),
            Route(
                "mcp-proxy CMD",
                FROM_HTTP,
                False,
                served(lambda port: [mp, "--host", "127.0.0.1", "--port", str(port), "--", PY, str(UPSTREAM)]),
            ),
        ]
    sg = supergateway()
    if sg is None:
        why = "not installed (benchmarks/install_node_peers.sh installs it)"
        out += [
            Route(f"supergateway {kind}", section, False, why)
            for kind, section in (("URL", TO_HTTP), ("CMD", FROM_HTTP))
        ]
    else:
        out += [
            Route("supergateway URL", TO_HTTP, False, stdio([*sg, "--streamableHttp", url, "--logLevel", "none"])),
            Route(
                "supergateway CMD",
                FROM_HTTP,
                False,
                # --stateful: one stdio child per session (stateless, its default, spawns one per request)
                served(
                    lambda port: [
                        *sg,
                        *("--stdio", cmd, "--outputTransport", "streamableHttp", "--stateful"),
                        *("--port", str(port), "--logLevel", "none"),
                    ]
                ),
            ),
        ]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", metavar="PATH", help="write the results here")
    args = ap.parse_args(argv)
    calls, pipelined, rounds, n = (50, 100, 1, 3) if args.quick else (400, 2000, args.rounds, 10)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = free_port()
        upstream = HttpServer([PY, "-m", "mcpio", "run", str(UPSTREAM), "-t", "http", "--port", str(port)], port)
        try:
            upstream.ready()
            table = routes(folder, upstream.url, calls, pipelined)
            measured, skipped = run_rounds(table, rounds)
        finally:
            upstream.close()
        memory = fleet(folder, n, rounds)
    medians = {
        name: {key: statistics.median(m[key] for m in runs) for key in runs[0]} for name, runs in measured.items()
    }
    section_of = {r.name: r.section for r in table}
    targets: dict[str, float] = {}
    met: dict[str, bool] = {}
    for route in table:
        if route.mcpio and not route.name.startswith("direct") and route.name not in FLOORS:
            base = BASELINE[route.section]
            name = f"{route.name} ({route.section}) p50 <= 2x {base}"
            targets[name] = medians[route.name]["p50_us"] / medians[base]["p50_us"]
            met[name] = targets[name] <= 2
    for route in table:
        if not route.mcpio and route.name in medians:
            ours = OURS[route.section]
            name = f"{ours} throughput >= 5x {route.name}"
            targets[name] = medians[ours]["calls_per_s"] / medians[route.name]["calls_per_s"]
            met[name] = targets[name] >= 5
    name = f"gateway RSS over {n} upstreams <= 1.5x theirs"
    targets[name] = memory["rss_ratio"]
    met[name] = targets[name] <= 1.5
    name = "gateway cold start <= slowest upstream + 50 ms"
    targets[name] = memory["cold_over_ms"]
    met[name] = targets[name] <= 50
    name = "gateway cold start to tools/list <= slowest upstream's + 50 ms"
    targets[name] = memory["list_over_ms"]
    met[name] = targets[name] <= 50
    for section in (STDIO, MODERN, TO_HTTP, FROM_HTTP):
        base = medians[BASELINE[section]]
        ours = medians[OURS[section]]
        print(f"\n{section:<24}{'p50 (us)':>10}{'vs direct':>11}{'calls/s':>10}{'mcpio faster':>14}{'CPU/call':>10}")
        for route in table:
            if section_of[route.name] == section or (route.name == "direct HTTP" and section == FROM_HTTP):
                if route.name in medians:
                    m = medians[route.name]
                    versus = not route.mcpio or route.name in FLOOR_OF.values()
                    faster = f"{ours['calls_per_s'] / m['calls_per_s']:>13.2f}x" if versus else ""
                    cpu = f"{m['cpu_us']:>8.0f}us" if "cpu_us" in m else ""
                    print(
                        f"{route.name:<24}{m['p50_us']:>10.0f}{m['p50_us'] / base['p50_us']:>10.2f}x"
                        f"{m['calls_per_s']:>10.0f}{faster:>14}{cpu}"
                    )
                else:
                    print(f"{route.name:<24}  SKIP: {skipped[route.name]}")
    print(
        f"\ngateway over {n} upstreams: RSS {memory['rss_gateway_kib'] / 1024:.0f} MiB vs {memory['rss_alone_kib'] / 1024:.0f} MiB "
        f"alone; cold start {memory['gateway_cold_ms']:.0f} ms vs the slowest upstream's {memory['slowest_upstream_cold_ms']:.0f} ms"
        f" (initialize), {memory['gateway_list_ms']:.0f} ms vs {memory['slowest_upstream_list_ms']:.0f} ms (the first tools/list);"
        f" medians of {len(memory['rounds'])} rounds, the differences round by round: initialize "
        + ", ".join(f"{r['cold_over_ms']:+.0f}" for r in memory["rounds"])
        + " ms, tools/list "
        + ", ".join(f"{r['list_over_ms']:+.0f}" for r in memory["rounds"])
        + " ms"
    )
    floor = medians[FLOOR]["p50_us"]
    print(
        f"\nthe stdio hop's floor (a relay copying bytes) is {floor / medians['direct']['p50_us']:.2f}x direct; "
        f"over it, the mcpio proxy {medians['mcpio proxy']['p50_us'] / floor:.2f}x, "
        f"the mcpio gateway {medians['mcpio gateway']['p50_us'] / floor:.2f}x"
    )
    for section, floor_name in FLOOR_OF.items():
        bridge = medians[floor_name]["calls_per_s"]
        peers = [r.name for r in table if section_of[r.name] == section and not r.mcpio and r.name in medians]
        print(
            f"the {section} bridges' floor (copies bodies) makes {bridge:.0f} calls/s; {OURS[section]} reaches "
            f"{medians[OURS[section]]['calls_per_s'] / bridge:.0%} of it"
            + "".join(f"; the floor is {bridge / medians[p]['calls_per_s']:.2f}x {p}" for p in peers)
        )
    print("\ntargets:")
    for name, value in targets.items():
        unit = " ms" if "cold start" in name else "x"
        print(f"  {name:<64} {value:>8.2f}{unit}  {'PASS' if met[name] else 'MISS'}")
    for name, why in skipped.items():
        print(f"  SKIP {name}: {why}")
    result = {
        "quick": args.quick,
        "routes": medians,
        "sections": section_of,
        "skipped": skipped,
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
