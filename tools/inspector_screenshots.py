"""Make the inspector screenshots of docs/guides/inspector.md (docs/images/inspector/*.png).

    .venv/bin/python tools/inspector_screenshots.py

Runs ``mcpio inspect quickstart.py`` from examples/ (so the page shows a relative path, never a
folder of this machine) and headless Chromium (Debian's chromium and chromedriver, as the
inspector tests use) at a 1100×640 window with 2× pixels: readable when the docs scale it down.
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
OUT = ROOT / "docs" / "images" / "inspector"


def main() -> int:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpio", "inspect", "quickstart.py", "--no-browser"],
        cwd=ROOT / "examples",
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    found = re.search(r"open (http://127\.0\.0\.1:\d+/\?code=\w+)", proc.stderr.readline())
    assert found, "mcpio inspect printed no URL"
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="shots-")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,640",
                 "--force-device-scale-factor=2", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    try:
        wait = WebDriverWait(driver, 30)
        driver.get(found.group(1))
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "connected:"))
        driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="tools"]').click()
        wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, '#tool-list li[data-name="add"]'))).click()
        panel = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#tool-panel form.tool-form")))
        panel.find_element(By.NAME, "a").send_keys("2")
        panel.find_element(By.NAME, "b").send_keys("3")
        panel.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tool-panel .result pre"))
        driver.save_screenshot(str(OUT / "tool-call-modern.png"))
        driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="wire"]').click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#wire tbody tr"))
        driver.save_screenshot(str(OUT / "wire-legacy.png"))
    finally:
        driver.quit()
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(profile, ignore_errors=True)
    print(f"wrote {OUT / 'tool-call-modern.png'} and {OUT / 'wire-legacy.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
