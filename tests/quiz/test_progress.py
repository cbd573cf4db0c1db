"""/progress/, the bars on /, the consent switch and /progress/export.json."""

import json
import re
from datetime import timedelta

import pytest

from felab_sim.models import PrefixCacheRunOrder, Run, RunLevel
from lessons.models import Card, Lesson, PracticeTemplate
from quiz.models import CardState, LearnerProfile, Rating, Showing
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import rate, show
from tests.textutil import text_of

pytestmark = pytest.mark.django_db


def lesson_cards(seed_card) -> int:
    return Card.objects.filter(lesson=seed_card.lesson).count()


def bar(body: str) -> tuple[int, int]:
    # Lesson 03's bar (the seed card's lesson): other lessons come before and after it.
    match = re.search(
        r'<progress class="progress-bar" value="(\d+)" max="(\d+)"\s+aria-label="Lesson 03:', body
    )
    assert match, "no progress bar"
    return int(match[1]), int(match[2])


def row_of(body: str, label: str) -> str:
    match = re.search(
        r"<tr>\s*<th scope=\"row\"><a [^>]*>" + re.escape(label) + r"</a></th>(.*?)</tr>", body, re.S
    )
    assert match, f"no row for {label}"
    return " ".join(re.sub(r"<[^>]+>", " ", match[1]).split())


def test_a_first_visit_shows_empty_bars_and_an_invitation(client, seed_card):
    body = client.get("/progress/").content.decode()
    assert bar(body) == (0, lesson_cards(seed_card))
    assert "Nothing rated yet" in body and "0 due for review" in body
    assert "studying without an account" in body and 'href="/accounts/signup/?next=/progress/"' in body
    assert row_of(body, seed_card.label) == "not yet —"


def test_progress_shows_bar_last_rating_share_and_due(client, seed_card, second_card, clock):
    show(client)
    rate(client, Rating.GOT_IT)
    clock.advance(minutes=2)
    client.post(second_card.get_absolute_url() + "show/", {"answer": ""})
    rate(client, Rating.MISSED_IT, url=second_card.get_absolute_url() + "rate/")
    body = client.get("/progress/").content.decode()
    assert bar(body) == (2, lesson_cards(seed_card))
    assert "50% Got it or Easy" in body
    assert "0 due for review" in body
    assert row_of(body, seed_card.label) == "Got it in 8 min"
    assert row_of(body, second_card.label) == "Missed it in 1 min"
    clock.advance(minutes=5)
    body = client.get("/progress/").content.decode()
    assert '<a href="/review/">1 due for review</a>' in body
    assert row_of(body, second_card.label) == "Missed it due now"


def test_progress_is_each_learners_own(student_client, other_student_client, seed_card):
    show(student_client)
    rate(student_client, Rating.EASY)
    assert bar(student_client.get("/progress/").content.decode())[0] == 1
    theirs = other_student_client.get("/progress/").content.decode()
    assert bar(theirs)[0] == 0 and "Easy</span>" not in theirs


def test_home_shows_the_same_bar_per_lesson(client, seed_card):
    assert bar(client.get("/").content.decode()) == (0, lesson_cards(seed_card))
    show(client)
    rate(client, Rating.HARD)
    body = client.get("/").content.decode()
    assert bar(body) == (1, lesson_cards(seed_card))
    assert f"1 of {lesson_cards(seed_card)} cards rated" in text_of(body, "lesson-item")


def test_signed_in_student_can_share_their_name_or_not(student_client, student):
    body = student_client.get("/progress/").content.decode()
    assert 'action="/progress/sharing/"' in body and 'name="share_name"' in body
    student_client.post("/progress/sharing/", {"share_name": "on"})
    assert LearnerProfile.objects.get(user=student).share_name is True
    assert "checked" in student_client.get("/progress/").content.decode()
    response = student_client.post("/progress/sharing/", {}, follow=True)
    assert "hidden from instructors" in response.content.decode()
    assert LearnerProfile.objects.get(user=student).share_name is False


