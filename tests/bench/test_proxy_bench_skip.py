"""benchmarks/proxy_bench.py leaves out a peer that is absent or fails to start, with the reason
(the process's last stderr line), and keeps measuring the rest; an mcpio route failing stops the
run. In process, on run_rounds, with real processes: the direct stdio server and a "peer" that
exits before it listens."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import proxy_bench as pb

FAILS = [sys.executable, "-c", "import sys; sys.exit('ImportError: this peer cannot start')"]


def direct() -> pb.Route:
    return pb.Route("direct", pb.STDIO, True, lambda: pb.latency_and_throughput([pb.PY, str(pb.UPSTREAM)], "add", 5, 5))


def test_a_peer_that_fails_to_start_is_skipped_with_why() -> None:
    table = [
        direct(),
        pb.Route("broken peer", pb.FROM_HTTP, False, pb.served_measure(lambda port: FAILS, 5, 5)),
        pb.Route("absent peer", pb.TO_HTTP, False, "not installed (how to install it)"),
    ]
    measured, skipped = pb.run_rounds(table, 2)
    assert list(measured) == ["direct"] and len(measured["direct"]) == 2
    assert skipped["absent peer"] == "not installed (how to install it)"
    why = skipped["broken peer"]
    assert why.startswith("failed: RuntimeError: it exited (1) before listening")
    assert why.endswith("ImportError: this peer cannot start") and "\n" not in why


def test_an_mcpio_route_that_fails_stops_the_run() -> None:
    table = [
        direct(),
        pb.Route("mcpio run CMD -t http", pb.FROM_HTTP, True, pb.served_measure(lambda port: FAILS, 5, 5)),
    ]
    with pytest.raises(RuntimeError, match="this peer cannot start"):
        pb.run_rounds(table, 1)
