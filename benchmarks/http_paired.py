"""Server CPU per request of two HTTP servers measured side by side: mcpio and the floor both
running, their loads taking turns every fraction of a second, so that both see the same machine.

    python benchmarks/http_paired.py                         # mcpio vs floor, both eras, 20 s each
    python benchmarks/http_paired.py --seconds 8 --slice 0.4 # shorter
    (http_load.py runs it for the issue-17 CPU target when its servers include mcpio and floor)

Why (issue 17, benchmarks/PROFILE.md §20): on a shared 2-vCPU machine the same work's CPU time
moves by ±25 % over seconds, for every process at once (the load client's own CPU per request
moves with the server's). ``http_load``'s per-server figures are seconds to minutes apart, so one
server's figure can meet a fast minute and the other's a slow one: the same code gave a
mcpio/floor ratio of 1.22× and 1.50× four minutes apart. Here the two servers alternate in
slices of ``--slice`` seconds (order A B B A …, so that a drift during a pair falls on both
alike), each slice followed until its last request is answered; each server's CPU
(``/proc/PID/stat`` utime + stime) is counted over its own slices only, with the requests
answered in them. The same requests as ``http_load`` (``tools/call add`` of two integers, every
answer checked), the same clients (C per server, one keep-alive connection each; legacy: a
session each, opened untimed), the same servers and uvicorn settings
(``benchmarks/http_server.py KIND``). On a machine with two CPUs or more both servers are pinned
to the last CPU and the clients to the first (``--no-pin``: not), as the third-party workload
pins its server: client and server never share a CPU, and both servers run on the same one.

The same code's figure also moves with the server process itself: a fresh pair of processes
can sit 10-20 % from the last pair for the whole of its life (memory layout, hash seed; seen
here: 1.04× and 1.24× for the same code, each with tight per-pair quartiles). So the measure
takes ``--instances`` fresh pairs of processes (default 8), each for its share of the seconds:
with 4, one outlying process (seen here: a pair at 1.50× among pairs at 1.02-1.30×) moved the
figure by ~6 %; 8 halve the weight of any one (benchmarks/PROFILE.md §21).

Figures: each server's CPU per request over all its slices, their ratio (the figure), the ratio
per pair of processes, and the quartiles of the per-slice-pair ratios. A server idle between
its slices is not counted while idle (its timers: none run per request).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from typing import Any

import http_common as hc
import http_load as hl

INSTANCES = 8  # fresh pairs of server processes per measure (module docstring)


class Group:
    """C clients of one server, sending while it is their turn (``turn``)."""

    def __init__(self, srv: hc.ServerProc, era: str, clients: int, timeout: float) -> None:
        self.srv = srv
        self.era = era
        self.clients = clients
        self.timeout = timeout
        self.turn = asyncio.Event()
        self.quiet = asyncio.Event()  # no request in flight
        self.quiet.set()
        self.in_flight = 0
        self.done = 0
        self.errors: list[str] = []
        self.stopping = False
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Connect every client (legacy: open its session), then leave them waiting for a turn."""
        opened = [asyncio.get_running_loop().create_future() for _ in range(self.clients)]
        self.tasks = [asyncio.create_task(self._client(k, opened[k])) for k in range(self.clients)]
        await asyncio.wait_for(asyncio.gather(*opened), self.timeout + 30)

    async def _client(self, k: int, opened: asyncio.Future[None]) -> None:
        conn = hc.RawConn("127.0.0.1", self.srv.port)
        modern = self.era == "modern"
        sid = None
        try:
            if modern:
                headers = hl.MODERN_HEADERS
                await conn.connect()
            else:
                sid = await hl.open_session(conn, self.timeout)
                headers = hl.legacy_headers(sid)
            opened.set_result(None)
            n = 0
            while True:
                await self.turn.wait()
                if self.stopping:
                    break
                n += 1
                a = k * 1_000_000 + n
                self.in_flight += 1
                self.quiet.clear()
                try:
                    r = await conn.request("POST", "/mcp", hc.add_body(n, a, 2, modern), headers, self.timeout)
                finally:
                    self.in_flight -= 1
                    if not self.in_flight:
                        self.quiet.set()
                wrong = hl.wrong_answer(r, n, a)
                if wrong is not None:
                    self.errors.append(wrong)
                    if len(self.errors) > 100:
                        return
                    continue
                self.done += 1
            if sid is not None:
                await conn.request("DELETE", "/mcp", b"", hl.legacy_headers(sid), self.timeout)
        except (TimeoutError, hc.HTTPError, OSError, ValueError) as exc:
            self.errors.append(f"client {k}: {type(exc).__name__}: {exc}")
            if not opened.done():
                opened.set_exception(exc)
        finally:
            conn.close()

    async def slice(self, seconds: float) -> tuple[float, int]:
        """One turn of ``seconds``, then until its last request is answered: (CPU s, requests)."""
        cpu0, n0 = self.srv.cpu_seconds(), self.done
        self.turn.set()
        await asyncio.sleep(seconds)
        self.turn.clear()
        await asyncio.wait_for(self.quiet.wait(), self.timeout + 30)
        return self.srv.cpu_seconds() - cpu0, self.done - n0

    async def stop(self) -> None:
        self.stopping = True
        self.turn.set()
        await asyncio.wait_for(asyncio.gather(*self.tasks), self.timeout + 30)


