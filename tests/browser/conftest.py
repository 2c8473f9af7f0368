"""A real browser for the report and notebook tests: Playwright for Python driving the system's
headless Chromium (Debian's ``chromium``, passed as ``executable_path``: Playwright's own browser
download is not used). ``.ci/run`` installs the package when it is missing; without it (or
without the ``playwright`` package) these tests skip and say why."""

import os
import shutil

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path():
    """``$TAMP_CHROMIUM``, else the first Chromium on PATH (None when there is none)."""
    env = os.environ.get("TAMP_CHROMIUM")
    if env:
        return env
    return next((p for p in map(shutil.which, CANDIDATES) if p), None)


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium: install the Debian package `chromium` (.ci/run does) or set TAMP_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the `playwright` Python package is missing (it is in tamp's test extra)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


class Page:
    """A page and the errors it logged (console errors and uncaught exceptions)."""

    def __init__(self, page):
        self.page = page
        self.errors = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path):
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")
        return self.page


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    p = Page(context.new_page())
    yield p
    context.close()
