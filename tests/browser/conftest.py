"""Playwright driving Debian's Chromium against pytest-django's live server."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from tests.browser.waits import SIMULATION_WAIT_MS

CHROMIUM = os.environ.get("FELAB_CHROMIUM", "/usr/bin/chromium")
# Playwright's sync API runs an event loop in this thread; Django's ORM calls made by
# fixtures in the same thread are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# An expect() assertion waits as long as a navigation may (waits.py says why).
expect.set_options(timeout=SIMULATION_WAIT_MS)

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _OpenChromium:
    """One Chromium per test process, kept open while browser tests follow one another and closed
    before any other test runs: Playwright's sync API keeps an event loop marked running in this
    thread while it is open, and tests elsewhere (the practice server's, the load test's) call
    asyncio.run(), which refuses to start inside a running loop. Launching costs about a second of
    CPU between Playwright's driver and Chromium, once per run of browser tests, not per module.
    tests/conftest.py's pytest_runtest_setup closes it."""

    def __init__(self) -> None:
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None

    def get(self) -> Browser:
        if self._browser is not None and not self._browser.is_connected():
            self.close()  # Chromium or its driver died: the next test gets a new one
        if self._browser is None:
            if not os.path.exists(CHROMIUM):
                pytest.fail(f"{CHROMIUM} is missing: `make chromium` installs Debian's chromium.")
            playwright = sync_playwright().start()
            try:
                self._browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
                )
            except BaseException:
                playwright.stop()
                raise
            self._playwright = playwright
        return self._browser

    def close(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


OPEN_CHROMIUM = _OpenChromium()
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def _chromium_closed_at_the_end() -> Iterator[None]:
    yield
    OPEN_CHROMIUM.close()


@pytest.fixture
def browser(_chromium_closed_at_the_end) -> Iterator[Browser]:
    browser = OPEN_CHROMIUM.get()
    yield browser
    # A test that failed half-way may leave its contexts open; the next test starts without them.
    for context in browser.contexts:
        context.close()


def _new_context(browser: Browser, **options) -> BrowserContext:
    context = browser.new_context(viewport={"width": 1000, "height": 900}, **options)
    context.set_default_timeout(10_000)
    # A page whose first load computes the engine's run and curve takes seconds on a loaded machine; a
    # navigation abandoned early leaves that request holding the simulator, and the next test meets a 503.
    context.set_default_navigation_timeout(SIMULATION_WAIT_MS)
    return context


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = _new_context(browser)
    yield context.new_page()
    context.close()


@pytest.fixture
def page_without_js(browser: Browser) -> Iterator[Page]:
    context = _new_context(browser, java_script_enabled=False)
    yield context.new_page()
    context.close()


@pytest.fixture
def live_lessons(live_server, transactional_db) -> str:
    """The live server's address, with the bundled lessons imported."""
    from tests.support.bundled_lessons import load_bundled_lessons

    load_bundled_lessons()
    return live_server.url


# A student's phone, once with htmx and once without JavaScript: `page.mode` says which. A module
# that needs another phone (another width, touch) defines its own `phone`, which pytest prefers.
@pytest.fixture(params=["htmx", "no-javascript"])
def phone(request, browser: Browser) -> Iterator[Page]:
    context = browser.new_context(
        viewport={"width": 375, "height": 812}, java_script_enabled=request.param == "htmx"
    )
    context.set_default_timeout(30_000)
    context.set_default_navigation_timeout(SIMULATION_WAIT_MS)
    page = context.new_page()
    page.mode = request.param  # type: ignore[attr-defined]
    yield page
    context.close()


# Where screenshots go when asked for (FELAB_SHOTS=folder); none are taken otherwise, so a test run
# writes nothing outside its temporary folders.
SHOTS = os.environ.get("FELAB_SHOTS", "")


def screenshot(page: Page, name: str, part: str = "", full_page: bool = False) -> None:
    """The page, or with ``part`` that element alone, as FELAB_SHOTS/NAME.png when asked for."""
    if not SHOTS:
        return
    os.makedirs(SHOTS, exist_ok=True)
    path = os.path.join(SHOTS, f"{name}.png")
    if part:
        page.locator(part).screenshot(path=path)
    else:
        page.screenshot(path=path, full_page=full_page)
