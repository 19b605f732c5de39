"""Shared fixtures: where things are, and the schema validator."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# A suite started in the background by a non-interactive shell (`scripts/test &`, nohup) inherits
# SIGINT ignored, and every server it spawns would too: the tests that stop a server with SIGINT,
# as a person's Ctrl-C does, would wait in vain. A handler here is the default again in each child
# (exec resets handlers, not an ignored signal).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# A pytest-xdist worker (scripts/test runs two) starts with COLUMNS=80 and LINES=24 in its
# environment, which the suite's own process never has: every `mcpio` command a test starts
# would size its tables to 80 columns and cut the cells the test reads. The workers run with the
# environment a single-process run has.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("COLUMNS", "LINES"):
        os.environ.pop(_name, None)


# Test files that need what only the Linux test machine has: the Node peers (conformance suite,
# server-everything, Inspector) installed by scripts/setup-peers, /proc, pidfd, ptys. Their
# tests are marked ``linux_peers``; on other systems the files are not even imported.
LINUX_ONLY = {
    "tests/conformance/test_client_conformance.py",
    "tests/conformance/test_server_conformance.py",
    "tests/client/test_everything.py",
    "tests/client/test_modern_client.py",
    "tests/http/test_inspector_http.py",
    "tests/interop/test_inspector_cli.py",
    "tests/interop/test_mcp_inspector_apps.py",
    "tests/faults/test_client_death.py",
    "tests/faults/test_load.py",
    "tests/soak/test_soak_short.py",
    "tests/conformance/test_round_robin_conformance.py",  # nginx, redis-server, the suite
    "tests/state/test_workers.py",  # /proc, fork
    "tests/state/test_graceful_shutdown.py",
    "tests/bench/test_scale_bench_smoke.py",  # redis-server, fork
    "tests/stdio/test_stdio_transport.py",
    "tests/openapi/test_real_specs.py",  # GitHub's OpenAPI document: scripts/setup-peers (npm)
    "tests/bench/test_openapi_bench.py",
    # the real components that scripts/test installs on Linux: oidc-provider (npm), the conformance
    # suite, Chromium, redis-server, a pty, /proc, venv/bin paths
    "tests/auth/test_client_oidc_e2e.py",
    "tests/auth/test_oidc_e2e.py",
    "tests/gateway/test_oauth_bridge.py",
    "tests/auth/test_proxy_bad_input.py",
    "tests/auth/test_proxy_cli.py",
    "tests/auth/test_proxy_conformance.py",
    "tests/auth/test_proxy_e2e.py",
    "tests/auth/test_sdk_oauth_client.py",
    "tests/bench/test_tmdevlab_smoke.py",
    "tests/cli/test_first_hour.py",
    "tests/conformance/test_skills_conformance.py",
    "tests/faults/test_event_store.py",
    "tests/inspect/test_inspector_browser.py",
    "tests/inspect/test_inspector_apps_browser.py",
    "tests/inspect/test_app_view_browser.py",
    "tests/packaging/test_wheel.py",
    "tests/state/test_cross_process.py",
    "tests/state/test_event_stores.py",
    "tests/state/test_redis_http.py",
    "tests/h2/test_http2.py",  # /proc/net/tcp, and servers stopped with SIGINT
    "tests/bench/test_http2_bench_smoke.py",  # /proc/PID/stat
    "tests/state/test_shared_sessions.py",
    "tests/state/test_task_directory.py",
    "tests/state/test_tasks_cross_process.py",
    "tests/state/test_tasks_round_robin.py",
}


def _rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:  # outside the checkout
        return str(path)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if not sys.platform.startswith("linux") and collection_path.is_file() and _rel(collection_path) in LINUX_ONLY:
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _rel(item.path) in LINUX_ONLY:
            item.add_marker(pytest.mark.linux_peers)


@pytest.fixture(scope="session")
def wire_validator():
    from tests.support import wire

    if not (wire.SCHEMA_DIR / "2025-11-25" / "schema.json").is_file():
        pytest.fail(f"the MCP schemas are missing at {wire.SCHEMA_DIR} (set MCPIO_SHARED to the shared/ folder)")
    return wire


@pytest.fixture(scope="module")
def issuer() -> Iterator[Any]:
    """A real authorization server for the module's tests (tests/support/issuer.py): it signs
    tokens and serves its metadata and JWKS on 127.0.0.1."""
    from tests.support.issuer import Issuer

    with Issuer() as iss:
        yield iss


@pytest.fixture
def python() -> str:
    return sys.executable
