"""The in-process benchmarks run (quick mode) and report every row; no timing assertions:
benchmarks/typed_results.py (typed client results) and benchmarks/deps_cost.py (what Depends costs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ROWS = {
    "typed_results.py": (
        "| tools/list (100 tools) |",
        "| tools/call add |",
        "| wrap 100 tools (Tool views) |",
        "| convert 100 tools to msgspec Structs |",
    ),
    "deps_cost.py": (
        "| passed_in |",
        "| no_parameter |",
        "| entered_in_body |",
        "| sync_provider |",
        "| async_provider |",
        "| context_manager |",
    ),
}


@pytest.mark.parametrize("script", sorted(ROWS))
def test_benchmark_runs_and_prints_every_row(script: str) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    for row in ROWS[script]:
        assert row in out.stdout, out.stdout
