"""The example app's view in a real browser, under a minimal test host of the ``ui/*`` bridge.

``examples/apps_calculator.py`` is served over Streamable HTTP on 127.0.0.1. A test host page
(served by a second local server) renders the view it read with ``resources/read`` in a
``sandbox="allow-scripts"`` iframe and plays the host's side of the bridge (ext-apps
specification 2026-01-26, §Lifecycle): it answers ``ui/initialize``, sends
``ui/notifications/tool-input`` and ``ui/notifications/tool-result`` (the real result of
``add``), and passes the view's ``tools/call`` on to the server. Headless Chromium (Selenium,
as the inspector's tests) shows the sum, clicks the view's button and reads the answer the
app-only tool ``double`` gave, inside the iframe. The host's page is a minimal test fixture;
the inspector's own rendering of views (sandbox origin, CSP, the whole bridge) is tested in
test_inspector_apps_browser.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from mcpio import Client
from tests.client.test_extensions_client import APPS, example_server
from tests.support.http import ServerThread

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra")
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.fail("Chromium and chromedriver are missing: scripts/setup-system chromium chromium-driver")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

HOST_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>test host</title></head>
<body>
<script>
const VIEW = %(view)s;
const RESULT = %(result)s;
const log = [];
const iframe = document.createElement("iframe");
iframe.id = "view";
iframe.setAttribute("sandbox", "allow-scripts");
iframe.srcdoc = VIEW;
document.body.appendChild(iframe);
function post(msg) { iframe.contentWindow.postMessage(msg, "*"); }
window.addEventListener("message", async (event) => {
  if (event.source !== iframe.contentWindow) return;
  const msg = event.data;
  log.push(msg.method || "response");
  if (msg.method === "ui/initialize") {
    post({jsonrpc: "2.0", id: msg.id, result: {protocolVersion: "2026-01-26",
      hostCapabilities: {serverTools: {}}, hostInfo: {name: "test-host", version: "1"}, hostContext: {theme: "light"}}});
  } else if (msg.method === "ui/notifications/initialized") {
    post({jsonrpc: "2.0", method: "ui/notifications/tool-input", params: {arguments: {a: 2, b: 3}}});
    post({jsonrpc: "2.0", method: "ui/notifications/tool-result", params: RESULT});
  } else if (msg.method === "tools/call") {
    const r = await fetch("/call", {method: "POST", body: JSON.stringify(msg.params)});
    post({jsonrpc: "2.0", id: msg.id, result: await r.json()});
  }
});
window.bridgeLog = log;
</script>
</body></html>
"""


def host_app(mcp_url: str, page: str) -> Any:
    """The test host: its page, and ``POST /call`` passing a view's ``tools/call`` to the server."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/call" and scope["method"] == "POST":
            body = b""
            while True:
                event = await receive()
                body += event.get("body", b"")
                if not event.get("more_body"):
                    break
            params = json.loads(body)
            async with Client(mcp_url, era="modern", extensions=APPS) as c:
                result = await c.request("tools/call", params)
            payload, kind = json.dumps(result).encode(), b"application/json"
        else:
            payload, kind = page.encode(), b"text/html; charset=utf-8"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
        await send({"type": "http.response.body", "body": payload})

    return app


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-apps')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_example_view_calls_a_tool_through_the_bridge(browser: Any) -> None:
    with ServerThread(example_server().http_app()) as mcp:

        async def prepare() -> tuple[str, dict[str, Any]]:
            async with Client(mcp.url, era="modern", extensions=APPS) as c:
                [view] = await c.read_resource("ui://calculator/view")
                result = await c.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
                return view["text"], {k: v for k, v in result.items() if k in ("content", "structuredContent")}

        view, result = asyncio.run(prepare())
        inline = json.dumps(view).replace("</", "<\\/")  # no "</script>" inside the host's own script
        page = HOST_PAGE % {"view": inline, "result": json.dumps(result)}
        with ServerThread(host_app(mcp.url, page), path="/") as host:
            browser.get(host.url)
            frame = WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "view"))
            assert frame.get_attribute("sandbox") == "allow-scripts"
            browser.switch_to.frame(frame)
            try:
                WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "sum").text == "5")
                browser.find_element(By.ID, "double").click()
                WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "answer").text == "10")
            finally:
                browser.switch_to.default_content()
            log = browser.execute_script("return window.bridgeLog")
            assert log[:2] == ["ui/initialize", "ui/notifications/initialized"] and "tools/call" in log
