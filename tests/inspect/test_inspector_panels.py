"""The inspector's Tasks and Skills panels, its favicon and its empty states, in headless
Chromium (the fixtures of test_inspector_browser) against a real ``mcpio inspect`` inspecting
``tasks_server.py`` (tools run as tasks, a folder of skills) and ``empty_server.py``, over stdio,
in both eras."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from tests.inspect.test_inspector_browser import Inspector, browser, open_connected, shot, tab, wait

__all__ = ["browser"]  # the module-scoped Chromium of test_inspector_browser

HERE = Path(__file__).resolve().parent
TASKS_SERVER = HERE / "tasks_server.py"
EMPTY_SERVER = HERE / "empty_server.py"
FAILING_SERVER = HERE / "failing_list_server.py"


@pytest.fixture
def inspector(request: pytest.FixtureRequest) -> Iterator[Inspector]:
    insp = Inspector(str(TASKS_SERVER), era=getattr(request, "param", "auto"))
    try:
        yield insp
    finally:
        insp.close()


def console_errors(driver) -> list[str]:
    """The console's errors since the last call (a 404 is one: "Failed to load resource")."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def start_task(driver, tool: str, **fields: str) -> None:
    tab(driver, "tasks")
    wait(driver).until(EC.element_to_be_clickable((By.CSS_SELECTOR, f'#task-tool-list li[data-name="{tool}"]'))).click()
    form = wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#task-panel form.task-form")))
    for name, value in fields.items():
        form.find_element(By.NAME, name).clear()
        form.find_element(By.NAME, name).send_keys(value)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(driver).until(EC.presence_of_element_located((By.ID, "task-status")))


def text_of(driver, element_id: str) -> str:
    """The element's text now (read in the page: the task panel is redrawn as the task changes)."""
    return driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e ? e.innerText : ''", element_id
    )


def click(driver, xpath: str) -> None:
    """Click what ``xpath`` finds, again if the panel was redrawn under the click."""
    again = WebDriverWait(driver, 20, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))
    again.until(lambda d: d.find_element(By.XPATH, xpath).click() or True)


def task_status(driver, status: str, timeout: float = 20) -> None:
    wait(driver, timeout).until(lambda d: text_of(d, "task-status") == status)


