"""An instructor in Chromium looks through the admin and the dashboard: anonymous students
and students who keep their names private stay unnamed, and probing who they are fails."""

import re
from collections.abc import Iterator

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from accounts.instructors import VIEW_ONLY, grant_permissions
from lessons.models import Card
from quiz.admin import INSTRUCTORS_VIEW
from quiz.card_rating import rate_showing
from quiz.learners import Learner
from quiz.models import STUDIED_BEFORE_COUNTED, LearnerProfile, Rating, Showing
from tests.browser.conftest import DESKTOP, new_page
from tests.conftest import PASSWORD, SEED_CARD_URL

NOT_SHARED = "a student (name not shared)"


@pytest.fixture
def instructor_page(browser: Browser, live_lessons, instructor) -> Iterator[Page]:
    grant_permissions(
        apps, "quiz", INSTRUCTORS_VIEW, VIEW_ONLY
    )  # the flush of a transactional test removed what 0005 granted
    page = new_page(browser, **DESKTOP)
    page.goto(live_lessons + "/admin/login/?next=/admin/")
    page.get_by_label("Username").fill(instructor.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(
        page.get_by_role("link", name="Log out").or_(page.get_by_role("button", name="Log out"))
    ).to_be_visible()
    yield page


@pytest.fixture
def class_records(page: Page, live_lessons) -> dict[str, str]:
    """An anonymous student works in Chromium; Sam (private) and Alex (shares) have accounts."""
    page.goto(live_lessons + SEED_CARD_URL)
    page.get_by_label("Your answer").fill("the anonymous guess")
    page.get_by_role("button", name="Show answer").click()
    page.get_by_role("button", name="Got it").click()
    expect(page.locator("#rating-result")).to_contain_text("Saved: Got it")
    session_key = next(c["value"] for c in page.context.cookies() if c["name"] == "sessionid")

    card = Card.objects.get(lesson__slug="concurrency-sweep", step=1)
    sam = User.objects.create_user("sam", password=PASSWORD, first_name="Sam", last_name="Okafor")
    alex = User.objects.create_user("alex", password=PASSWORD, first_name="Alex", last_name="Moreau")
    LearnerProfile.objects.create(user=alex, share_name=True)
    for user, answer, rating in (
        (sam, "sam's private guess", Rating.HARD),
        (alex, "alex's guess", Rating.EASY),
    ):
        rate_showing(Showing.record(Learner(user=user), card, answer), rating)
    anonymous = Showing.objects.get(user__isnull=True)
    return {
        "session_key": session_key,
        "anonymous_id": anonymous.anonymous_id,
        "sam_id": str(sam.pk),
        "sam_showing": str(Showing.objects.get(user=sam).pk),
    }


def learner_cells(page: Page) -> list[str]:
    return page.locator("#result_list td.field-learner").all_inner_texts()


# CSRF tokens are 64 random letters and digits: one of them held "Sam" in a CI run.
CSRF_TOKEN = re.compile(r'(name="csrfmiddlewaretoken" value="|"csrfmiddlewaretoken": ")[A-Za-z0-9]+"')


def assert_nobody_is_exposed(page: Page, records: dict[str, str]) -> None:
    html = CSRF_TOKEN.sub(r'\1…"', page.content())
    for secret in ("Okafor", "Sam", records["anonymous_id"], records["session_key"]):
        assert secret not in html, secret


def test_instructor_sees_anonymous_and_private_students_unnamed_in_the_admin(
    instructor_page: Page, class_records, live_lessons
):
    page = instructor_page
    page.goto(live_lessons + "/admin/quiz/showing/")
    for answer, who in (
        ("the anonymous guess", "anonymous"),
        ("sam's private guess", NOT_SHARED),
        ("alex's guess", "Alex Moreau"),
    ):
        row = page.locator("#result_list tbody tr", has_text=answer)
        expect(row.locator("td.field-learner")).to_have_text(who)
    assert_nobody_is_exposed(page, class_records)

    for model in ("review", "cardstate"):
        page.goto(f"{live_lessons}/admin/quiz/{model}/")
        expect(page.locator("#result_list tbody tr")).to_have_count(3)
        assert sorted(learner_cells(page)) == sorted(["anonymous", NOT_SHARED, "Alex Moreau"])
        assert_nobody_is_exposed(page, class_records)

    page.goto(f"{live_lessons}/admin/quiz/showing/{class_records['sam_showing']}/change/")
    expect(page.locator(".field-learner .readonly")).to_have_text(NOT_SHARED)
    expect(page.locator(".field-answer .readonly")).to_have_text("sam's private guess")
    assert_nobody_is_exposed(page, class_records)

    guess = Showing.objects.get(answer="the anonymous guess")
    # The anonymous student studies on: /instructor/ counts them from a few minutes in.
    Showing.objects.create(
        card=guess.card, anonymous_id=guess.anonymous_id, shown_at=guess.shown_at + STUDIED_BEFORE_COUNTED
    )
    page.goto(live_lessons + "/instructor/")
    expect(page.locator(".answer-item", has_text="sam's private guess").locator(".who")).to_have_text(
        NOT_SHARED
    )
    expect(page.locator(".answer-item", has_text="the anonymous guess").locator(".who")).to_have_text(
        "anonymous"
    )
    expect(page.locator(".answer-item", has_text="alex's guess").locator(".who")).to_have_text("Alex Moreau")
    assert_nobody_is_exposed(page, class_records)


def test_probing_who_a_row_belongs_to_is_refused(instructor_page: Page, class_records, live_lessons):
    page = instructor_page
    probes = [
        f"/admin/quiz/review/?anonymous_id__startswith={class_records['anonymous_id'][0]}",
        f"/admin/quiz/showing/?anonymous_id={class_records['anonymous_id']}",
        f"/admin/quiz/layeropening/?showing__anonymous_id__startswith={class_records['anonymous_id'][0]}",
        f"/admin/quiz/showing/?user={class_records['sam_id']}",
        "/admin/quiz/review/?user__username=sam",
    ]
    for probe in probes:
        response = page.goto(live_lessons + probe)
        assert response is not None and response.status == 400, probe
        assert_nobody_is_exposed(page, class_records)
    # The old column is gone: whatever the guess, a filter on it lands on Django's
    # "?e=1" page for a lookup it cannot apply, so the answer tells nothing.
    for guess in (class_records["session_key"][0], "!"):
        page.goto(f"{live_lessons}/admin/quiz/review/?session_key__startswith={guess}")
        assert page.url.endswith("/admin/quiz/review/?e=1"), page.url
