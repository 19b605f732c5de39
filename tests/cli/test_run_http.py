"""``mcpio run FILE -t http``: a module's Server over Streamable HTTP (uvicorn), reached by the
mcpio client in both eras and by ``mcpio list``; loopback only unless --allow-remote."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys

from mcpio import Client
from tests.conftest import EXAMPLES
from tests.support.http import free_port, wait_port

MCPIO = [sys.executable, "-m", "mcpio"]


def test_run_serves_http_until_interrupted():
    port = free_port()
    proc = subprocess.Popen(
        [*MCPIO, "run", str(EXAMPLES / "quickstart.py"), "-t", "http", "--port", str(port), "--path", "/api/mcp"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_port(port, proc=proc)
        url = f"http://127.0.0.1:{port}/api/mcp"

        async def go() -> None:
            for era in ("legacy", "modern"):
                async with Client(url, era=era) as c:
                    assert c.negotiated_era == era
                    assert (await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}

        asyncio.run(go())
        listed = subprocess.run([*MCPIO, "list", url, "tools", "--json"], capture_output=True, text=True, timeout=60)
        assert listed.returncode == 0 and "slow_sum" in listed.stdout
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert out == ""  # nothing on stdout in HTTP mode either
    assert f"serving demo on http://127.0.0.1:{port}/api/mcp" in err


def test_run_refuses_a_public_address_without_allow_remote():
    proc = subprocess.run(
        [*MCPIO, "run", str(EXAMPLES / "quickstart.py"), "-t", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "--allow-remote" in proc.stderr and proc.stdout == ""
