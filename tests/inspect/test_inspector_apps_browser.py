"""MCP Apps views in ``mcpio inspect``, in headless Chromium (the fixture and helpers of
test_inspector_browser.py): the inspector renders a called tool's view as a web host must
(ext-apps specification 2026-01-26, §Sandbox proxy, §Lifecycle).

* ``examples/apps_calculator.py``: ``add`` is called from the form; its view shows the sum and,
  through the ``ui/*`` bridge, calls the app-only ``double`` (in the wire view) and shows the
  answer; the view's frame is on another origin than the inspector's, the inner frame is
  ``sandbox="allow-scripts"`` (an opaque origin); ``ui/open-link`` waits for the user, and a
  denial reaches the view as an error; a new call tears the view down (``ui/resource-teardown``).
* ``tests/inspect/apps_server.py`` probes the sandbox with a loopback beacon: a view without
  ``_meta.ui.csp`` cannot fetch it, a view that declares it in ``connectDomains`` can; neither
  reaches the inspector's page; a model-only tool is refused to a view; a message posted around
  the sandbox proxy is ignored; a confirmed link is opened (the beacon sees it), not before.

The messages the inspector's page sends (the sandbox's ``sandbox-resource-ready``, the
``ui/initialize`` answer, ``tool-input``, ``tool-result``, ``ui/resource-teardown``) and the
``_meta.ui`` the servers send are validated against the JSON schema the ext-apps package
publishes (``@modelcontextprotocol/ext-apps``, MIT, installed with the MCP Inspector by
``scripts/setup-peers``: read from there, not copied), and against the members the
specification names.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.client.test_app_view import server_with_views
from tests.client.test_extensions_client import example_server
from tests.inspect import test_inspector_browser as base  # skips without selenium, fails without Chromium
from tests.support import peers
from tests.support.http import ServerThread

browser = base.browser  # the same headless Chromium fixture
By, ROOT, Inspector = base.By, base.ROOT, base.Inspector
open_connected, pick_tool, shot, tab, wait = base.open_connected, base.pick_tool, base.shot, base.tab, base.wait

EXAMPLE = ROOT / "examples" / "apps_calculator.py"
PROBE = Path(__file__).resolve().parent / "apps_server.py"

# What the page sends the view (ext-apps 2026-01-26: McpUiInitializeResult, HostContext, the
# tool-input / tool-result notifications): the members the specification names, and their types.
HOST_CONTEXT_KEYS = {
    "toolInfo", "theme", "styles", "displayMode", "availableDisplayModes", "containerDimensions",
    "locale", "timeZone", "userAgent", "platform", "deviceCapabilities", "safeAreaInsets",
}  # fmt: skip
HOST_CAPABILITY_KEYS = {"experimental", "openLinks", "serverTools", "serverResources", "logging", "sandbox"}


def ext_apps_schema(name: str) -> Any:
    """A validator for ``$defs/name`` of the ext-apps package's schema (the npm peer's copy)."""
    jsonschema = pytest.importorskip("jsonschema")
    peers.node_bin()  # the peers are installed (else a failure that says how to install them)
    path = peers.NODE_MODULES / "@modelcontextprotocol" / "ext-apps" / "dist" / "src" / "generated" / "schema.json"
    schema = json.loads(path.read_text())
    # the package's schema refers to a "$defs/__schema0" it does not define (a generator's
    # artifact, under a tool's inputSchema properties): supplied here as {} (any JSON value)
    schema["$defs"].setdefault("__schema0", {})
    return jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{name}"})


# Where the package's schema (ext-apps 2.0.4) and the stable specification (2026-01-26) part:
# the specification's own example of containerDimensions, {"width": 400, "maxHeight": 600}, fails
# the schema (each branch of its intersection forbids the other's member), and the specification
# gives ui/resource-teardown a "reason" the schema's params do not allow. The specification wins:
# those two members are checked against its text and left out of the schema validation.
def schema_view(msg: dict[str, Any]) -> dict[str, Any]:
    msg = json.loads(json.dumps(msg))
    if msg.get("method") == "ui/resource-teardown":
        assert isinstance(msg["params"].pop("reason"), str)
    ctx = (msg.get("result") or {}).get("hostContext")
    if ctx is not None:
        dims = ctx.pop("containerDimensions")
        assert set(dims) == {"width", "maxHeight"} and all(isinstance(v, int) for v in dims.values())
    return msg


SCHEMAS = {  # method of a host → view message: its $defs name (an answer: by the request's method)
    "ui/notifications/sandbox-resource-ready": "McpUiSandboxResourceReadyNotification",
    "ui/notifications/tool-input": "McpUiToolInputNotification",
    "ui/notifications/tool-result": "McpUiToolResultNotification",
    "ui/resource-teardown": "McpUiResourceTeardownRequest",
    "ui/initialize": "McpUiInitializeResult",
}


def check_initialize_result(result: dict[str, Any], tool: str) -> None:
    assert set(result) == {"protocolVersion", "hostCapabilities", "hostInfo", "hostContext"}
    assert result["protocolVersion"] == "2026-01-26"
    assert set(result["hostInfo"]) == {"name", "version"} and all(
        isinstance(v, str) for v in result["hostInfo"].values()
    )
    assert set(result["hostCapabilities"]) <= HOST_CAPABILITY_KEYS
    assert set(result["hostCapabilities"]["sandbox"]) <= {"permissions", "csp"}
    ctx = result["hostContext"]
    assert set(ctx) <= HOST_CONTEXT_KEYS, set(ctx) - HOST_CONTEXT_KEYS
    assert ctx["toolInfo"]["tool"]["name"] == tool and "inputSchema" in ctx["toolInfo"]["tool"]
    assert ctx["theme"] in ("light", "dark") and ctx["displayMode"] in ctx["availableDisplayModes"]
    assert ctx["platform"] in ("web", "desktop", "mobile")
    dims = ctx["containerDimensions"]
    assert isinstance(dims["width"], int) and dims["width"] > 0 and "height" not in dims and dims["maxHeight"] > 0


class Beacon:
    """An HTTP server on 127.0.0.1 that records the paths asked of it."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.hit = threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.paths.append(scope["path"])
        self.hit.set()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"beacon"})


