"""benchmarks/openapi_bench.py runs (quick mode) and reports every row; no timing assertions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_openapi_benchmark_runs() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "openapi_bench.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    for row in ("| httpx direct |", "| mcpio stdio |", "| mcpio in-process |", "| mcpio Server.from_openapi, GitHub ("):
        assert row in out.stdout, out.stdout
