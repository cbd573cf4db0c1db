"""Mistakes nobody named, in Chromium on a 375 px phone, with and without JavaScript: the class
answers a TTFT problem at twice the right value; an instructor reads "…% of wrong first tries are
2× the right value, unnamed" on /instructor/, taps Name it, writes the sentence in the admin and
saves; the next student who makes that mistake reads the sentence. Screenshots of each step go to
FELAB_SHOTS when it is set (tests/browser/conftest.py)."""

import time

import pytest
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import Browser, Page, expect

from lessons.models import PracticeTemplate
from quiz.models import ClassMistake, PracticeAttempt
from tests.browser.conftest import PHONE, new_page, screenshot
from tests.conftest import PASSWORD

pytestmark = pytest.mark.browser

SLUG = "l01-ttft-long-prompt"
SAYS = "Your answer is twice the time: count the prompt once, then add the overhead."
TIMEOUT_MS = 30_000


def shot(page: Page, step: str, part: str = "") -> None:
    """The whole page, or with ``part`` that element alone (a long page's section, readable)."""
    screenshot(page, f"{page.mode}-{step}", part, full_page=True)  # type: ignore[attr-defined]


def no_sideways_scroll(page: Page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_an_instructor_names_the_classs_unnamed_mistake_and_the_next_student_reads_it(
    phone: Page, browser: Browser, live_lessons, instructor: User
):
    template = PracticeTemplate.objects.get(slug=SLUG)
    # The class: one student's five wrong first tries at twice the right value, one otherwise.
    student = User.objects.create_user("sam", password=PASSWORD)
    client = Client()
    client.force_login(student)
    for seed, factor in ((1, 2), (2, 2), (3, 2), (4, 2), (5, 2), (40, 3.7)):
        value = template.problem(seed).answer * factor
        client.post(
            template.get_absolute_url(), {"seed": seed, "answer": f"{value:.6g} ms", "shown_at": time.time()}
        )
    assert PracticeAttempt.objects.count() == 6

    # The instructor reads the group on /instructor/, on a phone.
    page = phone
    page.goto(f"{live_lessons}/admin/login/?next=/instructor/")
    page.get_by_label("Username").fill(instructor.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    group = page.locator('[data-group="times-2"]')
    expect(group).to_contain_text("83% of wrong first tries are 2× the right value, unnamed (5)")
    group.scroll_into_view_if_needed()
    no_sideways_scroll(page)
    name_it = group.get_by_role("link", name="Name it")
    box = name_it.bounding_box()
    assert box is not None and box["height"] >= 44 and box["width"] >= 44
    shot(page, "1-instructor-unnamed-group", "#unnamed-mistakes")
    page.set_viewport_size({"width": 1200, "height": 900})
    shot(page, "1-instructor-unnamed-group-desktop", "#unnamed-mistakes")
    page.set_viewport_size({"width": 375, "height": 812})

    # Name it: the admin's add form opens with the template and the formula filled in.
    name_it.click()
    expect(page.get_by_label("Formula")).to_have_value("answer * 2")
    expect(page.get_by_label("Slug")).to_have_value("times-2")
    page.get_by_label("Says").fill(SAYS)
    shot(page, "2-admin-add-form")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    assert ClassMistake.objects.get().formula == "answer * 2"
    shot(page, "3-admin-saved")

    # The next student (a new visitor) makes that mistake and reads the sentence.
    student_page = new_page(
        browser,
        timeout_ms=TIMEOUT_MS,
        **PHONE,
        java_script_enabled=page.mode == "htmx",  # type: ignore[attr-defined]
    )
    student_page.mode = page.mode  # type: ignore[attr-defined]
    student_page.goto(f"{live_lessons}{template.get_absolute_url()}?seed=7")
    box = student_page.locator("#practice-answer")
    box.fill(f"{template.problem(7).answer * 2:.6g} ms")
    box.press("Enter")
    expect(student_page.get_by_text(SAYS)).to_be_visible()
    no_sideways_scroll(student_page)
    shot(student_page, "4-next-student-reads-it")
    assert PracticeAttempt.objects.filter(seed=7).get().first_mistake == "times-2"
    student_page.close()

    # And the group is named now: /instructor/ no longer lists it as unnamed.
    page.goto(f"{live_lessons}/instructor/")
    expect(page.locator("#unnamed-mistakes")).not_to_contain_text("2× the right value, unnamed")
    shot(page, "5-instructor-after", "#unnamed-mistakes")