@pytest.fixture
def calculator() -> Iterator[Inspector]:
    insp = Inspector(str(EXAMPLE))
    try:
        yield insp
    finally:
        insp.close()


def sandbox_origin(driver: Any, insp: Inspector) -> str:
    """The inspector's sandbox origin, as its page learns it (the browser is signed in)."""
    origin = driver.execute_script('return api("initial").then((r) => r.sandbox)')
    assert isinstance(origin, str) and origin.startswith("http://127.0.0.1:") and origin != insp.base
    return origin


def call_tool(driver: Any, name: str, **args: str) -> None:
    pick_tool(driver, name)
    panel = driver.find_element(By.ID, "tool-panel")
    for key, value in args.items():
        panel.find_element(By.NAME, key).send_keys(value)
    panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


def enter_view(driver: Any, tool: str, old: Any = None) -> tuple[Any, Any]:
    """Switch into the view of ``tool`` (the proxy's frame, then its inner frame), not ``old``
    (a view being replaced); both frame elements."""
    driver.switch_to.default_content()
    css = f'#app-view iframe.app-frame[title="view of {tool}"]'
    outer = wait(driver).until(lambda d: next((f for f in d.find_elements(By.CSS_SELECTOR, css) if f != old), False))
    driver.switch_to.frame(outer)
    inner = wait(driver).until(lambda d: d.find_element(By.TAG_NAME, "iframe"))
    driver.switch_to.frame(inner)
    return outer, inner


