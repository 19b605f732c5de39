"""``mcpio inspect`` driven in a real browser: Debian's Chromium through Selenium and Debian's
chromedriver, headless, against a real ``mcpio inspect`` process inspecting real servers
(mcpio's own test server over stdio, both eras, and the TypeScript server-everything).

Each main screen is saved as a PNG under ``test-artifacts/inspector/`` (gitignored).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import peers

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).resolve().parent / "inspected_server.py"
ARTIFACTS = ROOT / "test-artifacts" / "inspector"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra")
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.fail(
        "Chromium and chromedriver are missing: scripts/test installs them (scripts/setup-system chromium chromium-driver)"
    )

from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


class Inspector:
    """A running ``mcpio inspect`` process and its URL."""

    def __init__(
        self, *target: str, era: str = "auto", env: dict[str, str] | None = None, open_browser: bool = False
    ) -> None:
        argv = [sys.executable, "-m", "mcpio", "inspect", *target, *([] if open_browser else ["--no-browser"])]
        argv += ["--era", era]
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()  # the first line is the URL (or why it could not start)
        m = re.search(r"open (http://127\.0\.0\.1:(\d+)/\?code=(\w+))", line)
        assert m, (
            f"no URL from mcpio inspect: {line!r} {self.proc.stderr.read() if self.proc.poll() is not None else ''}"
        )
        self.url, self.port, self.code = m.group(1), int(m.group(2)), m.group(3)
        self.base = f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        # Nothing beyond loopback: every name but localhost resolves to nothing (a page asking
        # for web fonts, say, fails at once instead of waiting on this machine's closed network).
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
        "--window-size=1400,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console, for console_errors()
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def inspector(request: pytest.FixtureRequest) -> Iterator[Inspector]:
    era = getattr(request, "param", "auto")
    insp = Inspector(str(SERVER), era=era)
    try:
        yield insp
    finally:
        insp.close()


def sign_in(http: httpx.Client, insp: Inspector) -> dict[str, str]:
    """Use the inspector's link with ``http`` (its cookie is kept there); the API's headers."""
    signed = http.get(insp.url)
    assert signed.status_code == 200, signed.text
    key = re.search(r"url=/#k=(\w+)", signed.text)
    assert key, signed.text
    return {"Content-Type": "application/json", "X-Inspector-Key": key.group(1)}


def wait(driver, timeout: float = 20):
    return WebDriverWait(driver, timeout)


def shot(driver, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def open_connected(driver, insp: Inspector) -> None:
    driver.get(insp.url)
    wait(driver).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))


def tab(driver, name: str) -> None:
    driver.find_element(By.CSS_SELECTOR, f'#tabs button[data-tab="{name}"]').click()


def pick_tool(driver, name: str) -> None:
    tab(driver, "tools")
    # the list is drawn again when the server's tools change (list_changed): click the item found now
    clicked = WebDriverWait(
        driver, 20, ignored_exceptions=(StaleElementReferenceException, ElementNotInteractableException)
    ).until(lambda d: d.find_element(By.CSS_SELECTOR, f'#tool-list li[data-name="{name}"]').click() or True)
    assert clicked
    wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#tool-panel form.tool-form")))


def result_text(driver) -> str:
    return driver.find_element(By.CSS_SELECTOR, "#tool-panel .call-result").text


@pytest.mark.parametrize("inspector", ["legacy", "modern"], indirect=True)
def test_connect_fill_a_tool_form_and_call(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    era = "legacy" if inspector.proc.args[-1] == "legacy" else "modern"
    assert f"({era})" in browser.find_element(By.ID, "status").text
    shot(browser, f"server-{era}")
    pick_tool(browser, "add")
    panel = browser.find_element(By.ID, "tool-panel")
    panel.find_element(By.NAME, "a").send_keys("2")
    panel.find_element(By.NAME, "b").send_keys("x")
    panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    # validation happens in the page: nothing is sent
    wait(browser).until(lambda d: "Not sent" in result_text(d))
    assert "b: not a number" in result_text(browser)
    panel.find_element(By.NAME, "b").clear()
    panel.find_element(By.NAME, "b").send_keys("3")
    panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tool-panel .result pre"))
    assert result_text(browser).splitlines()[0] == "5"
    shot(browser, f"tool-call-{era}")
    # the call is in the wire view, in both directions, with a round-trip time
    tab(browser, "wire")
    rows = browser.find_elements(By.CSS_SELECTOR, "#wire tbody tr")
    texts = [r.text for r in rows]
    assert any("tools/call add" in t for t in texts), texts[-5:]
    assert any(t.startswith(tuple("0123456789")) and "result #" in t for t in texts)
    shot(browser, f"wire-{era}")


def test_progress_and_cancel(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    pick_tool(browser, "wait_forever")
    browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
    wait(browser).until(lambda d: "3 / 3 · step 3" in d.find_element(By.CSS_SELECTOR, "#tool-panel form").text)
    shot(browser, "progress")
    cancel = browser.find_element(By.XPATH, '//div[@id="tool-panel"]//button[text()="Cancel"]')
    cancel.click()
    wait(browser).until(lambda d: "Failed" in result_text(d) or "Error" in result_text(d))
    # the server was told: a notifications/cancelled went out on the wire
    tab(browser, "wire")
    wait(browser).until(
        lambda d: any("notifications/cancelled" in r.text for r in d.find_elements(By.CSS_SELECTOR, "#wire tbody tr"))
    )


@pytest.mark.parametrize("inspector", ["legacy", "modern"], indirect=True)
def test_elicitation_answered_from_the_page(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    pick_tool(browser, "greet")
    browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
    wait(browser).until(lambda d: d.find_element(By.ID, "ask-count").is_displayed())
    tab(browser, "asks")
    ask = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#asks .ask")))
    assert "What is your name?" in ask.text
    shot(browser, "elicitation")
    ask.find_element(By.NAME, "name").send_keys("Ada")
    ask.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    tab(browser, "tools")
    wait(browser).until(lambda d: "Hello, Ada!" in result_text(d))


def test_hostile_text_is_shown_never_run(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    instructions = browser.find_element(By.ID, "server-info").text
    assert "<script>document.title='pwned'</script>" in instructions
    pick_tool(browser, "hostile")
    panel = browser.find_element(By.ID, "tool-panel")
    assert "onerror=" in panel.text  # the description, as text
    panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tool-panel .result pre"))
    assert "<script>" in result_text(browser)
    assert browser.title == "mcpio inspect"
    assert not browser.find_elements(By.CSS_SELECTOR, "#tool-panel img:not(.content)")
    pick_tool(browser, "picture")
    browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
    img = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#tool-panel img.content")))
    assert browser.execute_script("return arguments[0].naturalWidth", img) == 1


def test_wrong_code_and_foreign_origin_are_refused(browser, inspector: Inspector) -> None:
    browser.get(inspector.base + "/?code=wrong")
    assert "wrong or was already used" in browser.page_source
    browser.get(inspector.base + "/")
    assert "not signed in" in browser.page_source
    shot(browser, "wrong-token")
    with httpx.Client() as http:  # the link signs this client in: an HttpOnly, SameSite=Strict cookie
        good = sign_in(http, inspector)
        cookie = next(c for c in http.cookies.jar if c.name == f"mcpio_inspect_{inspector.port}")
        assert cookie.has_nonstandard_attr("HttpOnly") and cookie.get_nonstandard_attr("SameSite") == "Strict"
        assert inspector.code not in str(cookie.value)
        # the API: no cookie, no key, a foreign Origin, a rebinding Host, a form post: all refused, no CORS
        api = inspector.base + "/api/initial"
        assert http.post(api, headers=good, content=b"{}").status_code == 200
        assert httpx.post(api, headers=good, content=b"{}").status_code == 403  # the key without the cookie
        json_only = {"Content-Type": "application/json"}  # the cookie without the key (leaked to another port)
        assert http.post(api, headers=json_only, content=b"{}").status_code == 403
        assert http.get(inspector.base + "/api/events").status_code == 403
        r = http.post(api, headers={**good, "Origin": "http://127.0.0.1:1"}, content=b"{}")
        assert r.status_code == 403 and "access-control-allow-origin" not in r.headers
        assert (
            http.post(api, headers={**good, "Host": f"evil.example:{inspector.port}"}, content=b"{}").status_code == 403
        )
        assert http.post(api, headers={**good, "Content-Type": "text/plain"}, content=b"{}").status_code == 415
        page = http.get(inspector.base + "/")
        assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["referrer-policy"] == "no-referrer"
    # the code is used up: replayed, the link signs no one else in
    replayed = httpx.get(inspector.url)
    assert replayed.status_code == 403 and "already used" in replayed.text
    assert "set-cookie" not in replayed.headers


def test_the_browser_is_started_without_a_secret_on_its_command_line(browser, tmp_path: Path) -> None:
    """``mcpio inspect`` starts "the browser" ($BROWSER: a script recording its /proc cmdline,
    what every local user can read): the command line names a private launcher file and holds
    neither the code nor the session; Chromium, opening that file, lands signed in; the code,
    replayed afterwards, is refused."""
    argv_file = tmp_path / "argv"
    env = {"BROWSER": f"{sys.executable} {Path(__file__).parent / 'fake_browser.py'} %s"}
    insp = Inspector(str(SERVER), env={**env, "FAKE_BROWSER_ARGV": str(argv_file)}, open_browser=True)
    try:
        wait(browser).until(lambda _: argv_file.exists())
        cmdline = argv_file.read_bytes().decode().split("\0")
        assert insp.code not in "".join(cmdline) and "code=" not in "".join(cmdline)
        launcher = next(a for a in cmdline if a.startswith("file://"))
        path = Path(launcher.removeprefix("file://"))
        assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)
        assert path.stat().st_uid == os.getuid()
        browser.get(launcher)
        wait(browser).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))
        assert browser.current_url == insp.base + "/"
        cookie = browser.get_cookie(f"mcpio_inspect_{insp.port}")
        assert cookie and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert browser.execute_script("return document.cookie") == ""  # no script sees it
        assert len(browser.execute_script("return localStorage.getItem('mcpio-inspect-key')")) == 48
        replayed = httpx.get(insp.url)
        assert replayed.status_code == 403 and "already used" in replayed.text
        browser.refresh()  # the signed-in browser goes on working
        wait(browser).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))
    finally:
        insp.close()
    assert not path.exists()  # the launcher is removed when the inspector stops


def test_an_expired_code_is_refused() -> None:
    """A code works within a few minutes of being made: here, none (``code_seconds=0``)."""
    from mcpio._inspect._app import InspectorApp
    from mcpio._inspect._session import InspectorSession
    from tests.support.http import ServerThread

    apps: list[InspectorApp] = []

    async def app(scope, receive, send):  # the port is known once served: the app is made then
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await apps[0](scope, receive, send)

    with ServerThread(app, path="") as srv:
        apps.append(InspectorApp(InspectorSession(lambda *a, **k: None), port=srv.port, code_seconds=0))
        code = apps[0].new_code()
        r = httpx.get(f"{srv.base}/?code={code}")
        assert r.status_code == 403 and "expired" in r.text and "set-cookie" not in r.headers
        r = httpx.get(f"{srv.base}/?code={code}")  # and it stays used
        assert r.status_code == 403 and "already used" in r.text


def test_copy_as_mcpio_call_keeps_a_hostile_tool_name_a_tool_name(tmp_path: Path) -> None:
    """A tool named like an option (``--trace=FILE``): the command line the inspector writes makes
    `mcpio call` look for that tool, and write no file."""
    insp = Inspector(str(SERVER))
    trace = tmp_path / "bashrc"
    try:
        with httpx.Client(timeout=60) as http:
            api, json_ = insp.base + "/api/", sign_in(http, insp)
            assert http.post(api + "connect", headers=json_, json={"target": str(SERVER)}).status_code == 200
            answer = http.post(api + "command", headers=json_, json={"name": f"--trace={trace}", "arguments": {"a": 1}})
        command = answer.json()["command"]
        assert command.startswith("mcpio call -- "), command
        argv = shlex.split(command)
        run = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert run.returncode == 2 and "has no tool '--trace=" in run.stderr, run.stderr
        assert not trace.exists()
    finally:
        insp.close()


def test_export_as_pytest_runs(browser, tmp_path: Path) -> None:
    """mcpio's own quick-start example: a call, then "Export as a pytest test", run as it is."""
    inspector = Inspector(str(ROOT / "examples" / "quickstart.py"))
    try:
        _export_and_run(browser, inspector, tmp_path)
    finally:
        inspector.close()


