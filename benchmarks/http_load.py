"""Streamable HTTP under load: requests/s and latency at 50 concurrent clients, both eras —
mcpio against the official ``mcp`` SDK and ``fastmcp``.

    scripts/bench --http-only                                  # in .venv-bench, with the peers
    python benchmarks/http_load.py --quick                     # 1 round of 1.5 s per figure
    python benchmarks/http_load.py --servers mcpio --quick     # no peers needed

Every server is ``benchmarks/http_server.py KIND`` in its own subprocess: the stdio benchmark's
server module (the same ``add``/``echo`` plain ``def`` tools) served by its framework's own
Streamable HTTP app with that framework's defaults, under uvicorn configured alike for all
(mcpio ``http_app()``; the SDK's ``MCPServer.streamable_http_app()``: stateful, SSE answers;
``mcp-json``, opt-in: the same with ``json_response=True``; fastmcp ``http_app()``).

Per server and era, C client tasks (default 50) each hold one keep-alive HTTP/1.1 connection
and send ``tools/call add`` one after the other for a fixed time (default 4 s, after a 0.5 s
warm-up); every answer is checked (HTTP 200, the right sum, JSON or SSE body). Legacy
(2025-11-25): each client opens its own session first (``initialize`` +
``notifications/initialized``, untimed) and DELETEs it after. Modern (2026-07-28): stateless
POSTs with ``_meta`` and the ``Mcp-Method``/``Mcp-Name`` headers; a server whose probe is not
answered is marked unsupported. The client is the standard library (asyncio streams, a minimal
HTTP/1.1 parser in ``http_common.RawConn``), so that it costs every server the same and stays
well below the servers' cost (its CPU per request is reported).

Figures: requests/s (answers completed in the window / its length), p50 / p99 latency of those
answers, server CPU per request (``/proc/PID/stat``, steadier than wall time on a shared
machine), client CPU per request, server peak RSS. Rounds are interleaved (each round starts
every server afresh, in an order rotated per round, and rotates the era order); each figure is
the median over rounds (default 5), with the ratio to mcpio in the same run. Prints a Markdown
table, writes JSON to ``benchmarks/results/http-load-<time>.json``.

The issue-17 targets (mcpio ÷ floor) follow the table. Server CPU per request is judged by a
side-by-side measure (``http_paired.py``, when both mcpio and the floor run: both servers up,
pinned to one CPU, their loads taking turns every 0.5 s for ``--paired-seconds`` each), because
this machine's speed drifts by more than the gap between them over the minutes that separate
the rounds' figures; the ratio of the rounds' medians is printed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import http_common as hc

SERVERS = ("mcpio", "mcpio-inline", "mcp", "mcp-json", "fastmcp", "floor")
# issue 17: mcpio against the floor (servers/http_floor.py), per era: (figure, the most mcpio/floor may be)
TARGETS = (("server_cpu_us", 1.25, "server CPU per request"), ("p50_ms", 1.5, "p50 latency at 50 clients"))
ERAS = ("legacy", "modern")
ACCEPT_LINE = b"Accept: application/json, text/event-stream\r\n"
MODERN_HEADERS = ACCEPT_LINE + b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n"


def legacy_headers(sid: str) -> bytes:
    return ACCEPT_LINE + b"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n" % sid.encode()


async def open_session(conn: hc.RawConn, timeout: float) -> str:
    """initialize + notifications/initialized on ``conn`` (untimed); the session id."""
    r = await conn.request("POST", "/mcp", hc.initialize_body(0), ACCEPT_LINE, timeout)
    sid = r.headers.get("mcp-session-id")
    msg = hc.answer_of(r.content_type, r.body, 0)
    if r.status != 200 or not sid or not msg or "result" not in msg:
        raise hc.HTTPError(f"initialize: HTTP {r.status} {r.body[:200]!r}")
    r = await conn.request("POST", "/mcp", hc.INITIALIZED_BODY, legacy_headers(sid), timeout)
    if r.status != 202:
        raise hc.HTTPError(f"notifications/initialized: HTTP {r.status} {r.body[:200]!r}")
    return sid


def wrong_answer(r: Any, n: int, a: int) -> str | None:
    """Why response ``r`` is not the answer to call ``n`` of ``add(a, 2)``; None when it is."""
    if r.status != 200 or hc.add_value(hc.answer_of(r.content_type, r.body, n)) != a + 2:
        return f"tools/call: HTTP {r.status} {r.body[:200]!r}"
    return None


class Load:
    def __init__(self, port: int, clients: int, warmup: float, duration: float, timeout: float) -> None:
        self.port = port
        self.clients = clients
        self.warmup = warmup
        self.duration = duration
        self.timeout = timeout
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.done = 0

    def error(self, what: str) -> None:
        self.errors.append(what)

    async def client(self, k: int, era: str, ready: Any, go: asyncio.Event, window: dict[str, float]) -> None:
        conn = hc.RawConn("127.0.0.1", self.port)
        modern = era == "modern"
        sid = None
        try:
            try:
                if modern:
                    headers = MODERN_HEADERS
                    await conn.connect()
                else:
                    sid = await open_session(conn, self.timeout)
                    headers = legacy_headers(sid)
            finally:
                ready()
            await go.wait()
            t_start, t_end = window["start"], window["end"]
            n = 0
            perf = time.perf_counter
            lat = self.latencies
            while True:
                n += 1
                a = k * 1_000_000 + n
                body = hc.add_body(n, a, 2, modern)
                t0 = perf()
                if t0 >= t_end:
                    break
                r = await conn.request("POST", "/mcp", body, headers, self.timeout)
                t1 = perf()
                wrong = wrong_answer(r, n, a)
                if wrong is not None:
                    self.error(wrong)
                    if len(self.errors) > 100:
                        return
                    continue
                if t0 >= t_start and t1 <= t_end:
                    lat.append(t1 - t0)
                    self.done += 1
            if sid is not None:
                r = await conn.request("DELETE", "/mcp", b"", legacy_headers(sid), self.timeout)
                if r.status not in (200, 204):
                    self.error(f"DELETE: HTTP {r.status} {r.body[:200]!r}")
        except (TimeoutError, hc.HTTPError, OSError, ValueError) as exc:
            self.error(f"client {k}: {type(exc).__name__}: {exc}")
        finally:
            conn.close()

    async def run(self, era: str, srv: hc.ServerProc) -> dict[str, Any]:
        # Every client connects (legacy: opens its session, untimed) first; then all start at once,
        # and the clock starts after the warm-up.
        waiting = self.clients
        all_ready = asyncio.Event()
        go = asyncio.Event()
        window = {"start": 0.0, "end": 0.0}

        def ready() -> None:
            nonlocal waiting
            waiting -= 1
            if waiting == 0:
                all_ready.set()

        tasks = [asyncio.create_task(self.client(k, era, ready, go, window)) for k in range(self.clients)]
        await asyncio.wait_for(all_ready.wait(), self.timeout + 30)
        window["start"] = time.perf_counter() + self.warmup
        window["end"] = window["start"] + self.duration
        go.set()
        await asyncio.sleep(max(0.0, window["start"] - time.perf_counter()))
        cpu0, ccpu0 = srv.cpu_seconds(), time.process_time()
        await asyncio.sleep(max(0.0, window["end"] - time.perf_counter()))
        cpu1, ccpu1 = srv.cpu_seconds(), time.process_time()
        await asyncio.wait_for(asyncio.gather(*tasks), self.timeout + 30)
        lat = sorted(self.latencies)
        n = self.done
        return {
            "requests": n,
            "rps": n / self.duration,
            "p50_ms": hc.pct(lat, 50) * 1e3 if lat else None,
            "p99_ms": hc.pct(lat, 99) * 1e3 if lat else None,
            "server_cpu_us": (cpu1 - cpu0) / n * 1e6 if n else None,
            "client_cpu_us": (ccpu1 - ccpu0) / n * 1e6 if n else None,
            "errors": self.errors[:20],
            "error_count": len(self.errors),
        }


async def probe_modern(port: int) -> str | None:
    """None when a modern tools/call is answered right; else why not."""
    conn = hc.RawConn("127.0.0.1", port)
    try:
        r = await conn.request("POST", "/mcp", hc.add_body(7, 40, 2, modern=True), MODERN_HEADERS, 30)
    except (TimeoutError, hc.HTTPError, OSError) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()
    msg = hc.answer_of(r.content_type, r.body, 7)
    if r.status == 200 and hc.add_value(msg) == 42:
        return None
    return f"HTTP {r.status}: {r.body[:200]!r}"


async def measure_server(
    kind: str, eras: list[str], args: argparse.Namespace, info: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    with hc.ServerProc(kind, args.python) as srv:
        srv.wait_listening()
        if "modern" in eras and kind not in info["modern_unsupported"]:
            why = await probe_modern(srv.port)
            if why is not None:
                info["modern_unsupported"][kind] = why
                print(f"  {kind}: no modern era ({why})", file=sys.stderr)
        for era in eras:
            if era == "modern" and kind in info["modern_unsupported"]:
                continue
            t = time.perf_counter()
            res = await Load(srv.port, args.clients, args.warmup, args.duration, args.timeout).run(era, srv)
            st = await srv.stats()
            res["rss_mib"] = st.get("rss_kib", 0) / 1024
            res["hwm_mib"] = st.get("hwm_kib", 0) / 1024
            res["sessions_after"] = st.get("sessions")
            out[era] = res
            flag = f"  !! {res['error_count']} errors: {res['errors'][:2]}" if res["error_count"] else ""
            print(
                f"  {kind:<8} {era:<6} {res['rps']:8.0f} req/s  p50 {res['p50_ms'] or 0:7.1f} ms  p99 {res['p99_ms'] or 0:7.1f} ms"
                f"  ({time.perf_counter() - t:.1f} s){flag}",
                file=sys.stderr,
            )
        srv.stop()
        if not srv.graceful:
            info["failures"].append(f"{kind}: did not exit within 15 s of SIGTERM (killed)")
        problems = srv.problems()
        if problems:
            info.setdefault("server_log_problems", {}).setdefault(kind, []).extend(problems[:5])
    return out


ROWS = [
    # key, label, format, better
    ("rps", "requests/s", "{:,.0f}", "high"),
    ("p50_ms", "p50 latency (ms)", "{:.1f}", "low"),
    ("p99_ms", "p99 latency (ms)", "{:.1f}", "low"),
    ("server_cpu_us", "server CPU per request (µs)", "{:.0f}", "low"),
    ("client_cpu_us", "client CPU per request (µs)", "{:.0f}", "low"),
    ("hwm_mib", "server peak RSS (MiB)", "{:.0f}", "low"),
]


def summarize(raw: dict[str, dict[str, dict[str, list[Any]]]]) -> tuple[dict, dict]:
    med = {s: {e: {k: hc.median(v) for k, v in figs.items()} for e, figs in eras.items()} for s, eras in raw.items()}
    ratios: dict[str, dict[str, dict[str, float | None]]] = {}
    base = med.get("mcpio", {})
    for s, eras in med.items():
        ratios[s] = {}
        for e, figs in eras.items():
            ratios[s][e] = {}
            for k, v in figs.items():
                b = base.get(e, {}).get(k)
                ratios[s][e][k] = v / b if (v is not None and b) else None
    return med, ratios


def _label(server: str, version: str | None) -> str:
    """A column's name: the server and its version (the floor's is the msgspec it runs on)."""
    if server == "floor":
        return f"floor (msgspec {version})" if version else "floor"
    return f"{server} {version or ''}".strip()


def table(med: dict, ratios: dict, servers: list[str], eras: list[str], meta: dict, info: dict) -> str:
    names = [_label(s, meta["versions"].get(s)) for s in servers]
    out = [
        f"| figure (median of {meta['rounds']} rounds, {meta['clients']} clients) | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(servers),
    ]
    for era in eras:
        for key, label, fmt, _ in ROWS:
            cells = []
            for s in servers:
                v = med.get(s, {}).get(era, {}).get(key)
                if v is None:
                    cells.append("—")
                    continue
                cell = fmt.format(v)
                r = ratios.get(s, {}).get(era, {}).get(key)
                if s != "mcpio" and r is not None:
                    cell += f" ({r:.2g}×)" if r < 10 else f" ({r:.0f}×)"
                cells.append(cell)
            era_label = "legacy 2025-11-25" if era == "legacy" else "modern 2026-07-28"
            out.append(f"| {era_label}: {label} | " + " | ".join(cells) + " |")
        errs = [str(med[s][era]["errors_total"]) if era in med.get(s, {}) else "—" for s in servers]
        out.append(
            f"| {'legacy 2025-11-25' if era == 'legacy' else 'modern 2026-07-28'}: errors (all rounds) | "
            + " | ".join(errs)
            + " |"
        )
    notes = ["Ratios are to mcpio in the same run."]
    if "floor" in servers:
        notes.append(
            "floor: a hand-written ASGI app answering the same requests with msgspec and no MCP library "
            "(benchmarks/servers/http_floor.py), under the same uvicorn settings."
        )
    for s, why in info["modern_unsupported"].items():
        notes.append(f"{s}: no modern era ({why}).")
    out += ["", " ".join(notes)]
    return "\n".join(out)


def targets(med: dict, eras: list[str], paired: dict[str, Any] | None = None) -> tuple[str, list[dict[str, Any]]]:
    """The issue-17 targets: mcpio's figure over the floor's, per era, and whether each is met.
    Server CPU is judged by ``paired`` (``http_paired``: both servers measured in alternating
    slices) when it ran; the ratio of the rounds' medians is shown beside it."""
    rows = []
    out = [
        "| target (mcpio ÷ floor, same run) | era | ratio | rounds' medians | goal | met |",
        "|---|---|---:|---:|---:|---|",
    ]
    for era in eras:
        for key, goal, label in TARGETS:
            m = med.get("mcpio", {}).get(era, {}).get(key)
            f = med.get("floor", {}).get(era, {}).get(key)
            of_medians = m / f if (m is not None and f) else None
            ratio, how = of_medians, ""
            side = (paired or {}).get(era) if key == "server_cpu_us" else None
            if side is not None and side.get("ratio"):
                ratio = side["ratio"]
                q = side.get("pair_quartiles")
                how = f" (side by side{f'; pairs {q[0]:.2f}–{q[2]:.2f}×' if q else ''})"
            met = ratio is not None and ratio <= goal
            rows.append(
                {"era": era, "figure": key, "ratio": ratio, "ratio_of_medians": of_medians, "goal": goal, "met": met}
            )
            out.append(
                f"| {label}{how} | {era} | {'—' if ratio is None else f'{ratio:.2f}×'} | "
                f"{'—' if of_medians is None else f'{of_medians:.2f}×'} | ≤ {goal}× | {'yes' if met else 'no'} |"
            )
    return "\n".join(out), rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--servers", default="mcpio,mcp,fastmcp,floor", help="comma-separated subset of: " + ", ".join(SERVERS)
    )
    ap.add_argument("--eras", default="legacy,modern")
    ap.add_argument("--clients", type=int, default=50, help="concurrent clients, one connection each (default 50)")
    ap.add_argument("--duration", type=float, help="measured seconds per figure (default 4, quick 1.5)")
    ap.add_argument("--warmup", type=float, help="seconds before the clock starts (default 0.5, quick 0.3)")
    ap.add_argument("--rounds", type=int, help="default 5, quick 1")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timeout", type=float, default=30.0, help="per request, s")
    ap.add_argument(
        "--paired-seconds",
        type=float,
        help="with mcpio and floor: seconds per server and era of the side-by-side CPU measure "
        "(http_paired.py) the CPU target is judged by (default 24, quick 2; 0: none)",
    )
    ap.add_argument("--slice", type=float, default=0.5, help="seconds per turn of the side-by-side measure")
    ap.add_argument("--python", default=sys.executable, help="interpreter the servers run on")
    ap.add_argument("--json", dest="json_path", help="default benchmarks/results/http-load-<time>.json")
    ap.add_argument(
        "--markdown",
        help="also write the table into this Markdown file, as its own section (scripts/bench: benchmarks/RESULTS-http.md)",
    )
    args = ap.parse_args(argv)
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    eras = [e.strip() for e in args.eras.split(",") if e.strip()]
    for s in servers:
        if s not in SERVERS:
            ap.error(f"unknown server {s!r}")
    for e in eras:
        if e not in ERAS:
            ap.error(f"unknown era {e!r}")
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.duration = args.duration or (1.5 if args.quick else 4.0)
    args.warmup = args.warmup if args.warmup is not None else (0.3 if args.quick else 0.5)
    if args.paired_seconds is None:
        args.paired_seconds = 2.0 if args.quick else 24.0
    vers = hc.versions(args.python, servers)
    for s in servers:
        if not vers.get(s):
            print(
                f"http_load: {s} is not installed for {args.python}; run scripts/bench (it installs the peers)",
                file=sys.stderr,
            )
            return 2
    load_before = hc.loadavg()
    started = time.time()
    print(
        f"http_load: {', '.join(servers)}; {', '.join(eras)}; {args.clients} clients; {args.rounds} round(s) of "
        f"{args.duration:g} s per figure; load {load_before}",
        file=sys.stderr,
    )
    raw: dict[str, dict[str, dict[str, list[Any]]]] = {s: {} for s in servers}
    info: dict[str, Any] = {"modern_unsupported": {}, "failures": []}
    for rnd in range(args.rounds):
        order = servers[rnd % len(servers) :] + servers[: rnd % len(servers)]
        era_order = eras if rnd % 2 == 0 else eras[::-1]
        for s in order:
            try:
                res = asyncio.run(measure_server(s, era_order, args, info))
            except Exception as exc:
                info["failures"].append(f"round {rnd + 1} {s}: {type(exc).__name__}: {exc}")
                print(f"  !! {s}: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            for era, figs in res.items():
                slot = raw[s].setdefault(era, {})
                for k, v in figs.items():
                    slot.setdefault(k, []).append(v)
    med, ratios = summarize(raw)
    paired: dict[str, Any] | None = None
    if "mcpio" in servers and "floor" in servers and args.paired_seconds > 0:
        print(f"  side by side: mcpio and floor, {args.paired_seconds:g} s each per era", file=sys.stderr)
        import http_paired  # it imports this module: here, not at the top

        try:
            paired = http_paired.run(
                eras,
                args.python,
                args.clients,
                args.paired_seconds,
                args.slice,
                args.timeout,
                ("mcpio", "floor"),
                instances=1 if args.quick else http_paired.INSTANCES,
            )
        except Exception as exc:
            info["failures"].append(f"side by side: {type(exc).__name__}: {exc}")
        for era, r in (paired or {}).items():
            if r["errors"]:
                info["failures"].append(f"side by side, {era}: {len(r['errors'])} errors: {r['errors'][:2]}")
            print(
                f"  side by side {era:<6} mcpio {r['cpu_us']['mcpio'] or 0:6.1f} µs  floor "
                f"{r['cpu_us']['floor'] or 0:6.1f} µs  ratio {r['ratio'] or 0:.2f}×",
                file=sys.stderr,
            )
    error_total = 0
    for s in servers:
        for era, figs in raw[s].items():
            total = sum(figs.get("error_count", []))
            med[s][era]["errors_total"] = total
            error_total += total
    meta = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "duration_s": round(time.time() - started, 1),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}",
        "python": args.python,
        "load_before": load_before,
        "load_after": hc.loadavg(),
        "rounds": args.rounds,
        "clients": args.clients,
        "seconds_per_figure": args.duration,
        "warmup_s": args.warmup,
        "quick": args.quick,
        "versions": vers,
        "mcpio_commit": hc.commit(),
        "client": "stdlib asyncio, HTTP/1.1 keep-alive, one connection per client",
    }
    md = table(med, ratios, servers, eras, meta, info)
    target_rows: list[dict[str, Any]] = []
    if "mcpio" in servers and "floor" in servers:
        target_md, target_rows = targets(med, eras, paired)
        md += "\n\n" + target_md
    uv = vers.get("uvicorn")
    parser = "httptools" if vers.get("httptools") else f"h11 {vers.get('h11') or '?'}"
    header = (
        f"Machine: {meta['machine']}; load average {meta['load_before']} before, {meta['load_after']} after; "
        f"{meta['date']}; {meta['duration_s']} s{' (quick mode)' if args.quick else ''}; mcpio at "
        f"{meta['mcpio_commit'] or '?'}; uvicorn {uv} ({parser}, {'uvloop' if vers.get('uvloop') else 'asyncio'} loop); "
        f"{args.duration:g} s per figure."
    )
    doc = {
        "meta": meta,
        "median": med,
        "ratio_to_mcpio": ratios,
        "targets": target_rows,
        "info": info,
        "raw": raw,
        "side_by_side": paired,
        "ok": error_total == 0 and not info["failures"],
    }
    path = (
        Path(args.json_path)
        if args.json_path
        else hc.HERE / "results" / f"http-load-{time.strftime('%Y%m%d-%H%M%S')}{'-quick' if args.quick else ''}.json"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
    print()
    print(header)
    print()
    print(md)
    print(f"\nhttp_load: JSON written to {path}", file=sys.stderr)
    if args.markdown:
        hc.write_section(
            Path(args.markdown),
            "http_load",
            "Requests/s and latency at 50 concurrent clients (`benchmarks/http_load.py`)",
            f"{header}\n\n{md}",
        )
    return 0 if doc["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
