"""Smoke test of benchmarks/proxy_bench.py in quick mode: it runs, every route answered every call
right (the harness asserts each answer), and the JSON holds every figure. No timing is asserted.
The peers (FastMCP, mcp-proxy, supergateway) run where installed and are left out with a reason
otherwise; mcpio's own routes (stdio -> stdio for a client of either era, stdio -> HTTP,
HTTP -> stdio) always run."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MCPIO_ROUTES = {
    "direct",
    "floor hop (copies bytes)",
    "mcpio proxy",
    "mcpio gateway",
    "direct 2026",
    "mcpio proxy 2026",
    "direct HTTP",
    "mcpio run URL",
    "mcpio run CMD -t http",
    "floor URL bridge",
    "floor CMD bridge",
}
PEERS = {
    "fastmcp proxy",
    "fastmcp URL",
    "fastmcp CMD",
    "mcp-proxy URL",
    "mcp-proxy CMD",
    "supergateway URL",
    "supergateway CMD",
}


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
    assert set(result["routes"]) >= MCPIO_ROUTES
    for figures in result["routes"].values():
        assert figures["p50_us"] > 0 and figures["calls_per_s"] > 0
        # CPU per call is counted in clock ticks (10 ms): a quick run's may round to 0
        assert all(math.isfinite(v) and v >= 0 for v in figures.values())
    # Every peer either measured or left out with a reason, and said so on one line.
    assert set(result["routes"]) | set(result["skipped"]) == MCPIO_ROUTES | PEERS
    assert not set(result["routes"]) & set(result["skipped"])
    for name, why in result["skipped"].items():
        assert why and f"SKIP {name}: {why}" in proc.stdout
    assert result["fleet"]["upstreams"] == 3 and result["fleet"]["rss_gateway_kib"] > 0
    assert set(result["targets"]) == set(result["met"])
    for name in result["targets"]:
        assert f"{name} " in proc.stdout
    assert "the stdio hop's floor (a relay copying bytes) is " in proc.stdout
    assert not any("floor" in name for name in result["targets"])  # references, not targets
    for section in ("stdio -> HTTP", "HTTP -> stdio"):
        assert f"the {section} bridges' floor (copies bodies) makes " in proc.stdout
    assert "mcpio proxy 2026 (stdio, 2026-07-28) p50 <= 2x direct 2026" in result["targets"]
    assert "targets:" in proc.stdout and ("PASS" in proc.stdout or "MISS" in proc.stdout)
