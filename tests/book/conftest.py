"""The browser the book's tests read pages with: headless Chromium, driven by Selenium through Debian's chromedriver."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMEDRIVER = Path("/usr/bin/chromedriver")
# Without the networking flags Chromium keeps trying to reach Google's services and stalls on a
# closed network; a fresh --user-data-dir is added per run.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--window-size=1400,900",  # the width the book promises code without a horizontal scroll bar
]
BROWSER_TIMEOUT_S = 60


def _find_chromium() -> str:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium and CHROMEDRIVER.is_file():
        return chromium
    reason = (
        "headless Chromium is needed to read the book: install Debian's packages with "
        "`apt-get install chromium chromium-driver` (found chromium: "
        f"{chromium or 'no'}, {CHROMEDRIVER}: {'yes' if CHROMEDRIVER.is_file() else 'no'})"
    )
    if os.environ.get("BOOK_BROWSER_TEST") == "skip":
        pytest.skip(f"BOOK_BROWSER_TEST=skip: {reason}")
    pytest.fail(f"{reason}; set BOOK_BROWSER_TEST=skip to skip the browser tests")


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Headless Chromium with a fresh profile, recording console messages and network requests."""
    chromium = _find_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(BROWSER_TIMEOUT_S)
    driver.set_script_timeout(BROWSER_TIMEOUT_S)
    yield driver
    driver.quit()
