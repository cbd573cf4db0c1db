"""A student in Chromium changes a password, resets a forgotten one from the email, deletes
their account, and shares their name with instructors or not."""

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from lessons.models import Card
from quiz.card_rating import rate_showing
from quiz.learners import Learner
from quiz.models import CardState, Rating, Review, Showing
from tests.browser.conftest import new_page
from tests.browser.test_accessibility import serious_violations
from tests.browser.test_long_pages_browser import log_in
from tests.conftest import PASSWORD

NEW_PASSWORD = "a-new-and-longer-passphrase-42"


@pytest.fixture
def sam(live_lessons) -> User:
    return User.objects.create_user("sam", "sam@example.org", PASSWORD)


def log_out(page: Page) -> None:
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name="Log in")).to_be_visible()


def refused(page: Page, base: str, password: str) -> None:
    page.goto(base + "/accounts/login/")
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".form-errors")).to_contain_text("correct username and password")


def test_a_student_changes_their_password_and_logs_in_with_the_new_one(page: Page, live_lessons, sam):
    log_in(page, live_lessons)
    page.goto(live_lessons + "/progress/")
    expect(page.locator(".lede")).to_contain_text("Signed in as sam.")
    expect(page.get_by_role("link", name="Change your email address (sam@example.org)")).to_be_visible()
    page.get_by_role("link", name="Change your password").click()
    page.get_by_label("Old password").fill(PASSWORD)
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    assert serious_violations(page) == []
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("heading", name="Password changed")).to_be_visible()

    log_out(page)
    refused(page, live_lessons, PASSWORD)
    log_in(page, live_lessons, password=NEW_PASSWORD)


def test_a_student_resets_a_forgotten_password_from_the_email(page: Page, live_lessons, sam, mailoutbox):
    page.goto(live_lessons + "/accounts/login/")
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("Email").fill("sam@example.org")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()

    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["sam@example.org"]
    link = re.search(r"http://\S+/accounts/password/reset/\S+/\S+/", mailoutbox[0].body)
    assert link, mailoutbox[0].body
    page.goto(link.group(0))
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Set the new password").click()
    expect(page.get_by_role("heading", name="Password set")).to_be_visible()

    page.get_by_role("main").get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def test_a_student_deletes_their_account(page: Page, live_lessons, sam):
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=1)
    rate_showing(Showing.record(Learner(user=sam), card, "my answer"), Rating.GOT_IT)
    log_in(page, live_lessons)
    page.goto(live_lessons + "/progress/")
    page.get_by_role("link", name="Delete your account and everything recorded about it").click()
    expect(page.get_by_role("heading", name="Delete your account")).to_be_visible()
    assert serious_violations(page) == []

    page.get_by_label("Your password").fill("not-it")
    page.get_by_role("button", name="Delete my account and all my records").click()
    expect(page.locator(".field-error")).to_contain_text("nothing was deleted")
    assert User.objects.filter(username="sam").exists()

    page.get_by_label("Your password").fill(PASSWORD)
    page.get_by_role("button", name="Delete my account and all my records").click()
    expect(page.get_by_role("status")).to_contain_text("The account sam and everything recorded about it")
    expect(page.get_by_role("link", name="Log in")).to_be_visible()
    assert not User.objects.filter(username="sam").exists()
    assert not Showing.objects.exists() and not Review.objects.exists() and not CardState.objects.exists()
    refused(page, live_lessons, PASSWORD)


def test_a_student_on_a_phone_shares_their_name_with_instructors_and_takes_it_back(
    browser, live_lessons, sam
):
    page = new_page(
        browser, timeout_ms=30_000, viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True
    )
    log_in(page, live_lessons)
    page.goto(live_lessons + "/progress/")
    box = page.get_by_label("Show my name to instructors next to my typed answers")
    expect(box).not_to_be_checked()
    expect(box).to_have_accessible_description(re.compile("instructors"))  # the help text, by its id
    box.check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".messages")).to_contain_text("your name is shown to instructors")
    expect(box).to_be_checked()
    box.uncheck()
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".messages")).to_contain_text("hidden from instructors")
    expect(box).not_to_be_checked()
    page.close()
