"""The official conformance suite's 2026-07-28 requirement set — the ``tasks-*`` extension
scenarios included — through a real round-robin HAProxy in front of two conformance fixture
processes that share one real redis-server (``--redis``) and one ``MCPIO_STATE_SECRET``: each
request of a scenario may reach either process (``option http-server-close`` balances every
request), so a task created on one is read, answered and cancelled through the other."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import peers
from tests.support.http import free_port, wait_port

FIXTURE = Path(__file__).resolve().parents[1] / "conformance" / "server.py"


def _start(argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )


@pytest.fixture
def round_robin(redis_url: str, tmp_path: Path) -> Iterator[tuple[str, list[int]]]:
    """The proxy's URL, and the two processes' ports."""
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.fail("haproxy is not installed: run `bash scripts/setup-system haproxy` (scripts/test does)")
    env = {**os.environ, "MCPIO_STATE_SECRET": "round-robin-test-secret", "PYTHONUNBUFFERED": "1"}
    ports = [free_port(), free_port()]
    procs = [_start([sys.executable, str(FIXTURE), "--port", str(p), "--redis", redis_url], env) for p in ports]
    front = free_port()
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(
        "defaults\n  mode http\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\n"
        "  option http-server-close\n"
        f"frontend mcp\n  bind 127.0.0.1:{front}\n  default_backend workers\n"
        "backend workers\n  balance roundrobin\n"
        + "".join(f"  server w{i} 127.0.0.1:{p}\n" for i, p in enumerate(ports))
    )
    try:
        for p, proc in zip(ports, procs, strict=True):
            wait_port(p, proc=proc)
        procs.append(_start([haproxy, "-f", str(cfg), "-db"]))
        wait_port(front, proc=procs[-1])
        yield f"http://127.0.0.1:{front}/mcp", ports
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.timeout(600)
def test_the_2026_conformance_set_with_tasks_passes_through_a_round_robin_proxy(round_robin, redis_url, tmp_path):
    import redis

    url, _ = round_robin
    out = tmp_path / "results"
    proc = subprocess.run(
        [*peers.conformance_argv(), "server", "--url", url, "--requirements", "2026-07-28", "-o", str(out)],
        capture_output=True,
        text=True,
        env=peers.peers_env(),
        timeout=540,
        stdin=subprocess.DEVNULL,
    )
    checks = {f.parent.name: json.loads(f.read_text()) for f in out.glob("server-*/checks.json")}
    failures = [
        f"{name}: {c['id']}: {c.get('errorMessage')}"
        for name, cs in checks.items()
        for c in cs
        if c.get("status") == "FAILURE"
    ]
    assert proc.returncode == 0 and not failures, (failures, proc.stdout[-4000:])
    tasks_scenarios = [name for name in checks if name.startswith("server-tasks-")]
    assert len(tasks_scenarios) >= 9, sorted(checks)  # the extension's scenarios ran too
    client = redis.Redis.from_url(redis_url)  # the tasks lived in Redis, shared by both processes
    try:
        assert client.keys("mcpio:task:*")
    finally:
        client.close()
