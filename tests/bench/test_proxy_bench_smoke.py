"""Smoke test of benchmarks/proxy_bench.py in quick mode: it runs, every route answered every call
right (the harness asserts each answer), and the JSON holds every figure. No timing is asserted."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_proxy_bench_quick(tmp_path: Path) -> None:
    out = tmp_path / "proxy.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "proxy_bench.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert {"direct", "mcpio proxy", "mcpio gateway"} <= set(result["routes"])
    for figures in result["routes"].values():
        assert all(math.isfinite(v) and v > 0 for v in figures.values())
    assert result["fleet"]["upstreams"] == 3 and result["fleet"]["rss_gateway_kib"] > 0
    assert set(result["targets"]) == set(result["met"])
    assert "targets:" in proc.stdout