async def paired(
    servers: dict[str, hc.ServerProc], era: str, clients: int, seconds: float, slice_s: float, timeout: float
) -> dict[str, Any]:
    """Both servers' CPU per request in ``era``, their turns alternating (module docstring)."""
    a, b = list(servers)
    groups = {name: Group(srv, era, clients, timeout) for name, srv in servers.items()}
    for g in groups.values():
        await g.start()
    for name in (a, b):  # warm-up: one slice each, not counted
        await groups[name].slice(slice_s)
    cpu = {a: 0.0, b: 0.0}
    done = {a: 0, b: 0}
    pairs: list[float] = []
    for i in range(max(1, round(seconds / slice_s))):
        order = (a, b) if i % 2 == 0 else (b, a)  # A B B A ...: a drift within a pair falls on both
        per: dict[str, float] = {}
        for name in order:
            c, n = await groups[name].slice(slice_s)
            cpu[name] += c
            done[name] += n
            per[name] = c / n if n else float("nan")
        if per[b] > 0:
            pairs.append(per[a] / per[b])
    for g in groups.values():
        await g.stop()
    return {"cpu": cpu, "requests": done, "pairs": pairs, "errors": [e for g in groups.values() for e in g.errors]}


def summary(parts: list[dict[str, Any]], names: tuple[str, str]) -> dict[str, Any]:
    """One era's figures over the instances' ``paired()`` parts: each server's CPU per request
    over all its slices, their ratio, the per-instance ratios and the per-pair quartiles."""
    a, b = names
    cpu = {k: sum(p["cpu"][k] for p in parts) for k in names}
    done = {k: sum(p["requests"][k] for p in parts) for k in names}
    us = {k: cpu[k] / done[k] * 1e6 if done[k] else None for k in names}
    each = [
        (p["cpu"][a] / p["requests"][a]) / (p["cpu"][b] / p["requests"][b])
        for p in parts
        if p["requests"][a] and p["requests"][b] and p["cpu"][b]
    ]
    pairs = sorted(x for p in parts for x in p["pairs"] if x == x)
    return {
        "cpu_us": us,
        "ratio": us[a] / us[b] if us[a] and us[b] else None,
        "instance_ratios": each,
        "pair_quartiles": statistics.quantiles(pairs, n=4) if len(pairs) >= 2 else None,
        "pairs": len(pairs),
        "requests": done,
        "errors": [e for p in parts for e in p["errors"]],
    }


