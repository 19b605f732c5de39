"""benchmarks/typed_results.py runs (quick mode) and reports every row; no timing assertions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_typed_results_benchmark_runs() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "typed_results.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    for row in (
        "| tools/list (100 tools) |",
        "| tools/call add |",
        "| wrap 100 tools (Tool views) |",
        "| convert 100 tools to msgspec Structs |",
    ):
        assert row in out.stdout, out.stdout
