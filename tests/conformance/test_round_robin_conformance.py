"""The official conformance suite's server scenarios through a real round-robin proxy: nginx
(no affinity, HTTP/1.1 keep-alive upstream, ``proxy_buffering off``) in front of three
``mcpio run -t http --redis`` processes sharing one redis-server and one
``MCPIO_STATE_SECRET``. Each request of a session may reach any process (the access log proves
it did), so the legacy era passes only with its sessions, SSE resumption and the client's
answers shared on Redis. In the 2026-07-28 era every scenario passes, the tasks extension's
included: a task made on one process is read, answered and cancelled on the others (its record
on Redis, see mcpio._state._redis_tasks)."""

from __future__ import annotations

import collections
import dataclasses
import os
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


@dataclasses.dataclass
class Run:
    checks: dict[str, list[dict]]
    returncode: int
    where: str  # the summary and logs, for assertion messages
    access: list[str]  # nginx's access log: METHOD STATUS BACKEND session=ID
    ports: list[int]

    def failures(self, keep=lambda scenario: True) -> list[str]:
        return [
            f"{scenario}: {c['id']}: {c.get('errorMessage') or c.get('description')}"
            for scenario, items in self.checks.items()
            for c in items
            if c.get("status") == "FAILURE" and keep(scenario)
        ]


def run_suite(requirements: str, redis: str, tmp: Path) -> Run:
    ports = [free_port() for _ in range(BACKENDS)]
    logs = [tmp / f"backend-{p}.log" for p in ports]
    env = {**os.environ, "MCPIO_STATE_SECRET": "round-robin-test-secret-0123456789abcdef"}
    procs = []
    for port, log in zip(ports, logs, strict=True):
        with open(log, "wb") as out:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "mcpio", "run", "tests/conformance/server.py", "-t", "http"]
                    + ["--port", str(port), "--redis", redis],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=str(ROOT),
                    env=env,
                )
            )
    try:
        for port, proc in zip(ports, procs, strict=True):
            wait_port(port, proc=proc)
        with round_robin(ports) as (port, access):
            proc = subprocess.run(
                [*peers.conformance_argv(), "server", "--url", f"http://127.0.0.1:{port}/mcp"]
                + ["--requirements", requirements, "-o", str(tmp / "results")],
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
    return Run(_checks(tmp / "results"), proc.returncode, where, lines, ports)


@pytest.fixture(scope="module")
def modern_run(redis_server, tmp_path_factory) -> Run:  # noqa: F811
    if redis_server.proc is None or redis_server.proc.poll() is not None:
        redis_server.start()
    redis_server.flush()
    return run_suite("2026-07-28", redis_server.url, tmp_path_factory.mktemp("modern"))


def is_task(scenario: str) -> bool:
    return scenario.startswith("tasks-")


@pytest.mark.timeout(600)
def test_legacy_conformance_through_a_round_robin_proxy(redis_url, tmp_path: Path) -> None:  # noqa: F811
    run = run_suite("2025-11-25", redis_url, tmp_path)
    assert run.checks, f"the suite wrote no results{run.where}"
    failures = run.failures()
    assert not failures, "FAILURE checks:\n  " + "\n  ".join(failures) + run.where
    assert run.returncode == 0, f"the suite exited {run.returncode}{run.where}"
    # No affinity: every backend served, and most sessions had requests served by several of them.
    backends = collections.defaultdict(set)
    for line in run.access:
        _method, _status, upstream, session = line.split(" ", 3)
        if session != "session=-":
            backends[session].add(upstream)
    assert {u for us in backends.values() for u in us} == {f"127.0.0.1:{p}" for p in run.ports}
    spread = [s for s, us in backends.items() if len(us) > 1]
    assert len(spread) >= len(backends) // 2, f"{len(spread)} of {len(backends)} sessions used several processes"


@pytest.mark.timeout(600)
def test_stateless_conformance_through_a_round_robin_proxy(modern_run: Run) -> None:
    assert modern_run.checks, f"the suite wrote no results{modern_run.where}"
    failures = modern_run.failures(lambda s: not is_task(s))
    assert not failures, "FAILURE checks:\n  " + "\n  ".join(failures) + modern_run.where
    assert {u.split(" ")[2] for u in modern_run.access} == {f"127.0.0.1:{p}" for p in modern_run.ports}


@pytest.mark.timeout(600)
def test_tasks_extension_through_a_round_robin_proxy(modern_run: Run) -> None:
    assert any(is_task(s) for s in modern_run.checks), f"no tasks scenario ran{modern_run.where}"
    failures = modern_run.failures(is_task)
    assert not failures, "FAILURE checks:\n  " + "\n  ".join(failures)
