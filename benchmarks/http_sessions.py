"""Hold N concurrent Streamable HTTP sessions (default 500) on loopback; check that every one is
served and that the server's session count is back to zero once they close.

    python benchmarks/http_sessions.py                    # mcpio, 500 sessions
    python benchmarks/http_sessions.py --quick            # 50 sessions
    python benchmarks/http_sessions.py --servers mcpio,mcp,fastmcp   # the peers too (in .venv-bench)

The server (``benchmarks/http_server.py KIND``: the stdio benchmark's server module served by
its framework's own Streamable HTTP app under uvicorn, defaults unchanged) runs in a subprocess
on an ephemeral 127.0.0.1 port. The client is httpx: one ``AsyncClient`` (one connection) per
session or request, as N independent hosts would have, every task started at once. Wall times and
latencies are mostly the client's (httpx costs ~2 ms of CPU per request here); the server CPU per
session is the figure to compare.

1. **Legacy era (2025-11-25)**: N tasks each ``initialize`` → ``notifications/initialized`` →
   ``tools/call add`` (the sum is checked) and then wait until all N are open: the server's live
   session count is read at that peak (it must be N). Then all N ``DELETE`` at once; the count
   must come back to zero, and (mcpio) the server's asyncio task count to its idle value and no
   session object must survive a collection. A DELETEd id must answer 404.
2. **Modern era (2026-07-28)**: N stateless ``tools/call`` POSTed at once, each on its own
   connection, of ``hold_add`` (an ``async def`` tool the runner adds with ``--hold-tool``: it
   answers ``a + b`` after ``--hold-ms``, 2 s by default, so that all N are in flight together;
   ``--hold-ms 0`` calls ``add``); every answer checked, no ``Mcp-Session-Id`` minted, the
   session count 0 throughout and the number in flight (mcpio) sampled while they run, back to
   0 after.

The session count comes from ``GET /_bench/stats`` of the runner: mcpio's ``app.sessions``
(the ASGI app's dict of live legacy sessions); for the peers the SDK session manager's private
``_server_instances``. Prints a table; writes JSON to ``benchmarks/results/http-sessions-<time>.json``.
Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import ssl
import sys
import time
from pathlib import Path
from typing import Any

import http_common as hc

try:
    import httpx
except ImportError:  # pragma: no cover
    sys.exit("http_sessions needs httpx: pip install 'mcpio[http]' (scripts/bench installs it into .venv-bench)")

HEADERS = {"accept": hc.ACCEPT, "content-type": "application/json"}


def _headers(sid: str | None = None, modern: bool = False, tool: str = "add") -> dict[str, str]:
    out = dict(HEADERS)
    if modern:
        out.update({"mcp-protocol-version": hc.MODERN, "mcp-method": "tools/call", "mcp-name": tool})
    elif sid is not None:
        out.update({"mcp-session-id": sid, "mcp-protocol-version": hc.LEGACY})
    return out


class Failed(Exception):
    pass


def _answer(r: httpx.Response, id_: Any) -> dict | None:
    return hc.answer_of(r.headers.get("content-type", ""), r.content, id_)


class Phase:
    """Latencies (ms) per step and the errors of one phase."""

    def __init__(self) -> None:
        self.lat: dict[str, list[float]] = {}
        self.errors: list[str] = []

    def time(self, step: str, t0: float) -> None:
        self.lat.setdefault(step, []).append((time.perf_counter() - t0) * 1e3)

    def error(self, what: str) -> None:
        self.errors.append(what)

    def summary(self) -> dict[str, Any]:
        return {
            step: {"n": len(v), "p50_ms": hc.pct(v, 50), "p99_ms": hc.pct(v, 99), "max_ms": max(v)}
            for step, v in self.lat.items()
        }


_SSL = ssl.create_default_context()  # shared: httpx would build (and load certificates into) one per client
# Idle connections are dropped by the client after 2 s, before uvicorn's keep-alive timeout (5 s)
# can close them under a request: httpx's default (5 s) equals uvicorn's, and a request sent as
# the server's timer fires is lost ("Server disconnected without sending a response") — which
# happens to whichever server is slow enough that its sessions wait > 5 s at the barrier.
_LIMITS = httpx.Limits(max_connections=4, max_keepalive_connections=4, keepalive_expiry=2.0)


def _client(timeout: float) -> httpx.AsyncClient:
    """One client per session, as N independent hosts would have: one connection each (a single
    client with a pool of N connections spends most of its time in the pool's bookkeeping)."""
    return httpx.AsyncClient(timeout=timeout, trust_env=False, verify=_SSL, limits=_LIMITS)


async def settle(srv: hc.ServerProc, idle_tasks: int | None, timeout: float) -> tuple[dict[str, Any], float]:
    """Poll the stats until no session is left (and the task count is back to ``idle_tasks``);
    (the last stats, seconds it took)."""
    t0 = time.perf_counter()
    while True:
        st = await srv.stats()
        done = st.get("sessions") in (0, None) and not st.get("modern_in_flight")
        if done and idle_tasks is not None:
            done = st["tasks"] <= idle_tasks
        if done or time.perf_counter() - t0 > timeout:
            return st, time.perf_counter() - t0
        await asyncio.sleep(0.02)


async def legacy_phase(srv: hc.ServerProc, url: str, n: int, timeout: float, idle_tasks: int | None) -> dict[str, Any]:
    ph = Phase()
    opened: list[str | None] = [None] * n
    ready = 0
    all_open = asyncio.Event()
    release = asyncio.Event()
    closed = asyncio.Event()
    finished = 0
    cpu0 = srv.cpu_seconds()

    async def one(i: int) -> None:
        nonlocal ready, finished
        step = "initialize"
        async with _client(timeout) as client:
            try:
                t = time.perf_counter()
                r = await client.post(url, content=hc.initialize_body(0), headers=_headers())
                ph.time(step, t)
                sid = r.headers.get("mcp-session-id")
                msg = _answer(r, 0)
                if r.status_code != 200 or not sid or not msg or "result" not in msg:
                    raise Failed(f"HTTP {r.status_code} {r.text[:200]!r}")
                step = "notifications/initialized"
                t = time.perf_counter()
                r = await client.post(url, content=hc.INITIALIZED_BODY, headers=_headers(sid))
                ph.time("initialized", t)
                if r.status_code != 202:
                    raise Failed(f"HTTP {r.status_code} {r.text[:200]!r}")
                step = "tools/call"
                t = time.perf_counter()
                r = await client.post(url, content=hc.add_body(1, i), headers=_headers(sid))
                ph.time(step, t)
                if r.status_code != 200 or hc.add_value(_answer(r, 1)) != i + 2:
                    raise Failed(f"HTTP {r.status_code} {r.text[:200]!r}")
                opened[i] = sid
            except (httpx.HTTPError, Failed) as exc:
                ph.error(f"{step}: {type(exc).__name__}: {exc}")
            finally:
                ready += 1
                if ready == n:
                    all_open.set()
            await release.wait()
            if opened[i] is not None:
                try:
                    t = time.perf_counter()
                    r = await client.delete(url, headers=_headers(opened[i]))
                    ph.time("DELETE", t)
                    if r.status_code != 200:
                        ph.error(f"DELETE: HTTP {r.status_code} {r.text[:200]!r}")
                except httpx.HTTPError as exc:
                    ph.error(f"DELETE: {type(exc).__name__}: {exc}")
            finished += 1
            if finished == n:
                closed.set()

    t_open = time.perf_counter()
    tasks = [asyncio.create_task(one(i)) for i in range(n)]
    await asyncio.wait_for(all_open.wait(), timeout * 3)
    open_s = time.perf_counter() - t_open
    cpu_open = srv.cpu_seconds() - cpu0
    peak = await srv.stats()
    t_close = time.perf_counter()
    cpu1 = srv.cpu_seconds()
    release.set()
    await asyncio.wait_for(closed.wait(), timeout * 3)
    close_s = time.perf_counter() - t_close
    await asyncio.gather(*tasks)
    after, settle_s = await settle(srv, idle_tasks, timeout=10.0)
    cpu_close = srv.cpu_seconds() - cpu1
    collected = await srv.stats(collect=True)
    # A DELETEd session is gone: its id answers 404.
    async with _client(timeout) as client:
        for sid in [sid for sid in opened if sid][:3]:
            r = await client.post(url, content=hc.add_body(9, 1), headers=_headers(sid))
            if r.status_code != 404:
                ph.error(f"a request with a DELETEd session id got HTTP {r.status_code}, not 404")
    n_open = sum(1 for s in opened if s)
    if len({s for s in opened if s}) != n_open:
        ph.error("two sessions got the same id")
    if peak.get("sessions") is not None and peak["sessions"] != n:
        ph.error(f"live sessions at the peak: {peak['sessions']}, expected {n}")
    if after.get("sessions") not in (0, None):
        ph.error(f"live sessions after every DELETE: {after['sessions']} (10 s later)")
    if idle_tasks is not None and after["tasks"] > idle_tasks:
        ph.error(f"server tasks after every DELETE: {after['tasks']}, idle was {idle_tasks} (10 s later)")
    if collected.get("session_objects"):
        ph.error(f"{collected['session_objects']} session objects still alive after every DELETE and a gc")
    return {
        "sessions_requested": n,
        "sessions_opened": n_open,
        "errors": ph.errors,
        "error_count": len(ph.errors),
        "open_wall_s": open_s,
        "close_wall_s": close_s,
        "settle_s": settle_s,
        "server_cpu_open_ms_per_session": cpu_open / n * 1e3,
        "server_cpu_close_ms_per_session": cpu_close / n * 1e3,
        "stats_peak": peak,
        "stats_after": after,
        "stats_after_gc": collected,
        "latency": ph.summary(),
    }


async def modern_phase(
    srv: hc.ServerProc, url: str, n: int, timeout: float, idle_tasks: int | None, hold_ms: int
) -> dict[str, Any]:
    ph = Phase()
    samples: list[dict[str, Any]] = []
    done = asyncio.Event()
    before = await srv.stats()
    cpu0 = srv.cpu_seconds()

    async def one(i: int) -> None:
        async with _client(timeout) as client:
            try:
                t = time.perf_counter()
                if hold_ms:
                    body, headers = hc.hold_add_body(i, i, hold_ms), _headers(modern=True, tool="hold_add")
                else:
                    body, headers = hc.add_body(i, i, modern=True), _headers(modern=True)
                r = await client.post(url, content=body, headers=headers)
                ph.time("tools/call", t)
                if r.status_code != 200 or hc.add_value(_answer(r, i)) != i + 2:
                    ph.error(f"tools/call: HTTP {r.status_code} {r.text[:200]!r}")
                if "mcp-session-id" in r.headers:
                    ph.error("a modern-era answer carried an Mcp-Session-Id")
            except httpx.HTTPError as exc:
                ph.error(f"tools/call: {type(exc).__name__}: {exc}")

    async def sample() -> None:
        while not done.is_set():
            try:
                samples.append(await srv.stats())
            except (TimeoutError, OSError, hc.HTTPError):
                pass
            await asyncio.sleep(0.01)

    sampler = asyncio.create_task(sample())
    t0 = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(n))), timeout * 3)
    wall = time.perf_counter() - t0
    done.set()
    await sampler
    cpu = srv.cpu_seconds() - cpu0
    after, settle_s = await settle(srv, idle_tasks, timeout=10.0)
    base_sessions = before.get("sessions") or 0  # sessions a failed legacy phase may have left behind
    peak_in_flight = max((s.get("modern_in_flight") or 0 for s in samples), default=None)
    sessions_seen = max((s.get("sessions") or 0 for s in samples), default=0)
    if sessions_seen > base_sessions:
        ph.error(f"{sessions_seen - base_sessions} session(s) appeared while modern requests ran")
    if after.get("modern_in_flight"):
        ph.error(f"{after['modern_in_flight']} modern requests still in flight after every answer (10 s later)")
    if idle_tasks is not None and after["tasks"] > max(idle_tasks, before["tasks"]):
        ph.error(f"server tasks after every answer: {after['tasks']}, {before['tasks']} before (10 s later)")
    return {
        "requests": n,
        "hold_ms": hold_ms,
        "answered": len(ph.lat.get("tools/call", [])),
        "errors": ph.errors,
        "error_count": len(ph.errors),
        "wall_s": wall,
        "settle_s": settle_s,
        "server_cpu_ms_per_request": cpu / n * 1e3,
        "peak_in_flight_sampled": peak_in_flight,
        "samples": len(samples),
        "max_sessions_sampled": sessions_seen,
        "peak_tasks_sampled": max((s.get("tasks") or 0 for s in samples), default=None),
        "stats_before": before,
        "stats_after": after,
        "latency": ph.summary(),
    }


