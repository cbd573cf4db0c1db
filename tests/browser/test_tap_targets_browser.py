"""On a 375 px phone every nav and breadcrumb link, and the sign-up checkbox's target, is at
least 44 px each way: a finger's width."""

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import new_page

pytestmark = pytest.mark.browser

FINGER = 44

SMALL_TARGETS = """(selector) => [...document.querySelectorAll(selector)]
  .map(e => ({text: e.textContent.trim(), box: e.getBoundingClientRect()}))
  .filter(t => t.box.height < 44 - 0.5 || t.box.width < 44 - 0.5)
  .map(t => `${t.text}: ${Math.round(t.box.width)}×${Math.round(t.box.height)} px`)"""


@pytest.fixture
def phone(browser: Browser) -> Page:
    return new_page(
        browser, timeout_ms=30_000, viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True
    )


def test_nav_and_breadcrumb_links_are_44_px_targets_on_a_phone(phone: Page, live_lessons):
    phone.goto(f"{live_lessons}/practice/l05-kv-per-conversation/?seed=1")
    assert phone.locator(".site-nav a").count() >= 4 and phone.locator(".breadcrumbs a").count() == 3
    assert phone.evaluate(SMALL_TARGETS, ".site-nav a, .site-nav button, .breadcrumbs a") == []
    assert phone.evaluate("document.scrollingElement.scrollWidth") <= 375


def test_the_sign_up_checkbox_is_a_44_px_target_on_a_phone(phone: Page, live_server):
    phone.goto(f"{live_server.url}/accounts/signup/")
    checkbox = phone.locator(".check-field input[type=checkbox]")
    target = phone.locator(".check-field label")
    target.scroll_into_view_if_needed()
    box, inside = target.bounding_box(), checkbox.bounding_box()
    assert box["height"] >= FINGER and box["width"] >= FINGER
    # The box itself is inside the target, so a tap on or beside it toggles it.
    assert box["x"] <= inside["x"] and inside["x"] + inside["width"] <= box["x"] + box["width"]
    assert box["y"] <= inside["y"] and inside["y"] + inside["height"] <= box["y"] + box["height"]
    checked = checkbox.is_checked()
    phone.touchscreen.tap(
        box["x"] + box["width"] - 5, box["y"] + box["height"] - 3
    )  # the target's far corner
    assert checkbox.is_checked() is not checked
