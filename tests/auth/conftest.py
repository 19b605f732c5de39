"""Fixtures for the authorization tests: a real authorization server (oidc-provider, once per
session) and a real ``mcpio run -t http … --auth-issuer`` subprocess it protects."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.http import mcpio_http
from tests.support.oidc import OIDCProvider, missing

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def idp():
    why = missing()
    if why:
        pytest.fail(why)
    with OIDCProvider() as provider:
        yield provider


@pytest.fixture(scope="session")
def protected(idp, tmp_path_factory):
    """``(url, stderr_log, wire_trace)`` of the protected server, which logs at DEBUG level and
    traces every message (``MCPIO_TRACE``): both are read to prove no token is ever written."""
    where = tmp_path_factory.mktemp("srv")
    log, trace = where / "stderr.log", where / "trace.jsonl"
    with mcpio_http(
        str(HERE / "protected_server.py"),
        *("--auth-issuer", idp.issuer, "--auth-scopes", "mcp"),
        env={"PYTHONUNBUFFERED": "1", "MCPIO_LOG_LEVEL": "DEBUG", "MCPIO_TRACE": str(trace)},
        log=log,
    ) as (url, _proc):
        yield url, log, trace
    assert "Traceback" not in log.read_text()


@pytest.fixture(scope="session")
def mcp_url(protected):
    return protected[0]
