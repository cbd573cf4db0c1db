"""/review/: what is due now, oldest first, one at a time; or when the next one comes."""

import re
from datetime import timedelta

import pytest

from lessons.models import PracticeTemplate
from quiz.models import PracticeState, Rating
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import rate, show

pytestmark = pytest.mark.django_db


def study(client, card_url: str, rating: int) -> None:
    client.post(card_url + "show/", {"answer": ""})
    rate(client, rating, url=card_url + "rate/")


def due_labels(body: str) -> list[str]:
    return re.findall(r'<li class="due-item">\s*<a href="[^"]+\?review=1">([^<]+)</a>', body)


def test_nothing_rated_yet(client, seed_card):
    body = client.get("/review/").content.decode()
    assert "Nothing is due now." in body and "Rate a card and it will come back here" in body


def test_a_card_rated_got_it_is_not_due_and_the_next_time_is_given(client, seed_card, clock):
    study(client, SEED_CARD_URL, Rating.GOT_IT)
    body = client.get("/review/").content.decode()
    assert due_labels(body) == []
    # In UTC, which the page's script rewrites to the student's own time zone.
    assert (
        'The next card comes back in 10 min, on <time datetime="2026-03-02T09:10:00Z" '
        'data-local-time="year">2 Mar 2026 at 09:10 UTC</time>' in body
    )
    assert f'<a href="{SEED_CARD_URL}">{seed_card.label}</a>' in body


def test_due_cards_come_oldest_first(client, seed_card, second_card, clock):
    study(client, second_card.get_absolute_url(), Rating.MISSED_IT)
    clock.advance(minutes=3)
    study(client, SEED_CARD_URL, Rating.MISSED_IT)
    assert due_labels(client.get("/review/").content.decode()) == [second_card.label]
    clock.advance(minutes=2)
    body = client.get("/review/").content.decode()
    assert due_labels(body) == [second_card.label, seed_card.label]
    assert "2 cards due now" in body and f"Start with {second_card.label}" in body


def test_next_goes_to_the_oldest_due_card_in_the_card_pages_flow(client, seed_card, clock):
    assert client.get("/review/next/")["Location"] == "/review/"
    study(client, SEED_CARD_URL, Rating.MISSED_IT)
    clock.advance(minutes=1)
    response = client.get("/review/next/")
    assert response["Location"] == SEED_CARD_URL + "?review=1"
    body = client.get(response["Location"]).content.decode()
    assert "Reviewing the cards due now" in body and '<input type="hidden" name="review" value="1">' in body


def test_reviewing_a_due_card_again_moves_it_on(client, seed_card, clock):
    study(client, SEED_CARD_URL, Rating.MISSED_IT)
    clock.advance(minutes=2)
    assert due_labels(client.get("/review/").content.decode()) == [seed_card.label]
    show(client, "", review="1")
    rate(client, Rating.GOT_IT, review="1")
    assert due_labels(client.get("/review/").content.decode()) == []


def test_each_learner_sees_only_their_own_due_cards(student_client, other_student_client, seed_card, clock):
    study(student_client, SEED_CARD_URL, Rating.MISSED_IT)
    clock.advance(minutes=5)
    assert due_labels(student_client.get("/review/").content.decode()) == [seed_card.label]
    assert due_labels(other_student_client.get("/review/").content.decode()) == []
    assert other_student_client.get("/review/next/")["Location"] == "/review/"


PRACTICE_SLUG = "l05-kv-per-conversation"
PRACTICE_URL = f"/practice/{PRACTICE_SLUG}/"


def practise(client, seed: int, factor: float) -> None:
    value = PracticeTemplate.objects.get(slug=PRACTICE_SLUG).problem(seed).answer * factor
    assert client.post(PRACTICE_URL, {"seed": seed, "answer": f"{value}"}).status_code == 200


def due_links(body: str) -> list[str]:
    return re.findall(r'<li class="due-item[^"]*">\s*<a href="([^"]+)">', body)