def record_host_messages(driver: Any) -> None:
    """Inside the view: keep every message the host sends, for the test to read."""
    driver.execute_script(
        "window.__got = window.__got || [];"
        "window.addEventListener('message', (e) => { if (e.source === window.parent) window.__got.push(e.data); });"
    )


def wire_rows(driver: Any) -> list[str]:
    driver.switch_to.default_content()
    tab(driver, "wire")
    return [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#wire tbody tr")]


def test_the_calculator_view_in_the_inspector(browser: Any, calculator: Inspector) -> None:
    open_connected(browser, calculator)
    sandbox = sandbox_origin(browser, calculator)
    call_tool(browser, "add", a="2", b="3")
    outer, inner = enter_view(browser, "add")
    try:
        # two frames, two sandboxes: the proxy on the sandbox origin, the view opaque
        browser.switch_to.parent_frame()
        assert browser.execute_script("return location.origin") == sandbox
        browser.switch_to.frame(inner)
        assert browser.execute_script("return location.origin") == "null"
        wait(browser).until(lambda d: d.find_element(By.ID, "sum").text == "5")
        assert browser.find_element(By.ID, "input").text == "2 + 3"  # ui/notifications/tool-input
        browser.find_element(By.ID, "double").click()
        wait(browser).until(lambda d: d.find_element(By.ID, "answer").text == "10")
        record_host_messages(browser)
        browser.find_element(By.ID, "docs").click()  # ui/open-link: the user is asked first
    finally:
        browser.switch_to.default_content()
    assert outer.get_attribute("sandbox") == "allow-scripts allow-same-origin"
    assert outer.get_attribute("src").startswith(sandbox + "/proxy?")
    browser.switch_to.frame(outer)
    assert browser.find_element(By.TAG_NAME, "iframe").get_attribute("sandbox") == "allow-scripts"
    browser.switch_to.default_content()
    assert int(outer.value_of_css_property("height").removesuffix("px")) > 60  # ui/notifications/size-changed applied
    windows = len(browser.window_handles)
    ask = wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, "#app-view .app-link"))
    assert "https://modelcontextprotocol.io/extensions/apps/overview" in ask.text
    shot(browser, "app-view")
    browser.execute_script("document.getElementById('toast').hidden = true")
    browser.find_element(By.ID, "app-view").screenshot(
        str(base.ARTIFACTS / "app-view-box.png")
    )  # docs/images/inspector/app-view.png
    ask.find_element(By.CSS_SELECTOR, "button.link-deny").click()
    enter_view(browser, "add")
    try:
        wait(browser).until(lambda d: d.find_element(By.ID, "link").text == "not opened: Link opening denied by user")
    finally:
        browser.switch_to.default_content()
    assert len(browser.window_handles) == windows  # nothing was opened
    rows = wire_rows(browser)
    assert any("tools/call double" in t for t in rows), rows[-8:]  # the view's call, on the wire
    assert any("resources/read" in t for t in rows)
    # a new call replaces the view: the old one is torn down first (and answers)
    tab(browser, "tools")
    call_tool(browser, "add", a="1", b="1")
    enter_view(browser, "add", old=outer)
    try:
        wait(browser).until(lambda d: d.find_element(By.ID, "sum").text == "2")
    finally:
        browser.switch_to.default_content()


def test_a_view_renders_when_the_inspector_is_opened_at_localhost(browser: Any, calculator: Inspector) -> None:
    """The inspector answers at ``localhost:PORT`` as at ``127.0.0.1:PORT`` (its Host check takes
    both): a view renders from either, framed by that page alone (``frame-ancestors``), and its
    messages reach that page."""
    local = f"http://localhost:{calculator.port}"
    browser.get(calculator.url.replace(calculator.base, local))
    wait(browser).until(lambda d: "connected:" in d.find_element(By.ID, "status").text)
    call_tool(browser, "add", a="20", b="22")
    enter_view(browser, "add")
    try:
        wait(browser).until(lambda d: d.find_element(By.ID, "sum").text == "42")  # the view got its tool-result
    finally:
        browser.switch_to.default_content()
    sandbox = sandbox_origin(browser, calculator)
    policies = httpx.get(f"{sandbox}/proxy", params={"host": local}).headers.get_list("content-security-policy")
    assert policies[1] == f"frame-ancestors {local}"
    assert httpx.get(f"{sandbox}/proxy", params={"host": "http://evil.example"}).status_code == 403


