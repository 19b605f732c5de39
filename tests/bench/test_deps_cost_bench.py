"""benchmarks/deps_cost.py runs (quick mode) and reports every variant; no timing assertions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_deps_cost_benchmark_runs() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "deps_cost.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    for row in (
        "| passed_in |",
        "| no_parameter |",
        "| entered_in_body |",
        "| sync_provider |",
        "| async_provider |",
        "| context_manager |",
    ):
        assert row in out.stdout, out.stdout