def _export_and_run(browser, inspector: Inspector, tmp_path: Path) -> None:
    open_connected(browser, inspector)
    pick_tool(browser, "add")
    panel = browser.find_element(By.ID, "tool-panel")
    panel.find_element(By.NAME, "a").send_keys("20")
    panel.find_element(By.NAME, "b").send_keys("22")
    panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tool-panel .result pre"))
    tab(browser, "history")
    browser.find_element(By.ID, "export").click()
    box = wait(browser).until(EC.visibility_of_element_located((By.ID, "export-source")))
    source = box.get_attribute("value")
    assert "def test_01_add():" in source
    test_file = tmp_path / "test_exported.py"
    test_file.write_text(source)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout


def test_server_everything_in_the_browser(browser) -> None:
    insp = Inspector(" ".join(peers.everything_argv()))
    try:
        open_connected(browser, insp)
        pick_tool(browser, "echo")
        browser.find_element(By.CSS_SELECTOR, "#tool-panel [name=message]").send_keys("hi from the page")
        browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
        wait(browser).until(lambda d: "hi from the page" in result_text(d))
        tab(browser, "resources")
        items = browser.find_elements(By.CSS_SELECTOR, "#resource-list li")
        assert len(items) > 1
        shot(browser, "server-everything")
    finally:
        insp.close()


