"""The skills extension (SEP-2640) scenarios of the conformance suite, asserted.

The suite's requirement sets do not list the ``sep-2640-*`` scenarios (they are extension
scenarios it runs only when named), so each is run here with ``--scenario`` at 2026-07-28, the
revision with extensions: the server ones against ``tests/conformance/server.py`` (which serves
``tests/conformance/skills``), the client ones against ``tests/conformance/client.py``. A server
scenario must report no FAILURE and no WARNING check and run its checks (not skip them all); a
client scenario must pass with every check a SUCCESS.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.test_client_conformance import HARNESS
from tests.support import peers
from tests.support.http import spawn_fixture

VERSION = "2026-07-28"
SERVER_SCENARIOS = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]
CLIENT_SCENARIOS = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
]


@pytest.mark.timeout(300)
def test_skills_server_scenarios(tmp_path: Path) -> None:
    log = tmp_path / "fixture-server.log"
    report: dict[str, list[dict]] = {}
    with spawn_fixture(log=log) as url:
        for scenario in SERVER_SCENARIOS:
            out = tmp_path / scenario
            proc = subprocess.run(
                [
                    *peers.conformance_argv(),
                    "server",
                    "--url",
                    url,
                    "--scenario",
                    scenario,
                    "--spec-version",
                    VERSION,
                    "--force",
                    "-o",
                    str(out),
                ],
                capture_output=True,
                text=True,
                env=peers.peers_env(),
                timeout=120,
                stdin=subprocess.DEVNULL,
            )
            checks = [c for f in out.glob("*/checks.json") for c in json.loads(f.read_text())]
            assert checks, (
                f"{scenario}: no results (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
            )
            report[scenario] = checks
    problems = [
        f"{s}: {c['id']} {c['status']}: {c.get('errorMessage')}"
        for s, checks in report.items()
        for c in checks
        if c["status"] in ("FAILURE", "WARNING")
    ]
    assert not problems, "\n".join(problems)
    for scenario, checks in report.items():
        statuses = {c["status"] for c in checks}
        assert statuses == {"SUCCESS"}, f"{scenario}: {[(c['id'], c['status']) for c in checks]}"
    ids = {c["id"] for c in report["sep-2640-skills-enumeration"]}
    assert {
        "sep-2640-skills-list-implemented",
        "sep-2640-skills-get-unknown-uri-invalid-params",
        "sep-2640-resources-digest-format",
        "sep-2640-entry-frontmatter-identical",
    } <= ids


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS)
def test_skills_client_scenarios(scenario: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            *peers.conformance_argv(),
            "client",
            "--command",
            f"{sys.executable} {HARNESS}",
            "--scenario",
            scenario,
            "--spec-version",
            VERSION,
            "--force",
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=peers.peers_env(),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    checks = [c for f in tmp_path.glob("*/checks.json") for c in json.loads(f.read_text())]
    output = proc.stdout + proc.stderr
    assert checks, output[-3000:]
    assert all(c["status"] == "SUCCESS" for c in checks), [
        (c["id"], c["status"], c.get("errorMessage")) for c in checks
    ]
    assert proc.returncode == 0 and "OVERALL: PASSED" in output, output[-3000:]
