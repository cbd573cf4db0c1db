"""Playwright driving Debian's Chromium against pytest-django's live server."""

import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Frame,
    Page,
    Playwright,
    expect,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError

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
    # chrome.benchmarking.closeConnections(): a kept context drops its sockets after each test
    # (_KeptContext.released says why).
    "--enable-net-benchmarking",
]

# What a kept context may be made with: how the visitor's browser looks, nothing it holds.
# (storage_state, permissions or extra headers would be emptied or outlive the test.)
KEEPABLE_OPTIONS = {"viewport", "is_mobile", "has_touch", "java_script_enabled", "timezone_id", "locale"}
# Contexts kept per test process, the least recently used closed beyond it: each holds a
# renderer for its blank page, and a module's tests use one to three kinds of page.
KEPT_CONTEXTS = 6


class _KeptContext:
    """A browser context kept open between tests, with a blank page of its own that stays open.

    Chromium spends about half a second of CPU on a new context's first page (a renderer process
    started for the blank page, then another for the site); a page opened in a context that
    already has one open costs half that. A test gets a new page in a kept context that no other
    open page uses, with its cookies, permissions and the storage of every origin its pages
    visited emptied first: what a new context would hold, but for the HTTP cache, which keeps
    the static files (a returning visitor's; the app's pages and JSON carry no caching headers,
    so no response of an earlier test's database is reused). Routes, headers and init scripts a
    test needs go on its page, never on the context, so none outlives the test (a test that
    needs them on a context makes its own with browser.new_context())."""

    def __init__(self, context: BrowserContext) -> None:
        self.context = context
        self.blank = context.new_page()
        self.origins: set[str] = set()
        self.closed = False
        self.used_by_this_test = False
        context.on("close", self._closed)
        context.on("page", self._opened)

    def _opened(self, page: Page) -> None:
        # A popup's page event comes once its first navigation has committed: its address now.
        self._visited(page.main_frame)
        page.on("framenavigated", self._visited)

    def _closed(self, _context: BrowserContext) -> None:
        self.closed = True

    def usable(self) -> bool:
        return not self.closed and not self.blank.is_closed()

    def in_use(self) -> bool:
        return any(page is not self.blank for page in self.context.pages)

    def _visited(self, frame: Frame) -> None:
        address = urlsplit(frame.url)
        if frame.parent_frame is None and address.scheme in ("http", "https"):
            self.origins.add(f"{address.scheme}://{address.netloc}")

    def emptied(self) -> None:
        self.context.clear_cookies()
        self.context.clear_permissions()
        if self.origins:
            session = self.context.new_cdp_session(self.blank)
            for origin in sorted(self.origins):
                session.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
            session.detach()
            self.origins.clear()

    def new_page(self) -> Page:
        self.used_by_this_test = True
        return self.context.new_page()

    def released(self) -> None:
        """Closes the test's pages and the context's sockets. Django's test server serves each
        kept-alive connection on a thread of its own, which holds its database connection until
        the socket closes: sockets left open by every kept context would hold tens of
        PostgreSQL connections between tests, where a closed context held none."""
        for page in self.context.pages:
            if page is not self.blank:
                page.close()
        if self.used_by_this_test:
            try:
                self.blank.evaluate("() => chrome.benchmarking.closeConnections()")
            except PlaywrightError:
                self.context.close()  # its sockets go with it; the next test gets a new context
            self.used_by_this_test = False


class _OpenChromium:
    """One Chromium per test process, kept open while browser tests follow one another and closed
    before any other test runs: Playwright's sync API keeps an event loop marked running in this
    thread while it is open, and tests elsewhere (the practice server's, the load test's) call
    asyncio.run(), which refuses to start inside a running loop. Launching costs about a second of
    CPU between Playwright's driver and Chromium, once per run of browser tests, not per module.
    tests/conftest.py's pytest_runtest_setup closes it. Its contexts are kept too, at most
    KEPT_CONTEXTS of them, the least recently used closed first (_KeptContext says how each test
    still starts with nothing of another's)."""

    def __init__(self) -> None:
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._kept: list[tuple[str, _KeptContext]] = []  # the least recently used first

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

    def new_page(self, **options) -> Page:
        """A page with no cookies or storage from any earlier page, in a context made with
        ``options`` (browser.new_context's) that no page open now uses."""
        unkeepable = set(options) - KEEPABLE_OPTIONS
        assert not unkeepable, f"a context with {sorted(unkeepable)} is a test's own: browser.new_context()"
        browser = self.get()
        key = json.dumps(options, sort_keys=True)
        # One whose blank page is gone is no longer kept; `tidy` closes it after the test using it.
        self._kept = [entry for entry in self._kept if entry[1].usable()]
        free = next(
            (entry for entry in reversed(self._kept) if entry[0] == key and not entry[1].in_use()), None
        )
        if free is None:
            idle = [entry for entry in self._kept if not entry[1].in_use()]
            for entry in idle[: max(0, len(self._kept) + 1 - KEPT_CONTEXTS)]:
                self._kept.remove(entry)
                entry[1].context.close()
            free = (key, _KeptContext(browser.new_context(**options)))
        else:
            self._kept.remove(free)
            free[1].emptied()
        self._kept.append(free)
        return free[1].new_page()

    def tidy(self, context: BrowserContext) -> None:
        """After a test: a kept context released, any other context closed."""
        kept = next((kept for _key, kept in self._kept if kept.context is context), None)
        if kept is not None and kept.usable():
            kept.released()
        else:
            context.close()

    def close(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        self._kept = []
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
    # The pages and contexts a test leaves open (the page fixtures' among them) are closed here.
    for context in browser.contexts:
        OPEN_CHROMIUM.tidy(context)


def new_page(browser: Browser, timeout_ms: int = 10_000, **options) -> Page:
    """A page for one test, as a new context's first page would be (``options`` are
    browser.new_context's); the `browser` fixture closes it after the test if the test did not."""
    assert browser is OPEN_CHROMIUM.get(), "new_page serves the `browser` fixture's Chromium"
    page = OPEN_CHROMIUM.new_page(**options)
    page.set_default_timeout(timeout_ms)
    # A page whose first load computes the engine's run and curve takes seconds on a loaded machine; a
    # navigation abandoned early leaves that request holding the simulator, and the next test meets a 503.
    page.set_default_navigation_timeout(SIMULATION_WAIT_MS)
    return page


DESKTOP = {"viewport": {"width": 1000, "height": 900}}
PHONE = {"viewport": {"width": 375, "height": 812}}  # a student's phone, as every phone test sees it


@pytest.fixture
def page(browser: Browser) -> Page:
    return new_page(browser, **DESKTOP)


@pytest.fixture
def page_without_js(browser: Browser) -> Page:
    return new_page(browser, **DESKTOP, java_script_enabled=False)


@pytest.fixture
def live_lessons(live_server, transactional_db) -> str:
    """The live server's address, with the bundled lessons imported."""
    from tests.support.bundled_lessons import load_bundled_lessons

    load_bundled_lessons()
    return live_server.url


# A student's phone, once with htmx and once without JavaScript: `page.mode` says which. A module
# that needs another phone (another width, touch) defines its own `phone`, which pytest prefers.
@pytest.fixture(params=["htmx", "no-javascript"])
def phone(request, browser: Browser) -> Page:
    page = new_page(
        browser,
        timeout_ms=30_000,
        **PHONE,
        java_script_enabled=request.param == "htmx",
    )
    page.mode = request.param  # type: ignore[attr-defined]
    return page


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
