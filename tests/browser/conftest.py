"""The console in a real browser: Debian's headless Chromium driven by Selenium, one per module.

Only the system browser and driver are used (`/usr/bin/chromium`, `/usr/bin/chromedriver`, from the
`chromium` and `chromium-driver` packages that `.ci/run` installs): nothing is downloaded at test
time. Each module gets one browser and one broker (`--memory --http-port 0`); tests use unique names.

Screenshots of each main page go under the test's tmp dir; with `CONSOLE_SCREENSHOTS=DIR` they are
also written to DIR (`CONSOLE_SCREENSHOTS=docs/screenshots python -m pytest tests/browser` remakes
those docs/observability.md shows).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.integration.broker import DATA_DIR_ENV, BrokerProcess

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1280, 1000)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def console_broker():
    process = BrokerProcess(["--memory", "--http-port", "0"], env=DATA_DIR_ENV).start()
    yield process
    assert process.stop() == 0, process.log()


@pytest.fixture
def screenshot(browser, tmp_path):
    """screenshot(name): the current page as name.png in the test's tmp dir (and CONSOLE_SCREENSHOTS)."""

    def take(name: str) -> Path:
        path = tmp_path / f"{name}.png"
        assert browser.save_screenshot(str(path)), f"no screenshot of {browser.current_url}"
        assert path.stat().st_size > 10_000, "the screenshot is blank"
        wanted = os.environ.get("CONSOLE_SCREENSHOTS")
        if wanted:
            Path(wanted).mkdir(parents=True, exist_ok=True)
            (Path(wanted) / f"{name}.png").write_bytes(path.read_bytes())
        return path

    return take
