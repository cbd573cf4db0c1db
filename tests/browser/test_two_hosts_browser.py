"""Two gunicorn hosts sharing one database and no Redis, as production may run them behind a
load balancer: a student's session is Django's cached_db, read from the database on each host.
In Chromium: a student signed in on both hosts and deactivated in the admin is signed out at
their next page on either; a log out on one host ends the session on the other; a password
changed on one browser signs the other browser out, whichever host it asks."""

import subprocess
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import DESKTOP, new_page
from tests.browser.test_long_pages_browser import log_in
from tests.support.site import PY, ROOT, Site, running_site, scratch_database

PASSWORD = "a-long-enough-passphrase-42"
NEW_PASSWORD = "another-long-enough-passphrase-43"


@pytest.fixture(scope="module")
def hosts() -> Iterator[tuple[Site, Site]]:
    # REDIS_URL empty: each host has only its own file cache.
    database = scratch_database("sqlite")
    with (
        running_site(database, workers=2, extra_env={"REDIS_URL": ""}) as one,
        running_site(database, workers=2, extra_env={"REDIS_URL": ""}, release=False) as two,
    ):
        yield one, two


@pytest.fixture
def two_browsers(browser: Browser) -> tuple[Page, Page]:
    return new_page(browser, **DESKTOP), new_page(browser, **DESKTOP)


def sign_up(page: Page, base: str, username: str) -> None:
    page.goto(base + "/accounts/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def signed_in_on_each_page(page: Page, base: str) -> None:
    for path in ("/", "/progress/", "/sim/"):
        page.goto(base + path)
        expect(page.get_by_role("button", name="Log out")).to_be_visible()


def signed_out(page: Page, base: str) -> None:
    for path in ("/", "/progress/"):
        page.goto(base + path)
        expect(page.get_by_role("navigation", name="Site").get_by_role("link", name="Log in")).to_be_visible()
        expect(page.get_by_role("button", name="Log out")).to_have_count(0)


def test_a_student_deactivated_in_the_admin_is_signed_out_on_either_host(hosts, browser):
    one, two = hosts
    student = new_page(browser, **DESKTOP)
    # The browser's cookie is sent to both hosts, as through a load balancer.
    sign_up(student, one.url, "jordan")
    signed_in_on_each_page(student, one.url)
    signed_in_on_each_page(student, two.url)
    subprocess.run(
        [PY, "manage.py", "createsuperuser", "--noinput", "--username", "ada", "--email", "ada@example.org"],
        cwd=ROOT,
        env={**one.env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    admin = new_page(browser, **DESKTOP)
    try:
        log_in(admin, one.url, "ada", PASSWORD)
        admin.goto(one.url + "/admin/auth/user/?q=jordan")
        admin.get_by_role("link", name="jordan", exact=True).click()
        admin.get_by_label("Active", exact=True).uncheck()
        admin.get_by_role("button", name="Save", exact=True).click()
        expect(admin.get_by_text("was changed successfully")).to_be_visible()
    finally:
        admin.close()

    signed_out(student, two.url)
    signed_out(student, one.url)


def test_a_log_out_on_one_host_ends_the_session_on_the_other(hosts, browser):
    one, two = hosts
    student = new_page(browser, **DESKTOP)
    sign_up(student, one.url, "robin")
    signed_in_on_each_page(student, two.url)
    cookie = next(c for c in student.context.cookies() if c["name"] == "sessionid")

    student.goto(one.url + "/")
    student.get_by_role("button", name="Log out").click()
    signed_out(student, one.url)
    # The old session cookie, replayed at the other host, is signed out there too.
    student.context.add_cookies([cookie])
    signed_out(student, two.url)


def test_a_password_changed_on_one_browser_signs_the_other_out_on_either_host(hosts, two_browsers):
    one, two = hosts
    here, there = two_browsers
    sign_up(here, one.url, "casey")
    log_in(there, two.url, "casey", PASSWORD)
    signed_in_on_each_page(there, one.url)

    here.goto(one.url + "/accounts/password/change/")
    here.get_by_label("Old password").fill(PASSWORD)
    here.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    here.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    here.get_by_role("button", name="Change password").click()
    expect(here.get_by_role("heading", name="Password changed")).to_be_visible()

    signed_in_on_each_page(here, two.url)
    signed_out(there, two.url)
    signed_out(there, one.url)
