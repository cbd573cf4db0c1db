"""Sessions as production keeps them without Redis (accounts/sessions.py: the session and its
user read in one query, then kept by each worker while the accounts token holds), in Chromium
against gunicorn with production settings: a student signed in on two browsers changes their
password on one, stays signed in there, and the other is signed out at its next page; logging
out on one ends that browser's session only; an account an instructor deactivates in the admin
is signed out at its next page, whichever worker kept it."""

import subprocess
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import _new_context
from tests.browser.test_long_pages_browser import log_in
from tests.support.site import PY, ROOT, Site, running_site, scratch_database

PASSWORD = "a-long-enough-passphrase-42"
NEW_PASSWORD = "another-long-enough-passphrase-43"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    # REDIS_URL empty: sessions live in the database alone, as on one host without Redis.
    with running_site(scratch_database("sqlite"), workers=2, extra_env={"REDIS_URL": ""}) as site:
        yield site


@pytest.fixture
def two_browsers(browser: Browser) -> Iterator[tuple[Page, Page]]:
    first, second = _new_context(browser), _new_context(browser)
    yield first.new_page(), second.new_page()
    first.close()
    second.close()


def sign_up(page: Page, base: str, username: str) -> None:
    page.goto(base + "/accounts/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def signed_in_on_each_page(page: Page, base: str) -> None:
    # Several pages, so each of gunicorn's workers has likely read this session once, and again
    # (the session and its user together), which it then keeps.
    for path in ("/", "/progress/", "/review/", "/glossary/", "/sim/", "/", "/progress/", "/sim/"):
        page.goto(base + path)
        expect(page.get_by_role("button", name="Log out")).to_be_visible()


def signed_in_on_both(site: Site, two_browsers: tuple[Page, Page], username: str) -> tuple[Page, Page]:
    """The student signs up on the first browser and logs in on the second."""
    here, there = two_browsers
    sign_up(here, site.url, username)
    log_in(there, site.url, username, PASSWORD)
    signed_in_on_each_page(here, site.url)
    signed_in_on_each_page(there, site.url)
    return here, there


def test_a_password_changed_on_one_browser_signs_the_other_out(site, two_browsers):
    here, there = signed_in_on_both(site, two_browsers, "casey")

    here.goto(site.url + "/accounts/password/change/")
    here.get_by_label("Old password").fill(PASSWORD)
    here.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    here.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    here.get_by_role("button", name="Change password").click()
    expect(here.get_by_role("heading", name="Password changed")).to_be_visible()

    signed_in_on_each_page(here, site.url)
    for path in ("/", "/progress/"):
        there.goto(site.url + path)
        expect(
            there.get_by_role("navigation", name="Site").get_by_role("link", name="Log in")
        ).to_be_visible()
        expect(there.get_by_role("button", name="Log out")).to_have_count(0)


def test_logging_out_on_one_browser_leaves_the_other_signed_in(site, two_browsers):
    here, there = signed_in_on_both(site, two_browsers, "robin")

    here.get_by_role("button", name="Log out").click()
    expect(here.get_by_role("navigation", name="Site").get_by_role("link", name="Log in")).to_be_visible()

    for path in ("/", "/progress/", "/sim/"):
        here.goto(site.url + path)
        expect(here.get_by_role("button", name="Log out")).to_have_count(0)
    signed_in_on_each_page(there, site.url)


def test_an_account_deactivated_in_the_admin_is_signed_out_at_its_next_page(site, two_browsers, browser):
    student, _ = two_browsers
    sign_up(student, site.url, "jordan")
    signed_in_on_each_page(student, site.url)
    subprocess.run(
        [PY, "manage.py", "createsuperuser", "--noinput", "--username", "ada", "--email", "ada@example.org"],
        cwd=ROOT,
        env={**site.env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    context = _new_context(browser)
    try:
        admin = context.new_page()
        log_in(admin, site.url, "ada", PASSWORD)
        admin.goto(site.url + "/admin/auth/user/?q=jordan")
        admin.get_by_role("link", name="jordan", exact=True).click()
        # The instructor's log in drew a new token: the student's pages now, so that the workers
        # keep the account as it is before the instructor saves it.
        signed_in_on_each_page(student, site.url)
        admin.get_by_label("Active", exact=True).uncheck()
        admin.get_by_role("button", name="Save", exact=True).click()
        expect(admin.get_by_text("was changed successfully")).to_be_visible()
    finally:
        context.close()

    for path in ("/", "/progress/", "/sim/", "/glossary/"):
        student.goto(site.url + path)
        expect(
            student.get_by_role("navigation", name="Site").get_by_role("link", name="Log in")
        ).to_be_visible()
        expect(student.get_by_role("button", name="Log out")).to_have_count(0)
