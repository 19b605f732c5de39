"""The inspector's page as a newcomer reads it (issue 34), in a real Chromium against a real
``mcpio inspect``: capability trees indented with ``{}`` for empty objects, a list of strings
typed as comma-separated values, failed tool calls marked in History, and an exported pytest
file that finds its server from its own location and starts it with the inspected environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.inspect.test_inspector_browser import (  # noqa: F401 - browser is a fixture
    EC,
    ROOT,
    SERVER,
    By,
    Inspector,
    browser,
    open_connected,
    pick_tool,
    result_text,
    tab,
    wait,
)


def test_capabilities_history_and_list_inputs(browser) -> None:  # noqa: F811
    insp = Inspector(str(SERVER))
    try:
        open_connected(browser, insp)
        info = browser.find_element(By.ID, "server-info")
        assert "logging: {}" in info.text and "completions: {}" in info.text  # empty objects are {}
        nested = info.find_elements(By.CSS_SELECTOR, ".tree .tree")
        assert nested, "nested capability trees are rendered"
        outer = info.find_element(By.CSS_SELECTOR, ".tree").location["x"]
        listed = [e for e in nested if e.is_displayed() and "listChanged" in e.text]
        assert listed and all(e.location["x"] > outer + 10 for e in listed)  # indented under their parent

        pick_tool(browser, "pick")
        panel = browser.find_element(By.ID, "tool-panel")
        panel.find_element(By.NAME, "tags").send_keys("red, green ,blue")
        panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait(browser).until(lambda d: "red/1/red,green,blue" in result_text(d))

        pick_tool(browser, "oops")
        panel = browser.find_element(By.ID, "tool-panel")
        panel.find_element(By.NAME, "why").send_keys("disk full")
        panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait(browser).until(lambda d: "oops: disk full" in result_text(d))
        tab(browser, "history")
        items = browser.find_elements(By.CSS_SELECTOR, "#history li")
        failed = [li for li in items if "oops" in li.text]
        ok = [li for li in items if "pick" in li.text]
        assert failed and "tool error: " in failed[-1].text and "disk full" in failed[-1].text
        assert "failed" in failed[-1].get_attribute("class")
        assert ok and "ok" in ok[-1].text and "failed" not in (ok[-1].get_attribute("class") or "")
    finally:
        insp.close()


def test_the_exported_test_runs_from_anywhere_with_the_servers_env(browser, tmp_path: Path) -> None:  # noqa: F811
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "server.py").write_text(
        "import os\n\nfrom mcpio import Server\n\nserver = Server('envy')\n\n\n"
        "@server.tool\ndef greeting() -> str:\n    return os.environ['GREETING'] + ' from ' + os.environ['API_KEY'][:2]\n"
        "\n\nif __name__ == '__main__':\n    server.run()\n"
    )
    relative = os.path.relpath(project / "server.py", ROOT)  # as typed in a terminal (inspect runs in ROOT)
    insp = Inspector(relative, "-e", "GREETING=hello", "-e", "API_KEY=k9-secret")
    try:
        open_connected(browser, insp)
        pick_tool(browser, "greeting")
        browser.find_element(By.CSS_SELECTOR, "#tool-panel button[type=submit]").click()
        wait(browser).until(lambda d: "hello from k9" in result_text(d))
        tab(browser, "history")
        browser.find_element(By.ID, "export").click()
        source = wait(browser).until(EC.visibility_of_element_located((By.ID, "export-source"))).get_attribute("value")
    finally:
        insp.close()
    assert "k9-secret" not in source  # a secret-looking value is read from the environment, not written
    saved = project / "tests" / "test_exported.py"
    saved.write_text(source)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(saved)],
        capture_output=True,
        text=True,
        cwd=project / "tests",  # not where inspect ran: a relative target would name another file
        env={**os.environ, "API_KEY": "k9-other", "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
    )
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr
