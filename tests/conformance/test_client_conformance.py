"""The official MCP conformance suite (``@modelcontextprotocol/conformance`` 0.2.0-alpha.12, from
``scripts/setup-peers``) against mcpio's client: ``tests/conformance/client.py`` over Streamable HTTP.

For each frozen requirement set (2025-11-25: legacy wire; 2026-07-28: stateless wire), every
client scenario the set lists (``conformance list --client --requirements …``), the ``auth/*``
ones included (mcpio's OAuth client, ``mcpio._auth``), plus the unscored client scenarios it
runs beside them, and the extension scenarios mcpio implements (OAuth client credentials:
``auth/client-credentials-jwt``, ``auth/client-credentials-basic``; workload identity
federation: ``auth/wif-jwt-bearer``; enterprise-managed authorization:
``auth/enterprise-managed-authorization``; DPoP: ``auth/dpop``, ``auth/dpop-nonce``; run at the set's wire with ``--force``, as they are on no
spec timeline), is run on its own with ``--scenario S --spec-version R``. The 2025-03-26
back-compat scenarios run once, at the 2025-11-25 wire. Each run must report OVERALL: PASSED (exit 0; a WARNING fails a client run
too) with no FAILURE check. There is no expected-failures file.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import peers

REQUIREMENT_SETS = ["2025-11-25", "2026-07-28"]
HARNESS = Path(__file__).resolve().parent / "client.py"
# The client extension scenarios (all of them are implemented).
EXTENSIONS = {
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/wif-jwt-bearer",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
}
# The back-compat scenarios (2025-03-26 servers: no protected resource metadata), in no set.
BACKCOMPAT = ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"]


def client_scenarios(requirements: str) -> list[str]:
    """The client scenarios a requirement set runs (scored, unscored non-extension, then the
    client-credentials extension scenarios)."""
    out = subprocess.run(
        [*peers.conformance_argv(), "list", "--client", "--requirements", requirements],
        capture_output=True,
        text=True,
        env=peers.peers_env(),
        timeout=60,
        check=True,
    ).stdout
    scored_part, _, unscored_part = out.partition("never scored")
    scored = re.findall(r"^  - (\S+)$", scored_part[scored_part.find("Client scenarios") :], re.MULTILINE)
    extension = set(re.findall(r"^\s+- (\S+) \[client\]$", _section(unscored_part, "extension"), re.MULTILINE))
    unscored = [s for s in re.findall(r"^\s+- (\S+) \[client\]$", unscored_part, re.MULTILINE) if s not in extension]
    wanted_extensions = [s for s in sorted(extension) if s in EXTENSIONS]
    return scored + unscored + wanted_extensions


def _section(text: str, name: str) -> str:
    """The lines of one ``name (N):`` block of the "never scored" listing."""
    m = re.search(rf"^  {re.escape(name)} \(\d+\):\n((?:    .*\n?)*)", text, re.MULTILINE)
    return m.group(1) if m else ""


def run_scenario(scenario: str, requirements: str, outdir: Path) -> tuple[subprocess.CompletedProcess, list[dict]]:
    command = f"{sys.executable} {HARNESS}"  # the suite splits --command on spaces
    proc = subprocess.run(
        [
            *peers.conformance_argv(),
            "client",
            "--command",
            command,
            "--scenario",
            scenario,
            "--spec-version",
            requirements,
            *(["--force"] if scenario in EXTENSIONS or scenario in BACKCOMPAT else []),
            "-o",
            str(outdir),
        ],
        capture_output=True,
        text=True,
        env=peers.peers_env(),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    checks: list[dict] = []
    for f in outdir.rglob("checks.json"):  # auth/x scenarios write to auth/x-<time>/
        checks.extend(json.loads(f.read_text()))
    return proc, checks


@pytest.mark.timeout(600)
@pytest.mark.parametrize("requirements", REQUIREMENT_SETS)
def test_client_conformance(requirements: str, tmp_path: Path) -> None:
    scenarios = client_scenarios(requirements)
    auth = {
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/basic-cimd",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-step-up",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
        *EXTENSIONS,
    }
    auth_2026 = {
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
    }
    expected = {
        "2025-11-25": {"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", *auth},
        "2026-07-28": {
            "tools_call",
            "request-metadata",
            "sep-2322-client-request-state",
            "http-standard-headers",
            "http-custom-headers",
            "http-invalid-tool-headers",
            "json-schema-ref-no-deref",
            *auth,
            *auth_2026,
        },
    }
    assert expected[requirements] <= set(scenarios), scenarios
    problems: list[str] = []
    report: list[str] = []
    for scenario in scenarios:
        proc, checks = run_scenario(scenario, requirements, tmp_path / scenario.replace("/", "_"))
        bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        passed = sum(1 for c in checks if c.get("status") == "SUCCESS")
        report.append(f"{scenario}: exit {proc.returncode}, {passed} passed, {len(bad)} failed or warned")
        output = proc.stdout + proc.stderr  # the suite prints its verdict on stderr
        if proc.returncode != 0 or bad or not checks or "OVERALL: PASSED" not in output:
            details = "; ".join(
                f"{c['id']} {c['status']}: {c.get('errorMessage') or c.get('description')}" for c in bad
            )
            problems.append(f"{scenario} (exit {proc.returncode}): {details}\n{output[-3000:]}")
    print(f"conformance client {requirements}:\n  " + "\n  ".join(report))
    assert not problems, "\n\n".join(problems)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scenario", BACKCOMPAT)
def test_client_auth_backcompat(scenario: str, tmp_path: Path) -> None:
    """A 2025-03-26 server: AS metadata at its origin, or only the default endpoints there."""
    proc, checks = run_scenario(scenario, "2025-11-25", tmp_path)
    bad = [
        f"{c['id']} {c['status']}: {c.get('errorMessage') or c.get('description')}"
        for c in checks
        if c.get("status") in ("FAILURE", "WARNING")
    ]
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0 and checks and not bad and "OVERALL: PASSED" in output, "\n".join(bad) + output[-3000:]