async def warm_up(url: str) -> None:
    """One session and one modern request, so the idle baseline includes the reaper task and
    whatever the first request creates once."""
    async with _client(30) as client:
        r = await client.post(url, content=hc.initialize_body(0), headers=_headers())
        sid = r.headers["mcp-session-id"]
        await client.post(url, content=hc.INITIALIZED_BODY, headers=_headers(sid))
        await client.post(url, content=hc.add_body(1, 1), headers=_headers(sid))
        await client.delete(url, headers=_headers(sid))
        await client.post(url, content=hc.add_body(2, 1, modern=True), headers=_headers(modern=True))


async def run_server(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    extra = ["--hold-tool"]
    if args.max_sessions:
        extra += ["--max-sessions", str(args.max_sessions)]
    with hc.ServerProc(kind, args.python, extra) as srv:
        srv.wait_listening()
        url = f"http://127.0.0.1:{srv.port}/mcp"
        await warm_up(url)
        idle, _ = await settle(srv, None, timeout=10.0)
        await asyncio.sleep(0.2)
        idle = await srv.stats(collect=True)
        idle_tasks = idle["tasks"] if kind == "mcpio" else None  # the peers' task counts are informational
        out: dict[str, Any] = {"server": kind, "stats_idle": idle}
        if "legacy" in args.eras:
            print(f"  {kind}: legacy, {args.sessions} sessions …", file=sys.stderr)
            out["legacy"] = await legacy_phase(srv, url, args.sessions, args.timeout, idle_tasks)
        if "modern" in args.eras:
            print(f"  {kind}: modern, {args.sessions} requests …", file=sys.stderr)
            out["modern"] = await modern_phase(srv, url, args.sessions, args.timeout, idle_tasks, args.hold_ms)
        out["exit_code"] = srv.stop()
        out["stopped_gracefully"] = srv.graceful  # SIGTERM -> uvicorn's shutdown -> exit, without SIGKILL
        out["shutdown_s"] = srv.shutdown_s
        out["server_log_problems"] = srv.problems()[:20]
    return out


def _ms(v: Any) -> str:
    return "—" if v is None else (f"{v:.0f}" if v >= 10 else f"{v:.1f}")


def table(results: dict[str, Any], n: int) -> str:
    servers = list(results)
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, fn: Any) -> None:
        cells = []
        for s in servers:
            try:
                cells.append(fn(results[s]))
            except (KeyError, TypeError):
                cells.append("—")
        rows.append((label, cells))

    def lat(r: dict, era: str, step: str) -> str:
        x = r[era]["latency"][step]
        return f"{_ms(x['p50_ms'])} / {_ms(x['p99_ms'])}"

    def cnt(v: Any) -> str:
        return "?" if v is None else str(v)

    row(
        "legacy: sessions opened / errors", lambda r: f"{r['legacy']['sessions_opened']} / {r['legacy']['error_count']}"
    )
    row(
        "legacy: live sessions idle → peak → after DELETE",
        lambda r: (
            f"{cnt(r['stats_idle']['sessions'])} → {cnt(r['legacy']['stats_peak']['sessions'])} → {cnt(r['legacy']['stats_after']['sessions'])}"
        ),
    )
    row(
        "legacy: server asyncio tasks idle → peak → after",
        lambda r: (
            f"{r['stats_idle']['tasks']} → {r['legacy']['stats_peak']['tasks']} → {r['legacy']['stats_after']['tasks']}"
        ),
    )
    row(f"legacy: open {n} at once (init + initialized + call), wall s", lambda r: f"{r['legacy']['open_wall_s']:.2f}")
    row("legacy: initialize p50 / p99 (ms)", lambda r: lat(r, "legacy", "initialize"))
    row("legacy: tools/call p50 / p99 (ms)", lambda r: lat(r, "legacy", "tools/call"))
    row(f"legacy: DELETE all {n} at once, wall s", lambda r: f"{r['legacy']['close_wall_s']:.2f}")
    row("legacy: DELETE p50 / p99 (ms)", lambda r: lat(r, "legacy", "DELETE"))
    row(
        "legacy: server CPU per session, open / close (ms)",
        lambda r: (
            f"{r['legacy']['server_cpu_open_ms_per_session']:.1f} / {r['legacy']['server_cpu_close_ms_per_session']:.1f}"
        ),
    )
    row(
        "legacy: server RSS idle → peak → after (MiB)",
        lambda r: (
            f"{r['stats_idle']['rss_kib'] / 1024:.0f} → {r['legacy']['stats_peak']['rss_kib'] / 1024:.0f} → "
            f"{r['legacy']['stats_after_gc']['rss_kib'] / 1024:.0f}"
        ),
    )
    row(
        f"modern: {n} tools/call at once: answered / errors",
        lambda r: f"{r['modern']['answered']} / {r['modern']['error_count']}",
    )
    row(
        "modern: wall s; p50 / p99 (ms), each held by the tool for (ms)",
        lambda r: f"{r['modern']['wall_s']:.2f}; {lat(r, 'modern', 'tools/call')}; {r['modern']['hold_ms']}",
    )
    row("modern: sessions seen while running (sampled)", lambda r: str(r["modern"]["max_sessions_sampled"]))
    row(
        "modern: requests in flight at the peak (sampled; mcpio only)",
        lambda r: cnt(r["modern"]["peak_in_flight_sampled"]) if r["server"] == "mcpio" else "—",
    )
    row(
        "modern: server asyncio tasks idle → peak (sampled) → after",
        lambda r: (
            f"{r['modern']['stats_before']['tasks']} → {r['modern']['peak_tasks_sampled']} → {r['modern']['stats_after']['tasks']}"
        ),
    )
    row("modern: server CPU per request (ms)", lambda r: f"{r['modern']['server_cpu_ms_per_request']:.1f}")
    row(
        "server stop: SIGTERM → exit (s)",
        lambda r: f"{r['shutdown_s']:.2f}" + ("" if r["stopped_gracefully"] else " (killed)"),
    )
    row("server log: tracebacks / error lines", lambda r: str(len(r["server_log_problems"])))
    out = ["| " + " | ".join(["figure", *servers]) + " |", "|---|" + "---:|" * len(servers)]
    out += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--servers", default="mcpio", help="comma-separated subset of: mcpio, mcp, mcp-json, fastmcp")
    ap.add_argument("--sessions", type=int, help="concurrent sessions / requests (default 500, quick 50)")
    ap.add_argument("--eras", default="legacy,modern")
    ap.add_argument("--quick", action="store_true", help="50 sessions")
    ap.add_argument(
        "--hold-ms",
        type=int,
        help="modern phase: each request calls hold_add, answered after this many ms, so that all N are "
        "in flight at once (default 2000, quick 500; 0: plain add)",
    )
    ap.add_argument(
        "--max-sessions", type=int, help="pass max_sessions to mcpio's http_app (default: mcpio's own, 10000)"
    )
    ap.add_argument("--timeout", type=float, default=60.0, help="per request, s")
    ap.add_argument("--python", default=sys.executable, help="interpreter the servers run on")
    ap.add_argument("--json", dest="json_path", help="default benchmarks/results/http-sessions-<time>.json")
    ap.add_argument(
        "--markdown",
        help="also write the table into this Markdown file, as its own section (scripts/bench: benchmarks/RESULTS-http.md)",
    )
    args = ap.parse_args(argv)
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    args.eras = {e.strip() for e in args.eras.split(",")}
    args.sessions = args.sessions or (50 if args.quick else 500)
    if args.hold_ms is None:
        args.hold_ms = 500 if args.quick else 2000
    vers = hc.versions(args.python, args.servers)
    for s in args.servers:
        if s not in hc.DISTS:
            ap.error(f"unknown server {s!r}")
        if not vers.get(s):
            print(
                f"http_sessions: {s} is not installed for {args.python}; run scripts/bench (it installs the peers)",
                file=sys.stderr,
            )
            return 2
    load_before = hc.loadavg()
    started = time.time()
    print(f"http_sessions: {', '.join(args.servers)}; {args.sessions} sessions; load {load_before}", file=sys.stderr)
    results: dict[str, Any] = {}
    failed = False
    for s in args.servers:
        try:
            results[s] = asyncio.run(run_server(s, args))
        except Exception as exc:
            results[s] = {"failed": f"{type(exc).__name__}: {exc}"}
            print(f"  !! {s}: {results[s]['failed']}", file=sys.stderr)
            failed = True
            continue
        for era in ("legacy", "modern"):
            errs = results[s].get(era, {}).get("errors") or []
            if errs:
                failed = True
                print(f"  !! {s} {era}: {len(errs)} error(s); first: {errs[:3]}", file=sys.stderr)
        if results[s]["server_log_problems"]:
            failed = True
            print(f"  !! {s}: the server logged: {results[s]['server_log_problems'][:3]}", file=sys.stderr)
        if not results[s]["stopped_gracefully"]:
            failed = True
            print(f"  !! {s}: the server did not exit within 15 s of SIGTERM (killed)", file=sys.stderr)
    meta = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "duration_s": round(time.time() - started, 1),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}",
        "python": args.python,
        "load_before": load_before,
        "load_after": hc.loadavg(),
        "sessions": args.sessions,
        "quick": args.quick,
        "versions": vers,
        "mcpio_commit": hc.commit(),
        "client": f"httpx {httpx.__version__}",
        "max_sessions_option": args.max_sessions,
    }
    md = table({s: r for s, r in results.items() if "failed" not in r}, args.sessions)
    header = (
        f"Machine: {meta['machine']}; load average {meta['load_before']} before, {meta['load_after']} after; "
        f"{meta['date']}; {meta['duration_s']} s; mcpio at {meta['mcpio_commit'] or '?'}; client {meta['client']}."
    )
    doc = {"meta": meta, "results": results, "ok": not failed}
    path = (
        Path(args.json_path)
        if args.json_path
        else hc.HERE
        / "results"
        / f"http-sessions-{time.strftime('%Y%m%d-%H%M%S')}{'-quick' if args.quick else ''}.json"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
    print()
    print(header)
    print()
    print(md)
    print(f"\nhttp_sessions: {'OK' if not failed else 'FAILED'}; JSON written to {path}", file=sys.stderr)
    if args.markdown:
        hc.write_section(
            Path(args.markdown),
            "http_sessions",
            "Concurrent sessions (`benchmarks/http_sessions.py`)",
            f"{header}\n\n{md}",
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
