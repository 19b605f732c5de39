"""A gateway's and a proxy's cold start against their upstream's own (issue 35).

Each row is timed from the spawn of the process a host starts, with the standard library's
pipes (proxy_bench.py's ``Server``): to the ``initialize`` answer, then to the first
``tools/list`` answer (for the gateway: with its upstream's tools). Three commands, started
one at a time, in turn, ``--runs`` times each (medians):

* ``upstream alone``: ``python benchmarks/servers/mcpio_server.py`` (or ``--upstream "COMMAND"``,
  e.g. ``"python -m mcp_server_time"``: a server that loads everything before it reads stdin,
  where mcpio's answers its first request, then loads its engine);
* ``mcpio run gateway.json``: a gateway over that one upstream;
* ``mcpio run "python … mcpio_server.py"``: the single-upstream proxy of it.

Target (PASS/MISS, printed, never asserted): the first ``tools/list`` of the gateway and of the
proxy within the upstream's own + 50 ms. Note the machine's load (``uptime``) with the figures:
on a loaded machine every row is slower, and the gaps wider.

    python benchmarks/gateway_cold.py --runs 7
    python benchmarks/gateway_cold.py --runs 7 --against /tmp/before/src   # before/after in one run

``--against SRC`` adds the gateway and proxy rows again with ``PYTHONPATH=SRC`` (another
version's ``src/``, e.g. ``git archive main src | tar -x -C /tmp/before``), in the same turns.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from proxy_bench import PY, UPSTREAM, Server  # noqa: E402

TARGET_MS = 50.0


def one(argv: list[str], src: str | None = None) -> tuple[float, float]:
    """Milliseconds from the spawn of ``argv`` (with ``PYTHONPATH=src``, if given) to its
    initialize answer and to its tools/list answer."""
    before = os.environ.get("PYTHONPATH")
    if src is not None:
        os.environ["PYTHONPATH"] = src  # read by Server's environment (bench_env)
    try:
        s = Server(argv)
    finally:
        if src is not None:
            os.environ.pop("PYTHONPATH") if before is None else os.environ.update(PYTHONPATH=before)
    try:
        init = s.initialize()
        s.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
        tools = s.answer(7)["result"]["tools"]
        listed = time.perf_counter() - s.started
        assert tools, f"{argv}: no tools{s.tail()}"
        return init * 1e3, listed * 1e3
    finally:
        s.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", help="write the medians to this file")
    ap.add_argument("--against", metavar="SRC", help="also the gateway and proxy rows with PYTHONPATH=SRC")
    ap.add_argument("--upstream", metavar="COMMAND", help="the upstream's command line (default: mcpio_server.py)")
    args = ap.parse_args(argv)
    upstream = shlex.split(args.upstream) if args.upstream else [PY, str(UPSTREAM)]
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "gateway.json"
        config.write_text(json.dumps({"mcpServers": {"bench": {"command": upstream[0], "args": upstream[1:]}}}))
        rows: dict[str, tuple[list[str], str | None]] = {
            "upstream alone": (upstream, None),
            "mcpio run gateway.json": ([PY, "-m", "mcpio", "run", str(config)], None),
            'mcpio run "CMD" (proxy)': ([PY, "-m", "mcpio", "run", shlex.join(upstream)], None),
        }
        if args.against:
            for name in list(rows)[1:]:
                rows[f"{name} [against]"] = (rows[name][0], args.against)
        for command, src in rows.values():  # warm the .pyc files and the page cache
            one(command, src)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
        for _ in range(args.runs):
            for name, (command, src) in rows.items():  # in turn: a load change hits every row alike
                times[name].append(one(command, src))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    medians = {
        name: {
            "initialize_ms": statistics.median(t[0] for t in ts),
            "tools_list_ms": statistics.median(t[1] for t in ts),
        }
        for name, ts in times.items()
    }
    print(f"cold start, medians of {args.runs} runs (load average {load:.2f}):")
    print(f"  {'':<38} {'initialize':>11} {'tools/list':>11}")
    for name, m in medians.items():
        print(f"  {name:<38} {m['initialize_ms']:>8.0f} ms {m['tools_list_ms']:>8.0f} ms")
    alone = medians["upstream alone"]["tools_list_ms"]
    for name in list(rows)[1:]:
        extra = medians[name]["tools_list_ms"] - alone
        verdict = "PASS" if extra <= TARGET_MS else "MISS"
        print(f"  {name}: first tools/list {extra:+.0f} ms vs the upstream alone (target +{TARGET_MS:.0f}): {verdict}")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": args.runs, "load": load, "medians": medians}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
