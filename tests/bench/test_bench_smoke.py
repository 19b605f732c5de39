"""Smoke test of the benchmark harness (benchmarks/run.py): mcpio and the floor, quick mode.

It checks that the harness runs and writes sane JSON, and that mcpio answered every call of
every figure correctly. It asserts no timing: this machine is shared, and timing targets are
judged on full runs (``scripts/bench``), not here.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ("floor", "mcpio")
FIGURES = (
    "cold_init_ms",
    "cold_discover_ms",
    "cold_init_200_ms",
    "seq_p50_us",
    "seq_p99_us",
    "pipelined_per_s",
    "burst_cpu_us",
    "echo_1MiB_ms",
    "echo_10MiB_ms",
    "rss_seq_mib",
    "rss_burst_mib",
    "shutdown_idle_ms",
    "shutdown_load_ms",
    "list200_ms",
)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--servers",
            ",".join(SERVERS),
            "--quick",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=110,
        cwd=ROOT,
    )
    assert proc.returncode == 0, f"the harness failed:\n{proc.stdout}\n{proc.stderr}"
    assert "| figure" in proc.stdout, proc.stdout  # the table is printed
    return json.loads(out.read_text())


@pytest.mark.timeout(120)
def test_quick_run_writes_sane_json(results: dict) -> None:
    meta = results["meta"]
    assert meta["quick"] is True and meta["rounds"] == 1
    assert meta["versions"].get("mcpio"), meta["versions"]
    for server in SERVERS:
        med = results["median"][server]
        for key in FIGURES:
            value = med.get(key)
            assert isinstance(value, (int, float)) and math.isfinite(value) and value > 0, (server, key, value)
        assert results["raw"][server]["last_answered"] == [True]
        ratios = results["ratio_to_floor"][server]
        assert ratios["cold_init_ms"] > 0
    assert results["ratio_to_floor"]["floor"]["seq_p50_us"] == pytest.approx(1.0)
    assert {t["target"] for t in results["targets"]} >= {
        "cold start ≤ 2× floor",
        "cold start with 200 tools ≤ 2× floor (also 200)",
        "def tools: p50 ≤ 1.5× floor",
    }
    info = results["info"]["mcpio"]
    assert info["list200_pages"] >= 1 and info["list200_bytes"] > 10_000
    assert info["discover_answer"]  # a result or an error, recorded either way


@pytest.mark.timeout(120)
def test_quick_run_answered_everything_correctly(results: dict) -> None:
    # Every id of the burst answered exactly once with the right sum, echoes intact, the request
    # written just before stdin EOF answered, clean exits.
    assert results["checks"] == {s: [] for s in SERVERS}
    assert results["raw"]["mcpio"]["exit_code"] == [0]
