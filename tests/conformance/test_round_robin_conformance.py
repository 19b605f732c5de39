"""Every legacy-era (2025-11-25) server scenario of the official conformance suite through a
real round-robin proxy: nginx (no affinity, HTTP/1.1 keep-alive upstream, ``proxy_buffering
off``) in front of three ``mcpio run -t http --redis`` processes sharing one redis-server. Each
request of a session may reach any process (the access log proves it did), so this passes
only with legacy sessions, SSE resumption and the client's answers shared on Redis."""

from __future__ import annotations

import collections
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.test_server_conformance import _checks
from tests.support import peers
from tests.support.http import ROOT, free_port, wait_port
from tests.support.nginx import round_robin
from tests.support.redis import redis_server, redis_url  # noqa: F401  (fixtures)

BACKENDS = 3


@pytest.mark.timeout(600)
def test_legacy_conformance_through_a_round_robin_proxy(redis_url, tmp_path: Path) -> None:  # noqa: F811
    ports = [free_port() for _ in range(BACKENDS)]
    logs = [tmp_path / f"backend-{p}.log" for p in ports]
    procs = []
    for port, log in zip(ports, logs, strict=True):
        with open(log, "wb") as out:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "mcpio", "run", "tests/conformance/server.py", "-t", "http"]
                    + ["--port", str(port), "--redis", redis_url],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=str(ROOT),
                )
            )
    try:
        for port, proc in zip(ports, procs, strict=True):
            wait_port(port, proc=proc)
        with round_robin(ports) as (port, access):
            proc = subprocess.run(
                [*peers.conformance_argv(), "server", "--url", f"http://127.0.0.1:{port}/mcp"]
                + ["--requirements", "2025-11-25", "-o", str(tmp_path / "results")],
                capture_output=True,
                text=True,
                env=peers.peers_env(),
                timeout=540,
                stdin=subprocess.DEVNULL,
            )
            lines = access.read_text().splitlines()
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)
    out = proc.stdout
    summary = out[out.find("=== SUMMARY ===") :] if "=== SUMMARY ===" in out else out[-6000:]
    where = f"\n{summary}\n--- stderr ---\n{proc.stderr[-2000:]}\n--- backend logs ---\n" + "\n".join(
        log.read_text()[-1500:] for log in logs
    )
    checks = _checks(tmp_path / "results")
    failures = [
        f"{scenario}: {c['id']}: {c.get('errorMessage') or c.get('description')}"
        for scenario, items in checks.items()
        for c in items
        if c.get("status") == "FAILURE"
    ]
    assert checks, f"the suite wrote no results{where}"
    assert not failures, "FAILURE checks:\n  " + "\n  ".join(failures) + where
    assert proc.returncode == 0, f"the suite exited {proc.returncode}{where}"
    # No affinity: every backend served, and sessions had requests served by several of them.
    backends = collections.defaultdict(set)
    for line in lines:
        _method, _status, upstream, session = line.split(" ", 3)
        if session != "session=-":
            backends[session].add(upstream)
    assert {u for us in backends.values() for u in us} == {f"127.0.0.1:{p}" for p in ports}
    spread = [s for s, us in backends.items() if len(us) > 1]
    assert len(spread) >= len(backends) // 2, f"{len(spread)} of {len(backends)} sessions used several processes"
