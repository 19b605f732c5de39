"""Make the inspector screenshots of docs/guides/inspector.md (docs/images/inspector/*.png).

    .venv/bin/python tools/inspector_screenshots.py [FOLDER]

Runs ``mcpio inspect`` on examples/quickstart.py (a tool call, progress, resources, the wire
view) and examples/trip_planner.py (an elicitation and a sampling request answered from the
page) from examples/, and tests/inspect/tasks_server.py (the Tasks and Skills panels) from its
folder, so the page shows a relative path, never a folder of this machine; with
headless Chromium (Debian's chromium and chromedriver, as the inspector tests use) at a
1100x640 window with 2x pixels: readable when the docs scale it down.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images" / "inspector"


def inspect(script: str, era: str, cwd: Path = ROOT / "examples") -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpio", "inspect", script, "--no-browser", "--era", era],
        cwd=cwd,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    found = re.search(r"open (http://127\.0\.0\.1:\d+/\?code=\w+)", proc.stderr.readline())
    assert found, "mcpio inspect printed no URL"
    return proc, found.group(1)


def browser(profile: str) -> webdriver.Chrome:
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1100,640",
        "--force-device-scale-factor=2",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)


def tab(driver: webdriver.Chrome, name: str) -> None:
    driver.find_element(By.CSS_SELECTOR, f'#tabs button[data-tab="{name}"]').click()


def tool(driver: webdriver.Chrome, wait: WebDriverWait, name: str) -> object:
    tab(driver, "tools")
    wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, f'#tool-list li[data-name="{name}"]'))).click()
    return wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#tool-panel form.tool-form")))


def quickstart(driver: webdriver.Chrome) -> None:
    proc, url = inspect("quickstart.py", "auto")
    try:
        wait = WebDriverWait(driver, 30)
        driver.get(url)
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))
        panel = tool(driver, wait, "add")
        panel.find_element(By.NAME, "a").send_keys("2")
        panel.find_element(By.NAME, "b").send_keys("3")
        panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tool-panel .result pre"))
        driver.save_screenshot(str(OUT / "tool-call-modern.png"))
        panel = tool(driver, wait, "slow_sum")
        panel.find_element(By.NAME, "values").send_keys("1, 2, 3.5")
        panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tool-panel .result pre"))
        driver.save_screenshot(str(OUT / "progress.png"))
        tab(driver, "resources")
        wait.until(lambda d: "greeting" in d.find_element(By.ID, "tab-resources").text)
        driver.save_screenshot(str(OUT / "resources.png"))
        tab(driver, "wire")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#wire tbody tr"))
        driver.save_screenshot(str(OUT / "wire-legacy.png"))
    finally:
        proc.terminate()
        proc.wait(10)


def trip(driver: webdriver.Chrome) -> None:
    proc, url = inspect("trip_planner.py", "legacy")
    try:
        wait = WebDriverWait(driver, 30)
        driver.get(url)
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))
        panel = tool(driver, wait, "plan_trip")
        panel.find_element(By.NAME, "city").send_keys("Lisbon")
        panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(lambda d: d.find_element(By.ID, "ask-count").is_displayed())
        tab(driver, "asks")
        ask = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#asks .ask")))
        driver.save_screenshot(str(OUT / "elicitation.png"))
        ask.find_element(By.NAME, "budget").send_keys("80")
        ask.find_element(By.XPATH, './/button[text()="Accept"]').click()
        wait.until(lambda d: "sampling" in d.find_element(By.ID, "asks").text)
        driver.save_screenshot(str(OUT / "sampling.png"))
    finally:
        proc.terminate()
        proc.wait(10)


def panels(driver: webdriver.Chrome) -> None:
    proc, url = inspect("tasks_server.py", "modern", cwd=ROOT / "tests" / "inspect")
    try:
        wait = WebDriverWait(driver, 30)
        driver.get(url)
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))
        tab(driver, "tasks")
        quiet = "document.getElementById('toast').hidden = true; window.scrollTo(0, 0);"
        for name, status in (("build_report", "completed"), ("publish", "input_required")):
            wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, f'#task-tool-list li[data-name="{name}"]'))).click()
            form = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#task-panel form.task-form")))
            form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            wait.until(
                lambda d, s=status: d.execute_script("return document.getElementById('task-status')?.innerText") == s
            )
            driver.execute_script(quiet)
            if status == "completed":  # the status, its history and the result in view
                driver.execute_script("document.querySelector('#task-panel h2').scrollIntoView()")
            driver.save_screenshot(str(OUT / f"task-{status.replace('_', '-')}.png"))
        tab(driver, "skills")
        wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#skill-list li[data-name]"))).click()
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#skill-panel .skill-md")))
        driver.execute_script(quiet + "document.querySelector('#skill-panel h3').scrollIntoView()")
        driver.save_screenshot(str(OUT / "skills.png"))
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> int:
    profile = tempfile.mkdtemp(prefix="shots-")
    driver = browser(profile)
    try:
        quickstart(driver)
        trip(driver)
        panels(driver)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print(f"wrote the screenshots in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