def test_host_messages_have_the_shapes_the_spec_names(browser: Any, calculator: Inspector) -> None:
    open_connected(browser, calculator)
    call_tool(browser, "add", a="4", b="5")
    enter_view(browser, "add")
    try:
        wait(browser).until(lambda d: d.find_element(By.ID, "sum").text == "9")
        record_host_messages(browser)
        # ask again what the page answers to ui/initialize (the view's own answer was consumed)
        browser.execute_script(
            "window.parent.postMessage({jsonrpc: '2.0', id: 'again', method: 'ui/initialize', params: "
            "{appCapabilities: {}, appInfo: {name: 't', version: '1'}, protocolVersion: '2026-01-26'}}, '*');"
        )
        got = wait(browser).until(
            lambda d: [m for m in d.execute_script("return window.__got") if m.get("id") == "again"]
        )
    finally:
        browser.switch_to.default_content()
    [answer] = got
    assert answer["jsonrpc"] == "2.0" and "error" not in answer
    check_initialize_result(answer["result"], "add")


def test_the_sandbox_csp_and_origin_checks(browser: Any) -> None:
    beacon = Beacon()
    with ServerThread(beacon, path="/") as srv:
        origin = srv.url.rstrip("/")
        insp = Inspector(str(PROBE), "-e", f"BEACON={origin}")
        try:
            open_connected(browser, insp)
            sandbox = sandbox_origin(browser, insp)
            # the policy is a header of the page the view is loaded into (its srcdoc frame inherits it)
            declared = json.dumps(
                {"connectDomains": [origin, "https://x.example; script-src *", "https://y.example\n"]}
            )
            page = httpx.get(f"{sandbox}/proxy", params={"csp": declared})
            assert page.status_code == 200  # an entry ending in a line break is no plain source: dropped
            policies = page.headers.get_list("content-security-policy")
            assert f"connect-src {origin};" in policies[0] and "script-src *" not in policies[0]
            assert "y.example" not in policies[0]
            assert "default-src 'none'" in policies[0] and "object-src 'none'" in policies[0]
            assert policies[1] == f"frame-ancestors {insp.base}"
            default = httpx.get(f"{sandbox}/proxy").headers.get_list("content-security-policy")[0]
            assert "connect-src 'none'" in default and "frame-src 'none'" in default and "base-uri 'self'" in default
            assert httpx.get(f"{sandbox}/api/initial").status_code == 404  # nothing of the inspector there
            assert httpx.get(f"{sandbox}/proxy", headers={"Host": "evil.example"}).status_code == 403

            out = probe(browser, "sealed")
            assert "fetch: blocked" in out and "csp violation: connect-src" in out, out
            assert "top: blocked" in out and "origin: null" in out and "host context tool: sealed" in out
            assert any(line.startswith("model_only: refused") and "visibility" in line for line in out), out
            assert any(line.startswith("unlisted: refused") and "does not list" in line for line in out), out
            assert not any(p.startswith("/fetch-") for p in beacon.paths), beacon.paths

            browser.switch_to.default_content()
            tab(browser, "tools")
            out = probe(browser, "open_view")
            assert "fetch: sent" in out, out
            assert "/fetch-open" in beacon.paths
            # the link: asked, not opened until confirmed
            enter_view(browser, "open_view")
            browser.find_element(By.ID, "link").click()
            browser.switch_to.default_content()
            ask = wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, "#app-view .app-link"))
            assert "/link-open" not in beacon.paths
            main = browser.current_window_handle
            ask.find_element(By.CSS_SELECTOR, "button.link-open").click()
            wait(browser).until(lambda d: "/link-open" in beacon.paths)
            for handle in browser.window_handles:
                if handle != main:
                    browser.switch_to.window(handle)
                    browser.close()
            browser.switch_to.window(main)
            enter_view(browser, "open_view")
            wait(browser).until(lambda d: "link opened" in d.find_element(By.ID, "out").text)
            # Close view: the view is told first (it reports to the beacon, then answers), then removed
            browser.switch_to.default_content()
            assert "/teardown-open" not in beacon.paths
            browser.find_element(By.CSS_SELECTOR, "#app-view button").click()
            wait(browser).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#app-view iframe"))
            assert "/teardown-open" in beacon.paths
            rows = wire_rows(browser)
            assert not any("spoofed" in t for t in rows), "a message from around the sandbox proxy was taken"
            assert any("tools/call model_only" in t for t in rows) is False  # refused in the page, never sent
            assert not any("tools/call unlisted" in t for t in rows)
        finally:
            browser.switch_to.default_content()
            insp.close()


