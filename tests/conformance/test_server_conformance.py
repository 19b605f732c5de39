"""The official MCP conformance suite (``@modelcontextprotocol/conformance`` 0.2.0-alpha.12, from
``scripts/setup-peers``) against ``tests/conformance/server.py`` over Streamable HTTP.

For each frozen requirement set (2025-11-25: legacy wire; 2026-07-28: stateless wire) the suite
runs every server scenario of the set plus the unscored ones it reports beside it (session
lifecycle, JSON Schema 2020-12, SSE polling, SEP-2243 header validation). The run must exit 0,
and no check of any scenario may be a FAILURE — scored or not, the *extension* scenarios
(``tasks-*``, the ``io.modelcontextprotocol/tasks`` extension, run with 2026-07-28) included.
There is no expected-failures file.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.support import peers
from tests.support.http import spawn_fixture

REQUIREMENT_SETS = ["2025-11-25", "2026-07-28"]
TASKS_SCENARIOS = {
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
}


def _checks(outdir: Path) -> dict[str, list[dict]]:
    """{scenario: its checks} from the suite's ``server-<scenario>-<time>/checks.json`` files."""
    out: dict[str, list[dict]] = {}
    for f in sorted(outdir.glob("server-*/checks.json")):
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T.*$", "", f.parent.name.removeprefix("server-"))
        out[scenario] = json.loads(f.read_text())
    return out


def _extensions(stdout: str) -> set[str]:
    return set(re.findall(r"^\s+[✓✗] (\S+) \(extension\)", stdout, re.MULTILINE))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("requirements", REQUIREMENT_SETS)
def test_server_conformance(requirements: str, tmp_path: Path) -> None:
    argv = peers.conformance_argv()
    log = tmp_path / "fixture-server.log"
    with spawn_fixture(log=log) as url:
        proc = subprocess.run(
            [*argv, "server", "--url", url, "--requirements", requirements, "-o", str(tmp_path / "results")],
            capture_output=True,
            text=True,
            env=peers.peers_env(),
            timeout=540,
            stdin=subprocess.DEVNULL,
        )
    summary = (
        proc.stdout[proc.stdout.find("=== SUMMARY ===") :] if "=== SUMMARY ===" in proc.stdout else proc.stdout[-6000:]
    )
    checks = _checks(tmp_path / "results")
    extensions = _extensions(proc.stdout)
    failures = [
        f"{scenario}: {c['id']}: {c.get('errorMessage') or c.get('description')}"
        for scenario, items in checks.items()
        for c in items
        if c.get("status") == "FAILURE"
    ]
    where = (
        f"\n--- conformance {requirements} (exit {proc.returncode}) ---\n{summary}\n--- stderr ---\n"
        f"{proc.stderr[-3000:]}\n--- fixture server log ---\n{log.read_text()[-3000:] if log.exists() else ''}"
    )
    assert checks, f"the suite wrote no results{where}"
    assert not failures, "FAILURE checks:\n  " + "\n  ".join(failures) + where
    assert proc.returncode == 0, f"the suite exited {proc.returncode}{where}"
    if requirements == "2026-07-28":  # the tasks extension's scenarios ran, and (above) passed
        assert {s for s in extensions if s.startswith("tasks-")} >= TASKS_SCENARIOS, f"tasks scenarios missing{where}"
