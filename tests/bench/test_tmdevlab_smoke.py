"""Smoke test of benchmarks/tmdevlab/run.py (TM Dev Lab's workload): mcpio only, 5 users, 2 s.

It checks that the harness runs, every answer of the four tools, tools/list and initialize was
right (the harness checks each one), and that requests were counted. No timing is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(120)
def test_tmdevlab_workload_runs_clean_on_mcpio() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "tmdevlab" / "run.py"),
            "--servers",
            "mcpio",
            "--quick",
            "--vus",
            "5",
            "--duration",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| MCP requests/s |" in proc.stdout
    written = sorted((ROOT / "benchmarks" / "results").glob("tmdevlab-*.json"))[-1]
    doc = json.loads(written.read_text())
    assert doc["median"]["mcpio"]["errors"] == 0
    assert doc["median"]["mcpio"]["requests"] > 0
