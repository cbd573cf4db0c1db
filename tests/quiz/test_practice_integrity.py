"""A practice problem's score, speed and schedule come from the server's own records: hints it
counted, the time it drew the page, what was due, the tries it recorded once."""

import re
import time
from datetime import timedelta

import pytest
from django.utils.html import escape

from lessons.models import PracticeTemplate
from quiz.models import PracticeAttempt, PracticeState, Rating

from .practice_forms import hidden_fields, shown_at

pytestmark = pytest.mark.django_db

SLUG = "l05-kv-per-conversation"
URL = f"/practice/{SLUG}/"


@pytest.fixture
def template(lessons) -> PracticeTemplate:
    return PracticeTemplate.objects.get(slug=SLUG)


def post(client, data: dict) -> str:
    response = client.post(URL, data)
    assert response.status_code == 200, response.content[:400]
    return response.content.decode()


def right(template: PracticeTemplate, seed: int) -> str:
    return f"{template.problem(seed).answer} GB"


def test_a_hint_before_the_first_answer_counts_whatever_the_form_says(client, template):
    steps = template.problem(2).steps
    page = post(client, {"seed": 2, "action": "hint", "hints": 99})
    assert escape(steps[0]) in page and escape(steps[1]) not in page and escape(steps[-1]) not in page
    page = post(client, {"seed": 2, "answer": right(template, 2), "hints": 0})
    assert "Right" in page and "Proposed from your error" not in page
    attempt = PracticeAttempt.objects.get()
    assert (attempt.first_hints, attempt.hints_used) == (1, 1)
    assert attempt.rating == attempt.proposed_rating == Rating.HARD


def test_an_accounts_hints_before_its_first_answer_hold_on_its_other_sessions(
    client, template, django_user_model
):
    """Signing out and in again, or answering from another device, starts a new session: the
    hints taken before the first answer still count."""
    user = django_user_model.objects.create_user("hinter", password="a-long-enough-password-1")
    client.force_login(user)
    post(client, {"seed": 4, "action": "hint", "hints": 0})
    post(client, {"seed": 4, "action": "hint", "hints": 1})
    client.logout()
    other_device = type(client)()
    other_device.force_login(user)
    response = other_device.post(URL, {"seed": 4, "answer": right(template, 4), "hints": 0})
    assert response.status_code == 200
    attempt = PracticeAttempt.objects.get(user=user)
    assert (attempt.first_hints, attempt.hints_used) == (2, 2)
    assert attempt.rating == Rating.HARD


def test_hints_stop_one_step_short_of_the_answer(client, template):
    steps = template.problem(2).steps
    page = post(client, {"seed": 2, "action": "hint", "hints": 0})
    for _ in range(len(steps) + 2):
        page = post(client, {"seed": 2, "action": "hint", **hidden_fields(page)})
    shown = page.split('<ol class="practice-steps">')[1].split("</ol>")[0]
    assert shown.count("<li>") == len(steps) - 1
    assert escape(steps[-1]) not in page and "Hint: step" not in page and "Show me" in page


def test_hints_stop_before_the_step_that_prints_the_answer_even_when_a_remark_follows_it(client, lessons):
    template = PracticeTemplate.objects.get(slug="l00-decode-ceiling")
    problem = template.problem(0)
    assert problem.answer_text in problem.steps[1] and len(problem.steps) == 3
    url = template.get_absolute_url()
    page = client.post(url, {"seed": 0, "action": "hint", "hints": 0}).content.decode()
    page = client.post(url, {"seed": 0, "action": "hint", **hidden_fields(page)}).content.decode()
    assert escape(problem.steps[0]) in page and problem.answer_text not in page
    assert "Hint: step" not in page


def test_a_double_pressed_hint_reveals_one_step(client, template):
    page = post(client, {"seed": 2, "action": "hint", "hints": 0})
    again = post(client, {"seed": 2, "action": "hint", "hints": 0})
    assert hidden_fields(page)["hints"] == hidden_fields(again)["hints"] == "1"


def test_a_forged_or_missing_shown_time_never_proposes_easy(client, template):
    post(client, {"seed": 1, "answer": right(template, 1), "shown_at": shown_at(client, URL, 1)})
    other_draws_time = shown_at(client, URL, 9)
    for seed, shown in (
        (2, str(time.time() - 3)),
        (3, other_draws_time),
        (4, ""),
        (5, f"{shown_at(client, URL, 5)}x"),
    ):
        page = post(client, {"seed": seed, "answer": right(template, seed), "shown_at": shown})
        assert "Proposed from your error: <strong>Got it</strong>" in page, seed
    assert set(PracticeAttempt.objects.values_list("rating", flat=True)) == {Rating.GOT_IT}
    page = post(client, {"seed": 9, "answer": right(template, 9), "shown_at": other_draws_time})
    assert "Proposed from your error: <strong>Easy</strong>" in page  # the server's time, quick