def run(
    eras: list[str],
    python: str,
    clients: int,
    seconds: float,
    slice_s: float,
    timeout: float,
    names: tuple[str, str],
    pin: bool = True,
    instances: int = INSTANCES,
) -> dict[str, dict[str, Any]]:
    """{era: summary()} of ``instances`` pairs of fresh server processes, each measured for
    ``seconds / instances`` per era (the era order alternating): one process's figure can sit
    ±10 % from another's of the same code for the whole of its life (memory layout, hash seed),
    so that no one pair decides. ``pin`` (on a machine with two CPUs or more): both servers on
    the last CPU, this process (the clients) on the first, as the third-party workload pins its
    server: a client and a server measured never share a CPU, and the two servers share one."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    pin = pin and len(cpus) >= 2
    mine = set(cpus)
    parts: dict[str, list[dict[str, Any]]] = {era: [] for era in eras}
    try:
        if pin:
            os.sched_setaffinity(0, {cpus[0]})
        for i in range(instances):
            # A name twice (an A/A check: the measure's own bias, ~1.00×): the second is NAME#2
            procs = {name: hc.ServerProc(name.split("#")[0], python) for name in (names if i % 2 == 0 else names[::-1])}
            try:
                if pin:
                    for p in procs.values():
                        os.sched_setaffinity(p.pid, {cpus[-1]})  # at once: its threads inherit it
                for p in procs.values():
                    p.wait_listening()
                for era in eras if i % 2 == 0 else eras[::-1]:
                    slices = {name: procs[name] for name in names}
                    parts[era].append(asyncio.run(paired(slices, era, clients, seconds / instances, slice_s, timeout)))
            finally:
                for p in procs.values():
                    p.stop()
    finally:
        if pin:
            os.sched_setaffinity(0, mine)
    return {era: summary(parts[era], names) for era in eras}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--servers", default="mcpio,floor", help="two of: " + ", ".join(hl.SERVERS) + " (one twice: an A/A check)"
    )
    ap.add_argument("--eras", default="legacy,modern")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=20.0, help="measured seconds per server and era (default 20)")
    ap.add_argument("--slice", type=float, default=0.5, help="seconds per turn (default 0.5)")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--no-pin", action="store_true", help="leave the servers and the clients unpinned")
    ap.add_argument(
        "--instances", type=int, default=INSTANCES, help=f"fresh pairs of server processes (default {INSTANCES})"
    )
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args(argv)
    names = tuple(s.strip() for s in args.servers.split(","))
    if len(names) == 2 and names[0] == names[1]:  # the same server on both sides: an A/A check
        names = (names[0], names[1] + "#2")
    if len(names) != 2:
        ap.error("--servers: exactly two")
    t0 = time.time()
    res = run(
        args.eras.split(","),
        args.python,
        args.clients,
        args.seconds,
        args.slice,
        args.timeout,
        names,
        not args.no_pin,
        args.instances,
    )  # type: ignore[arg-type]
    a, b = names
    for era, r in res.items():
        q = r["pair_quartiles"]
        spread = f"; pairs' quartiles {q[0]:.2f}–{q[2]:.2f}×" if q else ""
        each = ", ".join(f"{x:.2f}" for x in r["instance_ratios"])
        ratio = f"{r['ratio']:.2f}×" if r["ratio"] else "—"
        print(
            f"{era:<7} {a} {r['cpu_us'][a] or 0:6.1f} µs  {b} {r['cpu_us'][b] or 0:6.1f} µs  {a}/{b} {ratio}"
            f" (instances {each}{spread}; {r['requests'][a]:,} and {r['requests'][b]:,} requests;"
            f" {len(r['errors'])} errors)"
        )
    print(f"({time.time() - t0:.0f} s)", file=sys.stderr)
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(res, f, indent=1)
    return 0 if not any(r["errors"] for r in res.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
