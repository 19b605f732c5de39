"""Problems at start-up get one clear line on stderr, never a traceback, and never a byte on
stdout: a stdio server started without stdin, and an unwritable MCPIO_TRACE (a debugging aid,
which must not stop the server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES

QUICKSTART = [sys.executable, str(EXAMPLES / "quickstart.py")]


@pytest.mark.skipif(sys.platform == "win32", reason="preexec_fn is POSIX")
def test_started_without_stdin_says_so_in_one_line():
    proc = subprocess.run(
        QUICKSTART,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        close_fds=True,
        preexec_fn=lambda: os.close(0),
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "demo: cannot serve on stdio: stdin was closed when the process started: a stdio MCP server needs both pipes"
    ]


def test_an_unwritable_trace_file_is_a_warning_and_the_server_serves(tmp_path):
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    env = {**os.environ, "MCPIO_TRACE": str(tmp_path / "missing-dir" / "trace.log")}
    proc = subprocess.run(
        QUICKSTART, input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=30, env=env
    )
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["result"]["serverInfo"]["name"] == "demo"
    assert "MCPIO_TRACE: cannot write" in proc.stderr and "Traceback" not in proc.stderr