def test_bad_servers_keep_the_page_responsive(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    # 10,000 properties: edited as JSON, the page still answers
    pick_tool(browser, "huge_schema")
    assert "10000 properties" in browser.find_element(By.ID, "tool-panel").text
    # a schema that refers to itself: rendered to a bounded depth
    pick_tool(browser, "cyclic")
    assert browser.find_elements(By.CSS_SELECTOR, "#tool-panel fieldset")
    browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
    wait(browser).until(lambda d: "ok" in result_text(d))
    # a 10 MB result: the first 100,000 characters, and a button for the rest
    pick_tool(browser, "big")
    browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
    more = wait(browser, 60).until(
        EC.presence_of_element_located((By.XPATH, '//div[@id="tool-panel"]//button[starts-with(text(), "show all")]'))
    )
    assert "10485760" in more.text
    shot(browser, "big-result")
    # the server dies mid-call: the call fails with a message and the page says so
    pick_tool(browser, "die")
    browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
    wait(browser, 30).until(lambda d: "Failed" in result_text(d) or "Error" in result_text(d))
    assert result_text(browser).strip() != ""
    tab(browser, "server")
    assert browser.title == "mcpio inspect"


def test_markdown_resources_and_prompts(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    pick_tool(browser, "notes")
    browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
    toggle = wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#tool-panel .md-toggle")))
    toggle.click()
    md = browser.find_element(By.CSS_SELECTOR, "#tool-panel .markdown")
    assert md.find_element(By.TAG_NAME, "strong").text == "bold"
    assert [li.text for li in md.find_elements(By.TAG_NAME, "li")] == ["one", "two <b>not html</b>"]
    assert not md.find_elements(By.TAG_NAME, "b")
    # a resource template: its variable is a field
    tab(browser, "resources")
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '#resource-list li[data-name="memo"]'))).click()
    browser.find_element(By.CSS_SELECTOR, "#resource-panel input[name=topic]").send_keys("tea")
    browser.find_element(By.XPATH, '//div[@id="resource-panel"]//button[text()="Read"]').click()
    wait(browser).until(lambda d: "memo about tea" in d.find_element(By.ID, "resource-panel").text)
    shot(browser, "resources")
    # a prompt with an argument
    tab(browser, "prompts")
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '#prompt-list li[data-name="review"]'))).click()
    browser.find_element(By.CSS_SELECTOR, "#prompt-panel [name=code]").send_keys("x = 1")
    browser.find_element(By.CSS_SELECTOR, "#prompt-panel button[type=submit]").click()
    wait(browser).until(lambda d: "Please review" in d.find_element(By.ID, "prompt-panel").text)
    shot(browser, "prompts")
    # logs arrive and the level can be set
    tab(browser, "logs")
    shot(browser, "logs")


