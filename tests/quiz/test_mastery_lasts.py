"""Mastered takes right first tries on two days and two of the lesson's templates, and lasts only
while FSRS predicts recall of at least 85%; the level's reason is shown on /practice/ and /progress/."""

import re
from datetime import UTC, datetime, timedelta

import pytest

from lessons.models import PracticeTemplate
from quiz import scheduling
from quiz.models import PracticeAttempt, Verdict
from quiz.practice_stats import MASTERED_RECALL, mastery_of

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def attempt(template_id: int, day: int, verdict: str = Verdict.RIGHT, hints: int = 0) -> PracticeAttempt:
    return PracticeAttempt(
        template_id=template_id, verdict=verdict, first_verdict=verdict, hints_used=hints,
        answered_at=DAY1 + timedelta(days=day), tries=1,
    )  # fmt: skip


def test_mastered_takes_two_days_and_two_templates():
    one_day_two_templates = [attempt(1 + i % 2, 0) for i in range(8)]
    two_days_one_template = [attempt(1, i // 4) for i in range(8)]
    both = [attempt(1 + i % 2, i // 4) for i in range(8)]
    assert mastery_of(one_day_two_templates, 2).level == "proficient"
    assert mastery_of(two_days_one_template, 2).level == "proficient"
    assert mastery_of(both, 2).level == "mastered"
    assert mastery_of(two_days_one_template, 2).reason.startswith("2 of 3: ")


def test_right_after_a_hint_is_no_right_first_try_for_the_days_or_templates():
    # Day 2's answers all took a hint: they score 0.5, and the second day is not counted.
    attempts = [attempt(1 + i % 2, 0) for i in range(7)] + [attempt(2, 1, hints=1)]
    found = mastery_of(attempts, 2)
    assert found.level == "proficient" and "without a hint on 1 day (2 needed)" in found.reason


def test_a_lesson_of_one_template_asks_for_that_one_only():
    two_days_one_template = [attempt(1, i // 4) for i in range(8)]
    found = mastery_of(two_days_one_template, 1)
    assert found.level == "mastered" and "its one problem type right" in found.reason


def test_mastered_reads_proficient_once_recall_drops_below_85_percent():
    both = [attempt(1 + i % 2, i // 4) for i in range(8)]
    assert mastery_of(both, 2, recall=MASTERED_RECALL).level == "mastered"
    faded = mastery_of(both, 2, recall=0.8)
    assert faded.level == "proficient" and "recall is down to 80%" in faded.reason


def test_retrievability_falls_with_time_from_the_stored_card():
    card = scheduling.schedule_after(1, [(3, DAY1)])["fsrs_card"]
    same_hour = scheduling.retrievability(card, DAY1 + timedelta(hours=1))
    week = scheduling.retrievability(card, DAY1 + timedelta(days=7))
    month = scheduling.retrievability(card, DAY1 + timedelta(days=30))
    assert 1 > same_hour > 0.99 and same_hour > week > month
    assert scheduling.retrievability({"stability": None, "last_review": None}, DAY1) is None


SLUGS = ("l05-kv-per-conversation", "l05-context-doubles")


def answer_right(client, template: PracticeTemplate, seed: int) -> None:
    unit = " GB" if template.slug == SLUGS[0] else ""
    data = {"seed": seed, "answer": f"{template.problem(seed).answer}{unit}"}
    assert client.post(template.get_absolute_url(), data).status_code == 200


def distinct_seeds(template: PracticeTemplate, count: int) -> list[int]:
    seeds, seen = [], set()
    for seed in range(1, 500):
        if (value := template.problem(seed).answer) not in seen:
            seen.add(value)
            seeds.append(seed)
    return seeds[:count]


def practice_lesson_05(client) -> str:
    page = client.get("/practice/").content.decode()
    return page.split("Lesson 05 · KV cache and context length")[1].split("</section>")[0]


def progress_reason(client) -> str:
    page = client.get("/progress/").content.decode()
    reasons = page.split('id="mastery-reasons"')[1].split("</ul>")[0]
    return re.sub(r"<[^>]+>", "", reasons.split("05 · ")[1].split("</li>")[0])


@pytest.mark.django_db
def test_mastery_fades_on_the_pages_when_the_learner_stays_away(client, lessons, clock):
    kv, doubles = (PracticeTemplate.objects.get(slug=slug) for slug in SLUGS)
    for seed in distinct_seeds(kv, 4):
        answer_right(client, kv, seed)
    clock.advance(days=1)
    for seed in distinct_seeds(doubles, 4):
        answer_right(client, doubles, seed)
    section = practice_lesson_05(client)
    assert "Mastered" in section and "3 of 3:" in section
    assert progress_reason(client).startswith("Mastered: 3 of 3:")
    clock.advance(days=60)  # two months away: FSRS's recall of both templates is far below 85%
    section = practice_lesson_05(client)
    assert ">Proficient<" in section and "recall is down to" in section
    assert progress_reason(client).startswith("Proficient: Mastered, but recall is down to")


def test_a_recall_just_under_85_percent_never_reads_as_85():
    both = [attempt(1 + i % 2, i // 4) for i in range(8)]
    faded = mastery_of(both, 2, recall=0.8496)
    assert faded.level == "proficient"
    assert "down to 84% on one of its problem types (under 85%)" in faded.reason
    kept = mastery_of(both, 2, recall=0.9299)
    assert kept.level == "mastered" and kept.reason.endswith("recall at least 92% on each problem type")


def test_the_reason_counts_untried_types_from_every_attempt_and_says_what_the_window_holds():
    # Ten right first tries on template 2 on day 0, then eight on template 1 on day 1: the window
    # (the last eight) holds template 1 on one day only, but template 2 was tried.
    attempts = [attempt(2, 0) for _ in range(10)] + [attempt(1, 1) for _ in range(8)]
    found = mastery_of(attempts, 2)
    assert found.level == "proficient"
    assert "not yet tried" not in found.reason
    assert found.reason == (
        "1 of 3: in your last 8 problems, an average score of 1.00; right at a first try without a hint "
        "on 1 day (2 needed); right on 1 problem type (2 needed)"
    )
    # Read from the window alone, as the database path reads it, with the count of types tried.
    assert mastery_of(attempts[-8:], 2, tried=2).reason == found.reason
    assert "1 problem type not yet tried" in mastery_of(attempts[-8:], 2, tried=1).reason


def test_the_reason_asks_for_what_is_missing_in_words_that_match():
    few = [attempt(1, 0, verdict=Verdict.OFF)] + [attempt(1, 0) for _ in range(2)]
    reason = mastery_of(few, 2).reason
    assert "an average of 0.9 over at least 6 problems needed" in reason
    assert "1 problem type not yet tried" in reason
    # A lesson whose templates were all withdrawn claims no "one problem type".
    withdrawn = mastery_of([attempt(1, i // 4) for i in range(8)], 0).reason
    assert "one problem type" not in withdrawn and "none of its problem types is published now" in withdrawn