def test_a_view_is_told_the_csp_the_sandbox_applies_not_the_one_declared(browser: Any) -> None:
    """``hostCapabilities.sandbox.csp`` (the ``ui/initialize`` answer) is the policy the view runs
    under: a declared entry the sandbox drops (no plain source expression:
    ``_server._apps.CSP_SOURCE``) is left out, and a key left with nothing is absent."""
    beacon = Beacon()
    with ServerThread(beacon, path="/") as srv:
        origin = srv.url.rstrip("/")
        insp = Inspector(str(PROBE), "-e", f"BEACON={origin}")
        try:
            open_connected(browser, insp)
            out = probe(browser, "loose")
            told = [line for line in out if line.startswith("sandbox csp: ")]
            assert told == ["sandbox csp: " + json.dumps({"connectDomains": [origin]}, separators=(",", ":"))], out
            assert "fetch: sent" in out, out  # the entry kept applies
            line = browser.find_element(By.CSS_SELECTOR, "#app-view .muted").text  # what the user is shown
            applied = json.dumps({"connectDomains": [origin]}, separators=(",", ":"))
            assert f"CSP applied: {applied}" in line, line
            assert 'not applied: connectDomains: "https://x.example; script-src *"' in line, line
        finally:
            browser.switch_to.default_content()
            insp.close()


def probe(driver: Any, tool: str) -> list[str]:
    """Call ``tool`` and read its probe view's report once it is complete."""
    call_tool(driver, tool)
    enter_view(driver, tool)
    try:
        wait(driver).until(lambda d: "ready" in d.find_element(By.ID, "out").text.splitlines())
        return str(driver.find_element(By.ID, "out").text).splitlines()
    finally:
        driver.switch_to.default_content()


def test_what_the_page_sends_validates_against_the_ext_apps_schema(browser: Any, calculator: Inspector) -> None:
    open_connected(browser, calculator)
    # every message the page posts to a view's sandbox, kept in the page (AppView.forCall wrapped)
    browser.execute_script(
        "window.__sent = []; const forCall = AppView.forCall;"
        "AppView.forCall = (tool, args) => { const v = forCall(tool, args);"
        "  if (v) { const post = v.post.bind(v); v.post = (m) => { window.__sent.push(m); post(m); }; } return v; };"
    )
    call_tool(browser, "add", a="2", b="3")
    old, _ = enter_view(browser, "add")
    try:
        wait(browser).until(lambda d: d.find_element(By.ID, "sum").text == "5")
    finally:
        browser.switch_to.default_content()
    tab(browser, "tools")
    call_tool(browser, "add", a="1", b="2")  # the first view is torn down
    enter_view(browser, "add", old=old)
    browser.switch_to.default_content()
    sent = browser.execute_script("return window.__sent")
    methods = [m.get("method", "answer") for m in sent]
    for method in SCHEMAS:
        assert method in methods or method == "ui/initialize", methods
    answers = [m for m in sent if "result" in m and "protocolVersion" in m["result"]]
    assert answers, methods
    checked = 0
    for msg in sent:
        name = SCHEMAS.get(msg.get("method", "ui/initialize" if msg in answers else ""))
        if name is None:
            continue
        view = schema_view(msg)
        instance = view["result"] if msg in answers else {k: v for k, v in view.items() if k != "jsonrpc" and k != "id"}
        errors = [e.message for e in ext_apps_schema(name).iter_errors(instance)]
        assert not errors, (name, errors, instance)
        checked += 1
    assert checked >= 6


