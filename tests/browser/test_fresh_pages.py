"""Every browser test's page starts as a new visitor's would, though Chromium keeps contexts open
between tests (conftest.py's new_page): nothing one test's page kept reaches the next, and no
connection to the site outlives the test."""

import time
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Page

from tests.browser.conftest import OPEN_CHROMIUM, PHONE, new_page


def kept_something(page: Page, origin: str) -> None:
    page.goto(origin + "/healthz")
    page.context.add_cookies([{"name": "left_behind", "value": "someone-else", "url": origin}])
    page.evaluate(
        "() => { localStorage.setItem('left', 'local'); sessionStorage.setItem('left', 'session'); }"
    )
    page.context.grant_permissions(["clipboard-read"], origin=origin)


def what_it_finds(page: Page, origin: str) -> tuple[list[str], object, object, str]:
    page.goto(origin + "/healthz")
    return (
        [cookie["value"] for cookie in page.context.cookies()],
        page.evaluate("() => localStorage.getItem('left')"),
        page.evaluate("() => sessionStorage.getItem('left')"),
        page.evaluate("async () => (await navigator.permissions.query({name: 'clipboard-read'})).state"),
    )


def test_a_page_after_another_has_closed_finds_none_of_its_cookies_storage_or_permissions(
    browser: Browser, live_server
):
    first = new_page(browser, **PHONE)
    kept_something(first, live_server.url)
    assert what_it_finds(first, live_server.url) == (["someone-else"], "local", "session", "granted")
    first.close()

    second = new_page(browser, **PHONE)
    # The same context, handed on: what this test checks is that it arrives emptied. (A new tab
    # has a sessionStorage of its own whatever is emptied, so only the first page's is checked.)
    assert second.context is first.context
    cookies, stored, _session, permission = what_it_finds(second, live_server.url)
    assert (cookies, stored, permission) == ([], None, "prompt")


def test_what_a_popup_stored_is_emptied_too(browser: Browser, live_server):
    first = new_page(browser, **PHONE)  # left blank: only the popup visits the site
    with first.context.expect_page() as opened:
        first.evaluate("address => { window.open(address); }", live_server.url + "/healthz")
    popup = opened.value
    popup.wait_for_load_state()
    # Stored by the popup alone, on the address it opened with: no navigation of its own.
    popup.evaluate("() => { localStorage.setItem('left', 'local'); }")
    popup.close()
    first.close()
    second = new_page(browser, **PHONE)
    assert second.context is first.context
    assert what_it_finds(second, live_server.url)[1] is None


def test_two_pages_open_at_once_are_two_visitors(browser: Browser, live_server):
    first = new_page(browser, **PHONE)
    kept_something(first, live_server.url)
    second = new_page(browser, **PHONE)
    assert second.context is not first.context
    assert what_it_finds(second, live_server.url)[:2] == ([], None)
    # And the first still has its own.
    assert [cookie["value"] for cookie in first.context.cookies()] == ["someone-else"]


def test_a_context_a_test_closed_is_not_handed_out_again(browser: Browser, live_server):
    first = new_page(browser, **PHONE)
    first.context.close()
    second = new_page(browser, **PHONE)
    second.goto(live_server.url + "/healthz")
    assert second.context is not first.context


def connections_to(port: int) -> int:
    """TCP connections whose local end is ``port`` (the site's side of each), established or
    closed by the browser but still held by the server's thread (CLOSE_WAIT)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            next(rows)
            for row in rows:
                local, _remote, state = row.split()[1:4]
                if int(local.rsplit(":", 1)[1], 16) == port and state in ("01", "08"):
                    count += 1
    return count


def test_after_a_test_no_connection_to_the_site_stays_open(browser: Browser, live_server):
    port = urlsplit(live_server.url).port
    page = new_page(browser, **PHONE)
    page.goto(live_server.url + "/healthz")
    assert connections_to(port) > 0  # kept alive while the test runs
    OPEN_CHROMIUM.tidy(page.context)  # what the browser fixture does after every test
    assert page.is_closed()
    deadline = time.monotonic() + 10
    while connections_to(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert connections_to(port) == 0
