"""Fixtures for the authorization tests: a real authorization server (oidc-provider, once per
session) and a real ``mcpio run -t http … --auth-issuer`` subprocess it protects."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.http import free_port, wait_port
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
    port = free_port()
    where = tmp_path_factory.mktemp("srv")
    log, trace = where / "stderr.log", where / "trace.jsonl"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcpio",
                "run",
                "-t",
                "http",
                str(HERE / "protected_server.py"),
                "--port",
                str(port),
                "--auth-issuer",
                idp.issuer,
                "--auth-scopes",
                "mcp",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "MCPIO_LOG_LEVEL": "DEBUG", "MCPIO_TRACE": str(trace)},
        )
    try:
        wait_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}/mcp", log, trace
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    assert "Traceback" not in log.read_text()


@pytest.fixture(scope="session")
def mcp_url(protected):
    return protected[0]
