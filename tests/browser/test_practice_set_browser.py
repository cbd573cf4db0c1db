"""A mixed practice set in Chromium on a 375 px phone, with htmx and without JavaScript: a new
student is told to start a lesson, starts two, works through a whole set of 10 (right answers, a
named mistake then Show me, a hint, a rating changed) with "Next in set" and reads its summary per
lesson. Screenshots of each step go to $FELAB_SHOTS (default: the test's temporary folder)."""

import os
import random
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from lessons.models import Card
from quiz.models import PracticeAttempt, PracticeSet
from quiz.practice_views import hint_limit


@pytest.fixture(autouse=True)
def _fixed_draw(monkeypatch):
    """Each new set drawn as seed SET_SEED draws it: the same ten problems on every run."""
    from quiz import practice_sets

    monkeypatch.setattr(practice_sets, "new_rng", lambda: random.Random(int(os.environ.get("SET_SEED", "7"))))


pytestmark = pytest.mark.browser


@pytest.fixture
def shots(tmp_path) -> Path:
    folder = Path(os.environ.get("FELAB_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


SMALL_TARGETS = """(selector) => [...document.querySelectorAll(selector)]
  .map(e => ({text: e.textContent.trim(), box: e.getBoundingClientRect()}))
  .filter(t => t.box.height < 44 - 0.5 || t.box.width < 44 - 0.5)
  .map(t => `${t.text}: ${Math.round(t.box.width)}×${Math.round(t.box.height)} px`)"""
# The set's own links and buttons: each a finger's width (44 px) each way.
SET_TARGETS = (
    "#practice-set-link, #start-set, #resume-set, #another, .set-item > a, .practice-set-start button"
)


def no_sideways_scroll(page: Page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), page.url


def type_answer(page: Page, typed: str) -> None:
    box = page.locator("#practice-answer")
    box.fill(typed)
    box.press("Enter")


def test_a_student_works_through_a_set_of_ten_and_reads_its_summary(phone: Page, live_lessons, shots: Path):
    mode = phone.mode  # type: ignore[attr-defined]

    def shot(step: str) -> None:
        no_sideways_scroll(phone)
        assert phone.evaluate(SMALL_TARGETS, SET_TARGETS) == [], step
        phone.screenshot(path=str(shots / f"set-{mode}-{step}.png"), full_page=True)

    phone.goto(live_lessons + "/practice/")
    phone.locator("#practice-set-link").click()
    expect(phone.get_by_role("heading", name="Start a lesson first")).to_be_visible()
    shot("0-nothing-started")

    for lesson in ("kv-cache", "batch-api"):
        card = Card.objects.filter(lesson__slug=lesson, published=True).order_by("step").first()
        phone.goto(live_lessons + card.get_absolute_url())
        phone.get_by_role("button", name="Show answer").click()
        expect(phone.get_by_role("heading", name="How did you do?")).to_be_visible()

    phone.goto(live_lessons + "/practice/set/")
    shot("1-start")
    phone.get_by_role("button", name="Start a set of 10").click()
    expect(phone.locator("#set-place")).to_have_text("Practice set 1 · problem 1 of 10")
    practice_set = PracticeSet.objects.get()
    items = list(practice_set.items.select_related("template__lesson").order_by("position"))
    assert len(items) == 10
    assert {item.template.lesson.slug for item in items} <= {"kv-cache", "batch-api"}

    mistaken = hinted = None
    for item in items:
        expect(phone.locator("#set-place")).to_have_text(f"Practice set 1 · problem {item.position} of 10")
        problem = item.template.problem(item.seed)
        if item.position == 1:
            shot("2-problem")
        if mistaken is None and problem.mistakes:
            named = problem.mistakes[0]
            type_answer(phone, f"{named.value!r} {problem.unit}")
            expect(phone.locator("#practice-mistake")).to_contain_text(named.says[:30])
            shot("3-named-mistake")
            phone.get_by_role("button", name="Show me").click()
            expect(phone.get_by_role("heading", name="Worked solution")).to_be_visible()
            mistaken = item
        elif hinted is None and item.position >= 4 and hint_limit(problem) > 0:
            hinted = item
            phone.get_by_role("button", name="Hint: step 1").click()
            expect(phone.locator("#practice-hints li")).to_have_count(1)
            type_answer(phone, problem.answer_text)
            expect(phone.locator("#verdict-title")).to_contain_text("Right")
        else:
            type_answer(phone, problem.answer_text)
            expect(phone.locator("#verdict-title")).to_contain_text("Right")
        if item.position == 2 and item != mistaken:
            # Changing the rating: htmx swaps the box; without JavaScript a page says what was
            # stored and goes on in the set from there.
            phone.locator("#practice-rating").get_by_role("button", name="Hard").click()
            expect(phone.locator("#practice-rating")).to_contain_text("Stored: Hard")
            shot("4-rated")
        if item.position == 5:
            shot("5-right")
        if item.position == 6:
            # Leaving the set and coming back: it goes on where it stopped.
            phone.goto(live_lessons + "/practice/set/")
            expect(phone.get_by_role("heading", name="Practice set 1: 6 of 10 finished")).to_be_visible()
            shot("5-resume")
            phone.locator("#resume-set").click()
            expect(phone.locator("#set-place")).to_have_text("Practice set 1 · problem 7 of 10")
            continue
        phone.locator("#another").click()

    expect(phone.locator("#set-result")).to_contain_text("Finished: 8 of 10 right first time")
    assert mistaken is not None and hinted is not None
    lesson = phone.locator(f"#set-lesson-{mistaken.template.lesson_id}")
    expect(lesson).to_contain_text("Named mistakes made:")
    expect(lesson).to_contain_text("right first time")
    expect(lesson).to_contain_text("comes back in")
    shot("6-summary")
    # Ten draws, each one attempt, none counted twice.
    assert PracticeAttempt.objects.count() == 10
    assert {(a.template_id, a.seed) for a in PracticeAttempt.objects.all()} == {
        (i.template_id, i.seed) for i in items
    }

    phone.goto(live_lessons + "/practice/set/")
    expect(phone.get_by_text("is finished: 8 of 10 right first time")).to_be_visible()
    if mode == "htmx":  # axe-core on the summary and a problem, then both on a desktop, once
        from tests.browser.test_accessibility import serious_violations

        phone.goto(live_lessons + "/practice/set/1/")
        assert serious_violations(phone) == []
        phone.goto(live_lessons + "/practice/set/1/3/")
        assert serious_violations(phone) == []
        phone.set_viewport_size({"width": 1280, "height": 900})
        phone.goto(live_lessons + "/practice/set/1/")
        phone.screenshot(path=str(shots / "set-desktop-summary.png"), full_page=True)
        phone.goto(live_lessons + "/practice/set/1/3/")
        phone.screenshot(path=str(shots / "set-desktop-problem.png"), full_page=True)
