"""The inspector's exports of a URL target with credentials (a real ``mcpio inspect``, httpx, no
browser): the pytest test and the ``mcpio call`` command read the URL from ``$MCPIO_TARGET``
and name it only as shown (``mcpio._shown.shown``); with the variable set, both work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from mcpio import Server
from tests.inspect.test_inspector_browser import ROOT, Inspector, sign_in
from tests.support.http import ServerThread

SECRET = "pass-word-1234"


def test_exports_of_a_url_with_credentials_read_it_from_the_environment(tmp_path: Path) -> None:
    upstream = Server("up")

    @upstream.tool()
    def add(a: int, b: int) -> int:
        return a + b

    with ServerThread(upstream.http_app()) as srv:
        url = f"http://ada:{SECRET}@127.0.0.1:{srv.port}/mcp?token={SECRET}"
        insp = Inspector()
        try:
            with httpx.Client(timeout=60) as http:
                headers = sign_in(http, insp)
                api = insp.base + "/api/"
                assert "error" not in http.post(api + "connect", headers=headers, json={"target": url}).json()
                call = {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}
                called = http.post(api + "request", headers=headers, json=call).json()
                source = http.post(
                    api + "export", headers=headers, json={"history": [{**call, "result": called["result"]}]}
                ).json()["source"]
                command = http.post(
                    api + "command", headers=headers, json={"name": "add", "arguments": {"a": 2, "b": 3}}
                ).json()["command"]
        finally:
            insp.close()
        assert SECRET not in source and SECRET not in command, (source, command)
        assert (
            f"TARGET = os.environ['MCPIO_TARGET']  # http://127.0.0.1:{srv.port}/mcp?token=[redacted] with its "
            "credentials: set it where the test runs"
        ) in source, source
        assert command == 'mcpio call -- "$MCPIO_TARGET" add a=2 b=3', command
        env = {**os.environ, "MCPIO_TARGET": url, "PYTHONPATH": str(ROOT / "src")}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
        saved = tmp_path / "test_exported.py"
        saved.write_text(source)
        ran = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(saved)],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
        )  # fmt: skip
        assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr
        shell = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, timeout=120)
        assert shell.returncode == 0 and shell.stdout.strip() == "5", shell.stdout + shell.stderr


def test_the_page_names_a_connected_url_without_its_credentials() -> None:
    """What the page shows of the connected server (``info.target``, on a screen that may be
    shared) is the URL shown; the connect form keeps the URL as given, to connect with."""
    with ServerThread(Server("up").http_app()) as srv:
        url = f"http://ada:{SECRET}@127.0.0.1:{srv.port}/mcp?token={SECRET}"
        insp = Inspector(url)
        try:
            with httpx.Client(timeout=60) as http:
                headers = sign_in(http, insp)
                connected = http.post(insp.base + "/api/connect", headers=headers, json={"target": url}).json()
                initial = http.post(insp.base + "/api/initial", headers=headers, content=b"{}").json()
        finally:
            insp.close()
    assert connected["target"] == f"http://127.0.0.1:{srv.port}/mcp?token=[redacted]", connected
    assert initial["info"]["target"] == connected["target"] and initial["target"] == url
