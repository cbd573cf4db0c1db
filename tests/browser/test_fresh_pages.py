"""Every browser test's page starts as a new visitor's would, though Chromium keeps contexts open
between tests (conftest.py's new_page): nothing one test's page kept reaches the next."""

from playwright.sync_api import Browser, Page

from tests.browser.conftest import new_page

PHONE = {"viewport": {"width": 375, "height": 812}}


def kept_something(page: Page, origin: str) -> None:
    page.goto(origin + "/healthz")
    page.context.add_cookies([{"name": "left_behind", "value": "someone-else", "url": origin}])
    page.evaluate("() => { localStorage.setItem('htmx-history-cache', '[1]'); }")
    page.context.grant_permissions(["clipboard-read"], origin=origin)


def what_it_finds(page: Page, origin: str) -> tuple[list, object, str]:
    page.goto(origin + "/healthz")
    return (
        page.context.cookies(),
        page.evaluate("() => localStorage.getItem('htmx-history-cache')"),
        page.evaluate("async () => (await navigator.permissions.query({name: 'clipboard-read'})).state"),
    )


def test_a_page_after_another_has_closed_finds_none_of_its_cookies_storage_or_permissions(
    browser: Browser, live_server
):
    first = new_page(browser, **PHONE)
    kept_something(first, live_server.url)
    cookies, stored, permission = what_it_finds(first, live_server.url)
    assert ([cookie["value"] for cookie in cookies], stored, permission) == (
        ["someone-else"],
        "[1]",
        "granted",
    )
    first.close()

    second = new_page(browser, **PHONE)
    # The same context, handed on: what this test checks is that it arrives emptied.
    assert second.context is first.context
    cookies, stored, permission = what_it_finds(second, live_server.url)
    assert cookies == []
    assert stored is None
    assert permission == "prompt"


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