def test_official_sdk_server_with_sampling_answered_by_hand(browser) -> None:
    insp = Inspector(f"{sys.executable} {ROOT / 'tests' / 'servers' / 'sdk_server.py'}", era="legacy")
    try:
        open_connected(browser, insp)
        pick_tool(browser, "ask_llm")
        browser.find_element(By.CSS_SELECTOR, "#tool-panel [name=question]").send_keys("capital of France?")
        browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
        tab(browser, "asks")
        ask = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#asks .ask")))
        assert "capital of France?" in ask.text
        shot(browser, "sampling")
        ask.find_element(By.NAME, "reply").send_keys("Paris")
        ask.find_element(By.XPATH, './/button[text()="Send reply"]').click()
        tab(browser, "tools")
        wait(browser).until(lambda d: "Paris" in result_text(d))
    finally:
        insp.close()


@pytest.mark.parametrize("inspector", ["legacy", "modern"], indirect=True)
def test_subscribed_resource_updates_live(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    tab(browser, "resources")
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '#resource-list li[data-name="counter"]'))).click()
    browser.find_element(By.XPATH, '//div[@id="resource-panel"]//button[text()="Subscribe"]').click()
    wait(browser).until(lambda d: "subscribed to counter://value" in d.find_element(By.ID, "toast").text)
    pick_tool(browser, "bump")
    browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tool-panel .result pre"))
    tab(browser, "resources")  # the panel was read again when the update arrived
    wait(browser).until(lambda d: "counter = 1" in d.find_element(By.ID, "resource-panel").text)