def test_after_show_me_the_rating_is_fixed(client, template, clock):
    page = post(client, {"seed": 6, "action": "show"})
    assert "after it the rating is fixed" in page and 'class="rating-form"' not in page
    attempt = PracticeAttempt.objects.get()
    due = PracticeState.objects.get().due
    response = client.post(URL + "rate/", {"attempt": attempt.pk, "rating": Rating.EASY})
    assert "That rating is final: after Show me, Missed it stays stored." in response.content.decode()
    attempt.refresh_from_db()
    assert attempt.rating == Rating.MISSED_IT and PracticeState.objects.get().due == due


def seeds_with_one_answer(template: PracticeTemplate, count: int) -> list[int]:
    by_answer: dict[float, list[int]] = {}
    for seed in range(1, 400):
        by_answer.setdefault(template.problem(seed).answer, []).append(seed)
    return max(by_answer.values(), key=len)[:count]


def test_practice_of_a_template_not_due_leaves_its_schedule_alone(client, template, clock):
    post(client, {"seed": 1, "answer": right(template, 1)})
    first = PracticeState.objects.get()
    for seed in range(2, 9):
        clock.advance(seconds=1)
        page = post(client, {"seed": seed, "answer": right(template, seed)})
        assert "This problem was not due, so this was practice" in page
    state = PracticeState.objects.get()
    assert (state.review_count, state.due) == (1, first.due)
    clock.current = first.due
    post(client, {"seed": 20, "answer": right(template, 20)})
    assert PracticeState.objects.get().review_count == 2


def test_answers_sent_at_once_on_a_new_template_count_one_review(client, template, clock):
    """Sent at once, each first answer read the template as new before any was stored, and each
    was begun as a review (seen on PostgreSQL: 2 to 4 of 16); the schedule counts the first."""
    for seed in range(1, 5):
        clock.advance(seconds=0.01)
        post(client, {"seed": seed, "answer": right(template, seed)})
    PracticeAttempt.objects.update(is_review=True)  # as the requests at once recorded them
    PracticeState.rebuild(PracticeAttempt.objects.first(), template.pk)
    state = PracticeState.objects.get()
    assert state.review_count == 1 and state.due - clock.now() > timedelta(minutes=1)


def mastery(client) -> str:
    page = client.get("/practice/").content.decode()
    section = page.split("Lesson 05 · KV cache and context length")[1]
    return re.search(r'class="mastery[^"]*">([^<]+)<', section).group(1)


def test_mastery_counts_one_problem_once_however_many_seeds_draw_it(client, template, clock):
    seeds = seeds_with_one_answer(template, 8)
    assert len(seeds) == 8
    for seed in seeds:
        post(client, {"seed": seed, "answer": right(template, seed)})
    assert mastery(client) == "Attempted"  # one problem, right once


def test_mastery_takes_more_than_one_day(client, template, clock):
    seen: set[float] = set()
    seeds = [s for s in range(1, 200) if (a := template.problem(s).answer) not in seen and not seen.add(a)]
    for seed in seeds[:8]:
        post(client, {"seed": seed, "answer": right(template, seed)})
    assert mastery(client) == "Proficient"
    clock.advance(days=1)
    post(client, {"seed": seeds[8], "answer": right(template, seeds[8])})
    assert mastery(client) == "Proficient"  # two days, one of the lesson's templates
    other = PracticeTemplate.objects.get(slug="l05-context-doubles")
    answer = f"{other.problem(1).answer}"
    assert client.post(other.get_absolute_url(), {"seed": 1, "answer": answer}).status_code == 200
    assert mastery(client) == "Mastered"


def test_after_a_hint_the_named_mistake_stays_above_the_hints(client, template):
    value = template.problem(3).answer
    post(client, {"seed": 3, "answer": f"{value / 2} GB"})  # K and V counted once
    page = post(client, {"seed": 3, "action": "hint", "hints": 0})
    assert "counting the cache once" in page and 'id="practice-hints"' in page
    assert page.index("counting the cache once") < page.index('id="practice-hints"')


def test_the_rating_after_a_hint_says_what_it_was_proposed_from(client, template):
    post(client, {"seed": 2, "action": "hint", "hints": 0})
    page = post(client, {"seed": 2, "answer": right(template, 2)})
    assert "Proposed from your answer after 1 hint, so no better than Hard: <strong>Hard</strong>" in page
    assert "Proposed from your error" not in page


def test_the_practice_list_says_right_first_time_as_progress_does(client, template):
    value = template.problem(3).answer
    post(client, {"seed": 3, "answer": f"{value * 5} GB"})
    post(client, {"seed": 3, "answer": f"{value} GB"})
    post(client, {"seed": 4, "answer": right(template, 4)})
    assert "2 attempts, 50% right first time" in client.get("/practice/").content.decode()
    progress = client.get("/progress/").content.decode().split('id="practice-table"')[1]
    assert "Right first time</th>" in progress and "<td>2</td>\n          <td>50%</td>" in progress
