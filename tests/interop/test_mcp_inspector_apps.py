"""Interop: the official MCP Inspector's web UI (npm ``@modelcontextprotocol/inspector`` 2.x,
``inspector --web``, installed by ``scripts/setup-peers``) renders the view of
``examples/apps_calculator.py`` (served by ``mcpio run -t http``), in headless Chromium.

The Inspector is started the way its own "Reviewing an MCP App" recipe documents: bound to
127.0.0.1 (``HOST``), on free ports (``CLIENT_PORT``, ``MCP_SANDBOX_PORT``,
``MCP_APP_ORIGIN_PORT``), no browser of its own (``MCP_AUTO_OPEN_ENABLED=false``), a fixed API
token (``MCP_INSPECTOR_API_TOKEN``); then one deep link (``serverUrl``, ``transport=http``,
``autoConnect=<token>``, ``openApp``, ``appArgs``) connects it to our server and fills the app's
form, and one click on "Open App" calls ``add``. The test reads the answer inside the view's
inner frame (the sum, the arguments), then clicks the view's button, which calls the app-only
``double`` through the Inspector's ``ui/*`` bridge, and reads that answer too.

The Inspector's page asks Google Fonts for a stylesheet: the request is blocked (no network
beyond loopback). The test is skipped when the Inspector's web UI is not installed.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import signal
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.inspect import test_inspector_browser as base  # skips without selenium, fails without Chromium
from tests.support import peers
from tests.support.http import free_port, wait_port

browser = base.browser  # the same headless Chromium fixture
By, ROOT, wait = base.By, base.ROOT, base.wait

EXAMPLE = ROOT / "examples" / "apps_calculator.py"
WEB_UI = peers.INSPECTOR_PKG_DIR / "clients" / "web"


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def spawn(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
        )


class McpInspectorWeb:
    """The MCP Inspector's web UI, loopback-only, on free ports, with a known API token."""

    def __init__(self, tmp_path: Path) -> None:
        self.port, self.sandbox_port, app_origin_port = free_port(), free_port(), free_port()
        self.token = secrets.token_hex(24)
        self.log = tmp_path / "inspector.log"
        home = tmp_path / "home"  # its catalog and storage (~/.mcp-inspector) stay in the test's directory
        home.mkdir()
        env = peers.peers_env()
        env.update(
            HOME=str(home),
            MCP_STORAGE_DIR=str(home / "storage"),
            MCP_INSPECTOR_SECRET_STORE="memory",
            HOST="127.0.0.1",
            CLIENT_PORT=str(self.port),
            MCP_SANDBOX_PORT=str(self.sandbox_port),
            MCP_APP_ORIGIN_PORT=str(app_origin_port),
            MCP_AUTO_OPEN_ENABLED="false",
            MCP_INSPECTOR_API_TOKEN=self.token,
        )
        for name in ("DANGEROUSLY_OMIT_AUTH", "ALLOWED_ORIGINS", "MCP_CATALOG_PATH", "CLIENT_PORT_FULL_ADDRESS"):
            env.pop(name, None)
        self.proc = spawn([str(peers.node_bin()), str(peers.INSPECTOR_ENTRY), "--web"], self.log, env)
        try:
            wait_port(self.port, proc=self.proc)
            wait_port(self.sandbox_port, proc=self.proc)
        except AssertionError as exc:
            self.close()
            raise AssertionError(f"{exc}\n--- the Inspector's output ---\n{self.log.read_text()}") from None
        self.base = f"http://127.0.0.1:{self.port}"
        self.sandbox = f"http://127.0.0.1:{self.sandbox_port}"

    def deep_link(self, server_url: str, app: str, args: dict[str, Any]) -> str:
        """The Inspector's documented deep link: connect to ``server_url`` and stage ``app`` with ``args``."""
        encoded = base64.urlsafe_b64encode(json.dumps(args).encode()).decode().rstrip("=")
        query = urllib.parse.urlencode(
            {
                "MCP_INSPECTOR_API_TOKEN": self.token,
                "serverUrl": server_url,
                "transport": "http",
                "autoConnect": self.token,
                "openApp": app,
                "appArgs": encoded,
            }
        )
        return f"{self.base}/?{query}"

    def close(self) -> None:
        stop(self.proc)


@pytest.fixture
def calculator_url(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    argv = [sys.executable, "-m", "mcpio", "run", str(EXAMPLE), "-t", "http", "--port", str(port)]
    proc = spawn(argv, tmp_path / "calculator.log", dict(os.environ))
    try:
        wait_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


@pytest.fixture
def mcp_inspector(tmp_path: Path) -> Iterator[McpInspectorWeb]:
    if not (WEB_UI / "build" / "index.js").is_file() or not (WEB_UI / "dist" / "index.html").is_file():
        pytest.skip(f"the MCP Inspector's web UI is not installed in {WEB_UI} (scripts/setup-peers installs it)")
    insp = McpInspectorWeb(tmp_path)
    try:
        yield insp
    finally:
        insp.close()


def test_the_mcp_inspector_renders_the_calculator_view(
    mcp_inspector: McpInspectorWeb, calculator_url: str, browser: Any
) -> None:
    # Its stylesheet asks for web fonts: the browser fixture resolves no name beyond loopback.
    browser.get(mcp_inspector.deep_link(calculator_url, "add", {"a": 2, "b": 3}))
    try:
        wait(browser, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="connection-status"][data-status="connected"]')
        )
        form = wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="apps-form"]'))
        assert [i.get_attribute("value") for i in form.find_elements(By.TAG_NAME, "input")][-2:] == ["2", "3"]
        wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="open-app"]')).click()
        # the Inspector's sandbox proxy on its own origin, the view in an opaque-origin frame inside it
        outer = wait(browser).until(
            lambda d: next(
                (
                    f
                    for f in d.find_elements(By.TAG_NAME, "iframe")
                    if (f.get_attribute("src") or "").startswith(mcp_inspector.sandbox + "/")
                ),
                False,
            )
        )
        browser.switch_to.frame(outer)
        inner = wait(browser).until(lambda d: d.find_element(By.TAG_NAME, "iframe"))
        assert "allow-same-origin" not in (inner.get_attribute("sandbox") or "")
        browser.switch_to.frame(inner)
        assert browser.execute_script("return location.origin") == "null"
        assert browser.execute_script("return document.title") == "Calculator"  # our ui://calculator/view
        wait(browser).until(lambda d: d.find_element(By.ID, "sum").text == "5")  # ui/notifications/tool-result
        assert browser.find_element(By.ID, "input").text == "2 + 3"  # ui/notifications/tool-input
        browser.find_element(By.ID, "double").click()  # tools/call from the view, through the Inspector
        wait(browser).until(lambda d: d.find_element(By.ID, "answer").text == "10")
    except Exception:
        browser.switch_to.default_content()
        base.shot(browser, "mcp-inspector-apps-failure")
        print(mcp_inspector.log.read_text())
        raise
    finally:
        browser.switch_to.default_content()
    base.shot(browser, "mcp-inspector-apps")
