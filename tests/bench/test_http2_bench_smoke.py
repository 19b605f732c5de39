"""Smoke test of benchmarks/http2_servers.py (hypercorn only, tiny): the harness runs, the
server answers every request of both workloads over one h2c connection (0 errors), and the
table is printed. It asserts no timing (the machine is shared); granian is not installed for
the tests, so the comparison itself is run by hand (docs/evidence/benchmarks.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_http2_bench_runs_tiny():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "http2_servers.py"), "--servers", "hypercorn", "--rounds", "1"]
        + ["--duration", "0.5", "--clients", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(ROOT),
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("|")[1:-1] for line in proc.stdout.splitlines() if line.startswith("| hypercorn")]
    assert [r[1].strip() for r in rows] == ["call", "sse"], proc.stdout
    for r in rows:
        assert float(r[2]) > 0 and r[5].strip() == "0", proc.stdout  # requests answered, none failed