def test_the_servers_meta_validates_against_the_ext_apps_schema() -> None:
    tool_meta, resource_meta = ext_apps_schema("McpUiToolMeta"), ext_apps_schema("McpUiResourceMeta")

    async def go(server: Any) -> int:
        seen = 0
        async with base_client(server) as host:
            for tool in await host.list_tools():
                ui = (tool.meta or {}).get("ui")
                if isinstance(ui, dict):
                    assert not list(tool_meta.iter_errors(ui)), ui
                    seen += 1
                    if tool.name not in ("broken", "not_ui"):  # views that cannot be had, on purpose
                        view = await host.app_view(tool.name)
                        assert not list(resource_meta.iter_errors(view.ui)), view.ui
        return seen

    from tests.client.support import arun

    assert arun(go(example_server())) == 2
    assert arun(go(server_with_views())) == 3


def base_client(server: Any) -> Any:
    from mcpio import Client
    from mcpio._client._apps import APPS_HOST

    return Client(server, era="modern", extensions=APPS_HOST)


OTHER_SERVER = """
import pathlib, sys

from mcpio import Server

server = Server("other-server")


@server.tool
def touch() -> str:
    \"\"\"Leaves a mark: called only if a view of another server reached this one.\"\"\"
    pathlib.Path(sys.argv[1]).write_text("touched")
    return "touched"


if __name__ == "__main__":
    server.run()
"""


def test_a_view_never_reaches_the_server_the_inspector_connects_to_next(browser: Any, tmp_path: Path) -> None:
    """A view belongs to the server connection it was opened on (ext-apps §Visibility: "app" is
    callable by the app from the same server connection only; cross-server calls are blocked).
    Connecting the inspector to another server tears the view down, and what it sends meanwhile
    reaches no server: here it keeps calling the next server's ``touch``, which must never run."""
    mark = tmp_path / "touched"
    other = tmp_path / "other_server.py"
    other.write_text(OTHER_SERVER)
    insp = Inspector(str(PROBE))
    try:
        open_connected(browser, insp)
        call_tool(browser, "sealed")
        enter_view(browser, "sealed")
        try:
            wait(browser).until(lambda d: "ready" in d.find_element(By.ID, "out").text.splitlines())
            browser.execute_script(  # from now on, a tools/call of `touch` every 50 ms
                "let n = 0; setInterval(() => window.parent.postMessage({ jsonrpc: '2.0', id: 'touch-' + n++,"
                " method: 'tools/call', params: { name: 'touch', arguments: {} } }, '*'), 50);"
            )
        finally:
            browser.switch_to.default_content()
        target = browser.find_element(By.ID, "target")
        target.clear()
        target.send_keys(f"{sys.executable} {other} {mark}")
        browser.find_element(By.ID, "connect").click()
        wait(browser).until(lambda d: "connected: other-server" in d.find_element(By.ID, "status").text)
        pick_tool(browser, "touch")  # its tools are listed: a view's call of it would be sent now
        wait(browser).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#app-view iframe"))
        assert not mark.exists(), "a view of the first server called a tool of the second"
    finally:
        browser.switch_to.default_content()
        insp.close()