def test_due_practice_appears_beside_due_cards_in_due_order(client, seed_card, second_card, clock):
    study(client, second_card.get_absolute_url(), Rating.MISSED_IT)
    clock.advance(minutes=2)
    practise(client, 1, factor=5)  # off: Missed it, due again soon
    clock.advance(minutes=2)
    study(client, SEED_CARD_URL, Rating.MISSED_IT)
    state = PracticeState.objects.get()
    assert state.last_rating == Rating.MISSED_IT
    clock.current = max(
        state.due, *(s.due for s in second_card.states.all()), *(s.due for s in seed_card.states.all())
    )
    body = client.get("/review/").content.decode()
    assert due_links(body) == [
        f"{second_card.get_absolute_url()}?review=1",
        PRACTICE_URL,
        SEED_CARD_URL + "?review=1",
    ]
    assert "2 cards and 1 practice problem due now" in body
    assert "Practice, new numbers · Lesson 05" in body


def test_a_due_practice_problem_is_a_new_draw_and_answering_it_moves_it_on(client, seed_card, clock):
    practise(client, 1, factor=5)
    clock.current = PracticeState.objects.get().due
    assert client.get("/review/next/")["Location"] == PRACTICE_URL  # no seed: the page draws one
    drawn = client.get(PRACTICE_URL)
    assert drawn.status_code == 302 and "?seed=" in drawn["Location"]
    practise(client, 2, factor=1)
    assert due_links(client.get("/review/").content.decode()) == []
    body = client.get("/review/").content.decode()
    assert "The next practice problem comes back" in body


def test_a_draft_template_is_not_due(client, seed_card, clock):
    practise(client, 1, factor=5)
    clock.current = PracticeState.objects.get().due
    PracticeTemplate.objects.filter(slug=PRACTICE_SLUG).update(published=False)
    assert "Nothing is due now." in client.get("/review/").content.decode()


def practise_template(client, slug: str, seed: int, factor: float) -> None:
    value = PracticeTemplate.objects.get(slug=slug).problem(seed).answer * factor
    assert client.post(f"/practice/{slug}/", {"seed": seed, "answer": f"{value}"}).status_code == 200


def summary_text(client) -> str:
    body = client.get("/progress/").content.decode()
    summary = body.split('<section class="progress-summary"')[1].split("</section>")[0]
    return " ".join(re.sub(r"<[^>]+>", " ", summary).split())


def test_progress_counts_as_due_what_review_lists(client, seed_card, second_card, clock):
    """/progress/ said "2 to review" while /review/ listed 2 cards and 3 problems."""
    study(client, second_card.get_absolute_url(), Rating.MISSED_IT)
    study(client, SEED_CARD_URL, Rating.MISSED_IT)
    missed = ["l05-kv-per-conversation", "l00-decode-ceiling", "l01-ttft-long-prompt"]
    for slug in missed:
        practise_template(client, slug, 1, factor=5)  # off: Missed it, due again soon
    practise_template(client, "l04-efficiency", 1, factor=1)  # right: days away
    practise_template(client, "l03-capacity-halves", 1, factor=5)  # due, but made a draft below
    PracticeTemplate.objects.filter(slug="l03-capacity-halves").update(published=False)
    clock.current = max(state.due for state in PracticeState.objects.filter(template__slug__in=missed))
    review = client.get("/review/").content.decode()
    assert "2 cards and 3 practice problems due now" in review and len(due_links(review)) == 5
    summary = summary_text(client)
    assert "Due now 5 to review" in summary
    ahead = PracticeState.objects.get(template__slug="l04-efficiency").due - clock.current
    day = -(-ahead // timedelta(days=1))
    assert summary.endswith(f"5 now · {'1 within a day' if day == 1 else f'1 in {day} days'} · 0 later.")


def test_practice_alone_has_a_forecast(client, seed_card, clock):
    practise_template(client, "l04-efficiency", 1, factor=1)
    summary = summary_text(client)
    assert "Due now 0" in summary and "Due in the next 7 days 1" in summary
    assert "0 later." in summary and 'id="forecast-chart"' in client.get("/progress/").content.decode()