def test_anonymous_cannot_set_sharing(client, db):
    response = client.post("/progress/sharing/", {"share_name": "on"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not LearnerProfile.objects.exists()
    assert 'action="/progress/sharing/"' not in client.get("/progress/").content.decode()


def test_export_has_all_of_ones_own_data_and_nothing_else(student_client, other_student_client, seed_card):
    show(student_client, "my guess")
    showing = Showing.objects.get()
    student_client.post(SEED_CARD_URL + "opened/", {"layer": "deeper", "showing": showing.pk})
    rate(student_client, Rating.GOT_IT)
    show(other_student_client, "their guess")
    rate(other_student_client, Rating.MISSED_IT)

    response = student_client.get("/progress/export.json")
    assert response["Content-Type"] == "application/json"
    assert "attachment" in response["Content-Disposition"]
    assert "no-store" in response["Cache-Control"]
    data = json.loads(response.content)
    assert data["learner"] == {"account": "sam", "shares_name_with_instructors": False}
    [mine] = data["showings"]
    assert mine["answer"] == "my guess" and mine["layers_opened"] == ["deeper"]
    assert mine["card"] == "llm-inference-performance/concurrency-sweep/1"
    assert mine["rating"]["value"] == 3 and mine["rating"]["label"] == "Got it"
    [schedule] = data["schedule"]
    assert schedule["last_rating_label"] == "Got it" and schedule["reviews"] == 1
    assert schedule["fsrs"]["card_id"] == seed_card.pk
    assert "their guess" not in response.content.decode()


def answer_practice(client, slug: str, seed: int, factor: float) -> float:
    value = PracticeTemplate.objects.get(slug=slug).problem(seed).answer * factor
    assert client.post(f"/practice/{slug}/", {"seed": seed, "answer": f"{value}"}).status_code == 200
    return value


def test_export_has_ones_practice_and_runs_and_nothing_of_anothers(
    student_client, other_student_client, student, other_student, seed_card, clock
):
    """The page calls the export everything recorded about the learner: their practice attempts,
    practice schedules and the runs they started are part of it."""
    typed = answer_practice(student_client, "l05-kv-per-conversation", 3, factor=5)
    answer_practice(student_client, "l04-efficiency", 1, factor=1)
    answer_practice(other_student_client, "l04-efficiency", 2, factor=1)
    assert student_client.post("/sim/runs/", {"levels": "1"}).status_code == 302
    measured = Run.objects.create(
        server_url="http://127.0.0.1:8001/v1", params={"levels": [2]}, state=Run.State.DONE,
        started_by=student, capacity=2, finished_at=clock.now(),
    )  # fmt: skip
    RunLevel.objects.create(run=measured, conc=2, requests=12, done=12, agg_tok_s=91.5, user_tok_s=45.0,
                            ttft_p50_ms=120.0, ttft_p95_ms=180.0, goodput_rps=1.5)  # fmt: skip
    prefix = Run.objects.create(
        kind=Run.Kind.PREFIX_CACHE, server_url="http://127.0.0.1:8001/v1", started_by=student,
        state=Run.State.DONE, params={"prefix_chars": 1300, "suffix_chars": 80, "requests": 3, "max_tokens": 48},
    )  # fmt: skip
    PrefixCacheRunOrder.objects.create(run=prefix, order="shared-first", requests=3, done=3, prompt_tokens=345,
                                       cached_tokens=320, ttft_cold_ms=90.0, ttft_warm_ms=20.0,
                                       measured_requests=[{"ttft_ms": 90.0}])  # fmt: skip
    other_run = Run.objects.create(server_url="http://127.0.0.1:8001/v1", params={"levels": [8]},
                                   state=Run.State.DONE, started_by=other_student)  # fmt: skip

    data = json.loads(student_client.get("/progress/export.json").content)

    attempts = {attempt["template"]: attempt for attempt in data["practice_attempts"]}
    assert sorted(attempts) == ["l04-efficiency", "l05-kv-per-conversation"]
    off = attempts["l05-kv-per-conversation"]
    assert off["seed"] == 3 and off["typed"] == f"{typed}" and off["verdict"] == "off"
    assert off["rating"]["label"] == "Missed it" and off["answered_at"] == clock.now().isoformat()
    assert off["expected"] == pytest.approx(typed / 5)
    assert off["tries"] >= 1 and off["hints_used"] == 0 and off["first_try"]["verdict"] in ("off", None)
    schedules = {schedule["template"]: schedule for schedule in data["practice_schedule"]}
    assert sorted(schedules) == ["l04-efficiency", "l05-kv-per-conversation"]
    assert schedules["l04-efficiency"]["reviews"] == 1 and "due" in schedules["l04-efficiency"]["fsrs"]
    runs = {run["id"]: run for run in data["runs"]}
    queued = Run.objects.get(started_by=student, state=Run.State.QUEUED)
    assert sorted(runs) == sorted([queued.pk, measured.pk, prefix.pk])
    assert runs[queued.pk]["state"] == "queued" and runs[queued.pk]["params"]["levels"] == [1]
    assert runs[measured.pk]["levels"] == [
        {"conc": 2, "requests": 12, "done": 12, "agg_tok_s": 91.5, "user_tok_s": 45.0,
         "ttft_p50_ms": 120.0, "ttft_p95_ms": 180.0, "goodput_rps": 1.5}
    ]  # fmt: skip
    [order] = runs[prefix.pk]["orders"]
    assert order["order"] == "shared-first" and order["outputs"]["cached_tokens"] == 320
    assert order["measured_requests"] == [{"ttft_ms": 90.0}]
    assert other_run.pk not in runs
    # The other student's attempt (seed 2) is theirs alone.
    assert [attempt["seed"] for attempt in data["practice_attempts"]].count(2) == 0
    theirs = json.loads(other_student_client.get("/progress/export.json").content)
    assert [(a["template"], a["seed"]) for a in theirs["practice_attempts"]] == [("l04-efficiency", 2)]
    assert [run["id"] for run in theirs["runs"]] == [other_run.pk]


def test_an_anonymous_learners_practice_is_exported_from_their_session(client, student_client, seed_card):
    answer_practice(client, "l04-efficiency", 1, factor=1)
    answer_practice(student_client, "l04-efficiency", 2, factor=1)
    data = json.loads(client.get("/progress/export.json").content)
    assert [attempt["seed"] for attempt in data["practice_attempts"]] == [1]
    assert [schedule["template"] for schedule in data["practice_schedule"]] == ["l04-efficiency"]
    assert data["runs"] == []


def test_anonymous_export_is_the_sessions_data(client, other_student_client, seed_card):
    assert json.loads(client.get("/progress/export.json").content)["showings"] == []
    show(other_student_client, "not yours")
    show(client, "visitor's guess")
    data = json.loads(client.get("/progress/export.json").content)
    assert data["learner"]["account"] is None
    assert [s["answer"] for s in data["showings"]] == ["visitor's guess"]


def _scheduled(user, cards_and_offsets, now):
    for card, (hours, rating) in cards_and_offsets:
        CardState.objects.create(
            card=card,
            user=user,
            due=now + timedelta(hours=hours),
            last_rating=rating,
            last_reviewed_at=now,
            fsrs_card={},
        )


def test_the_page_opens_with_a_summary_and_folds_each_lessons_cards(
    student_client, student, seed_card, clock
):
    cards = list(Card.objects.filter(published=True, lesson__published=True).order_by("pk")[:5])
    now = clock.now()
    _scheduled(
        student,
        zip(
            cards,
            [(-1, Rating.MISSED_IT), (24, Rating.GOT_IT), (25, Rating.EASY), (60, Rating.HARD), (500, 3)],
            strict=True,
        ),
        now,
    )
    body = student_client.get("/progress/").content.decode()
    summary, _, details = body.partition('<section class="course"')
    total = Card.objects.filter(published=True, lesson__published=True).count()
    stats = " ".join(
        re.sub(r"<[^>]+>", " ", summary.split('<dl class="summary-stats">')[1].split("</dl>")[0]).split()
    )
    assert stats == (
        f"Cards rated 5 of {total} Due now 1 to review Due in the next 7 days 3 Got it or Easy 60% of rated"
    )
    # Exactly a day ahead is day 1, a moment more is day 2; 500 h is past the 14 days.
    assert "1 now · 1 within a day · 1 in 2 days · 1 in 3 days · 1 later." in summary
    assert 'id="forecast-chart"' in summary and "<svg" in summary  # drawn on the server
    assert '<progress class="progress-bar"' not in summary and "<table" not in summary
    assert details.count('<details class="progress-lesson"') == Lesson.objects.filter(published=True).count()
    assert "<details open" not in details and "not yet" in details


def test_nothing_rated_shows_no_chart_and_says_where_to_start(client, seed_card):
    body = client.get("/progress/").content.decode()
    assert 'id="forecast-chart"' not in body and "Start with the course map" in body
    assert "plotly" not in body and "plots.js" not in body