@pytest.mark.parametrize("inspector", ["legacy", "modern"], indirect=True)
def test_a_task_runs_to_completed_with_its_result(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    console_errors(browser)
    start_task(browser, "build_report", topic="tea")
    task_status(browser, "completed")
    history = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#task-panel .task-history li")]
    assert history[0].startswith("working") and history[-1].startswith("completed"), history
    assert any("wrote page 3 of 3" in h for h in history), history  # the status messages on the way
    assert "Report on tea: 3 pages" in text_of(browser, "task-panel")  # shown with the end, not after it
    row = browser.find_element(By.CSS_SELECTOR, "#task-list li.active")
    assert "build_report" in row.text and "completed" in row.text
    # only the tools that run as tasks are offered; the plain one is not
    names = [li.get_attribute("data-name") for li in browser.find_elements(By.CSS_SELECTOR, "#task-tool-list li")]
    assert "build_report" in names and ("add" not in names) == (inspector.proc.args[-1] == "legacy")
    era = inspector.proc.args[-1]
    if era == "legacy":  # 2025-11-25 has tasks/list: the task is there
        browser.find_element(By.ID, "tasks-list").click()
        wait(browser).until(lambda d: "tasks/list: 1 task" in d.find_element(By.ID, "toast").text)
    shot(browser, f"task-completed-{era}")
    assert console_errors(browser) == []


@pytest.mark.parametrize("inspector", ["legacy", "modern"], indirect=True)
def test_a_long_task_is_cancelled_from_the_page(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    start_task(browser, "wait_forever")
    task_status(browser, "working")
    click(browser, '//div[@id="task-panel"]//button[text()="Cancel task"]')
    task_status(browser, "cancelled")
    assert "Cancel task" not in text_of(browser, "task-panel")
    tab(browser, "wire")  # the page sent tasks/cancel
    assert any("tasks/cancel" in r.text for r in browser.find_elements(By.CSS_SELECTOR, "#wire tbody tr"))


@pytest.mark.parametrize("inspector", ["legacy", "modern"], indirect=True)
def test_an_input_required_task_is_answered_from_the_page(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    start_task(browser, "publish", draft="the notes")
    task_status(browser, "input_required")
    if inspector.proc.args[-1] == "modern":  # the question is in the task itself
        assert "Publish where?" in text_of(browser, "task-panel")
    shot(browser, f"task-input-required-{inspector.proc.args[-1]}")
    click(browser, '//div[@id="task-panel"]//button[text()="Answer in Requests"]')
    ask = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#asks .ask")))
    assert "Publish where?" in ask.text
    ask.find_element(By.NAME, "channel").send_keys("#news")
    ask.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    tab(browser, "tasks")
    task_status(browser, "completed")
    assert "published the notes to #news" in text_of(browser, "task-panel")


def test_skills_are_listed_and_skill_md_is_shown_as_text(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    console_errors(browser)
    tab(browser, "skills")
    skill = 'li[data-name="skill://release-notes/SKILL.md"]'
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, f"#skill-list {skill}"))).click()
    panel = browser.find_element(By.ID, "skill-panel")
    md = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#skill-panel .skill-md")))
    assert md.find_element(By.TAG_NAME, "h3").text == "Release notes"
    assert [s.text for s in md.find_elements(By.TAG_NAME, "strong")] == ["kind"]
    assert "<script>document.title='pwned'</script>" in md.text  # shown as text, never run
    assert not panel.find_elements(By.CSS_SELECTOR, "img, script") and browser.title == "mcpio inspect"
    assert "Write release notes from a list of merged changes." in panel.text
    shot(browser, "skills")
    panel.find_element(By.CSS_SELECTOR, 'button[data-uri="skill://release-notes/reference/TEMPLATE.md"]').click()
    wait(browser).until(lambda d: "Version X.Y" in d.find_element(By.ID, "skill-panel").text)
    assert console_errors(browser) == []


@pytest.mark.parametrize("inspector", ["legacy"], indirect=True)
def test_a_legacy_connection_has_no_skills(browser, inspector: Inspector) -> None:
    open_connected(browser, inspector)
    tab(browser, "skills")
    wait(browser).until(lambda d: "This server offers no skills" in d.find_element(By.ID, "skill-list").text)


def test_empty_states_and_a_clean_console(browser) -> None:
    """A server with nothing: every panel says so; the browser's console has no error (no 404
    for the favicon, which the inspector serves)."""
    insp = Inspector(str(EMPTY_SERVER))
    try:
        console_errors(browser)  # forget the pages of earlier tests (their inspector stopped under them)
        browser.get(insp.url)
        wait(browser).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))
        expected = {
            "tools": ("tool-list", "This server has no tools."),
            "resources": ("resource-list", "This server has no resources or resource templates."),
            "prompts": ("prompt-list", "This server has no prompts."),
            "tasks": ("task-tool-list", "This server does not support tasks"),
            "skills": ("skill-list", "This server offers no skills"),
        }
        for name, (list_id, text) in expected.items():
            tab(browser, name)
            wait(browser).until(lambda d, i=list_id, t=text: t in d.find_element(By.ID, i).text)
        shot(browser, "empty-states")
        assert console_errors(browser) == []
        # the page names its icon, which the inspector serves (Chrome fetches an icon at a time of
        # its choosing, or not at all: ask for the one the page names, as the browser would)
        icon = "const i = document.querySelector('link[rel=icon]'); return i ? i.href : null"
        assert browser.execute_script(icon) == insp.base + "/favicon.ico"
        favicon = httpx.get(insp.base + "/favicon.ico")
        assert favicon.status_code == 200 and favicon.headers["content-type"] == "image/svg+xml"
        assert favicon.content.startswith(b"<svg")
    finally:
        insp.close()


def test_a_list_that_fails_says_why_in_its_place(browser) -> None:
    insp = Inspector(f"{sys.executable} {FAILING_SERVER}", era="legacy")
    try:
        open_connected(browser, insp)
        tab(browser, "tools")
        error = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#tool-list li.list-error")))
        assert "Could not list the tools: the tool catalogue is broken" in error.text
        tab(browser, "prompts")
        assert "This server has no prompts." in browser.find_element(By.ID, "prompt-list").text
    finally:
        insp.close()
