"""The official MCP conformance suite (``@modelcontextprotocol/conformance`` 0.2.0-alpha.12, from
``scripts/setup-peers``) against mcpio's client: ``tests/conformance/client.py`` over Streamable HTTP.

For each frozen requirement set (2025-11-25: legacy wire; 2026-07-28: stateless wire), every
client scenario the set lists (``conformance list --client --requirements …``), the ``auth/*``
ones included (mcpio's OAuth client, ``mcpio._auth``), plus the unscored client scenarios it
runs beside them, and the extension scenarios mcpio implements (OAuth client credentials:
``auth/client-credentials-jwt``, ``auth/client-credentials-basic``; workload identity
federation: ``auth/wif-jwt-bearer``; enterprise-managed authorization:
``auth/enterprise-managed-authorization``; DPoP: ``auth/dpop``, ``auth/dpop-nonce``), is run by
one ``conformance client --requirements R`` (the suite starts the set's scenarios together,
each with its own server and a client process of its own, and writes each one's checks apart;
the clients take turns on a lock, ``MCPIO_CONFORMANCE_LOCK``: started all at once, they took
both cores for 20 s and starved a test running beside them). The run must cover exactly the scenarios the listing names, exit 0, and no check of
any scenario may be a FAILURE or a WARNING. The 2025-03-26 back-compat scenarios, in no set,
run once each with ``--scenario S --force`` at the 2025-11-25 wire and must report OVERALL:
PASSED. There is no expected-failures file.
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


def run_client(
    selection: list[str], outdir: Path, timeout: float
) -> tuple[subprocess.CompletedProcess, dict[str, list[dict]]]:
    """One run of the suite's client command over ``selection`` (``--requirements R`` or
    ``--scenario S …``): the process, and {scenario: its checks} from the
    ``<scenario>-<time>/checks.json`` files (``auth/x-<time>/`` for the auth scenarios). The
    clients of a run take turns on a lock (module docstring)."""
    proc = subprocess.run(
        [
            *peers.conformance_argv(),
            "client",
            "--command",
            f"{sys.executable} {HARNESS}",  # the suite splits --command on spaces
            *selection,
            "--timeout",
            "300000",  # each scenario's, in ms, from its start: its client may wait for its turn
            "-o",
            str(outdir),
        ],
        capture_output=True,
        text=True,
        env={**peers.peers_env(), "MCPIO_CONFORMANCE_LOCK": str(outdir.parent / "clients.lock")},
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    checks: dict[str, list[dict]] = {}
    for f in sorted(outdir.rglob("checks.json")):
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T.*$", "", f.parent.relative_to(outdir).as_posix())
        checks[scenario] = json.loads(f.read_text())
    return proc, checks


@pytest.mark.timeout(600)  # one run of the set, at most 540 s
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
    proc, checks = run_client(["--requirements", requirements], tmp_path / "results", timeout=540)
    output = proc.stdout + proc.stderr
    assert set(checks) == set(scenarios), (
        f"the run covered {sorted(checks)}, the listing names {sorted(scenarios)}\n{output[-3000:]}"
    )
    report: list[str] = []
    problems: list[str] = []
    for scenario in scenarios:
        bad = [c for c in checks[scenario] if c.get("status") in ("FAILURE", "WARNING")]
        passed = sum(1 for c in checks[scenario] if c.get("status") == "SUCCESS")
        report.append(f"{scenario}: {passed} passed, {len(bad)} failed or warned")
        problems += [
            f"{scenario}: {c['id']} {c['status']}: {c.get('errorMessage') or c.get('description')}" for c in bad
        ]
        if not passed:
            problems.append(f"{scenario}: no check passed")
    print(f"conformance client {requirements} (exit {proc.returncode}):\n  " + "\n  ".join(report))
    assert proc.returncode == 0 and not problems, "\n".join(problems) + f"\n{output[-3000:]}"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scenario", BACKCOMPAT)
def test_client_auth_backcompat(scenario: str, tmp_path: Path) -> None:
    """A 2025-03-26 server: AS metadata at its origin, or only the default endpoints there."""
    selection = ["--scenario", scenario, "--spec-version", "2025-11-25", "--force"]  # in no set
    proc, by_scenario = run_client(selection, tmp_path / "results", timeout=120)
    checks = [c for found in by_scenario.values() for c in found]
    bad = [
        f"{c['id']} {c['status']}: {c.get('errorMessage') or c.get('description')}"
        for c in checks
        if c.get("status") in ("FAILURE", "WARNING")
    ]
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0 and checks and not bad and "OVERALL: PASSED" in output, "\n".join(bad) + output[-3000:]