def test_oauth_login_when_the_server_asks(browser, tmp_path: Path) -> None:
    """A protected server (a real OAuth AS and resource server on loopback): the page shows the
    login link, the login completes through the inspector's loopback redirect, and it connects;
    the token is stored, so the next connection needs no login."""
    from mcpio import Server
    from tests.support.http import ServerThread
    from tests.support.oauth_as import TestAS, protect

    server = Server("protected")

    @server.tool
    def whoami() -> str:
        return "a logged-in user"

    auth_server = TestAS()
    env = {"BROWSER": "false", "MCPIO_TOKEN_STORE": str(tmp_path / "tokens.json")}  # no system browser here
    with ServerThread(auth_server, path="") as as_srv:
        auth_server.issuer = as_srv.base
        with ServerThread(protect(server.http_app(), auth_server, step_up="read")) as mcp:
            insp = Inspector(mcp.url, env=env)
            try:
                browser.get(insp.url)
                link = wait(browser).until(EC.presence_of_element_located((By.ID, "login-link")))
                assert link.get_attribute("href").startswith(as_srv.base + "/authorize?")
                shot(browser, "oauth-login")
                browser.get(link.get_attribute("href"))  # the AS approves and redirects to the inspector's listener
                assert "Authorization received by mcpio" in browser.find_element(By.TAG_NAME, "body").text
                browser.get(insp.url)
                wait(browser).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))
                pick_tool(browser, "whoami")
                browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
                wait(browser).until(lambda d: "a logged-in user" in result_text(d))
            finally:
                insp.close()
            assert (tmp_path / "tokens.json").is_file()
            logins = sum(1 for r in auth_server.log if r.get("path") == "/authorize")
            insp = Inspector(mcp.url, env=env)  # the stored token: connected with no login
            try:
                browser.get(insp.url)
                wait(browser).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))
            finally:
                insp.close()
            assert sum(1 for r in auth_server.log if r.get("path") == "/authorize") == logins
