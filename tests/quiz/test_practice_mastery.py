"""Mastery per lesson on /practice/ and /progress/, from the learner's recent practice."""

import re
import time

import pytest

from lessons.models import PracticeTemplate

pytestmark = pytest.mark.django_db

SLUG = "l05-kv-per-conversation"


def answer(
    client, template: PracticeTemplate, seed: int, factor: float = 1.0, unit: str = " GB", **extra
) -> None:
    typed = f"{template.problem(seed).answer * factor}{unit}"
    data = {"seed": seed, "answer": typed, "shown_at": time.time() - 3600, **extra}
    assert client.post(template.get_absolute_url(), data).status_code == 200


def take_a_hint(client, template: PracticeTemplate, seed: int) -> None:
    data = {"seed": seed, "action": "hint", "hints": 0}
    assert client.post(template.get_absolute_url(), data).status_code == 200


def practice_mastery(client) -> str:
    page = client.get("/practice/").content.decode()
    section = page.split("Lesson 05 · KV cache and context length")[1]
    return re.search(r'class="mastery[^"]*">([^<]+)<', section).group(1)


def progress_mastery(client) -> str:
    page = client.get("/progress/").content.decode()
    row = page.split('id="practice-table"')[1].split("05 · KV cache and context length")[1]
    return re.search(r'<td class="mastery[^"]*">([^<]+)</td>', row).group(1)


def distinct_problems(template: PracticeTemplate, count: int) -> list[int]:
    """Seeds that draw problems with different answers: mastery counts a problem once."""
    seeds, answers = [], set()
    for seed in range(1, 500):
        if (value := template.problem(seed).answer) not in answers:
            answers.add(value)
            seeds.append(seed)
    return seeds[:count]


def test_mastery_rises_as_the_student_answers_right_first_time(client, lessons, clock):
    template = PracticeTemplate.objects.get(slug=SLUG)
    seeds = distinct_problems(template, 13)
    assert practice_mastery(client) == "Not started"
    answer(client, template, seeds[0], factor=3)  # off
    assert practice_mastery(client) == "Attempted" == progress_mastery(client)
    for seed in seeds[1:3]:
        answer(client, template, seed)
    assert practice_mastery(client) == "Familiar" == progress_mastery(client)
    for seed in seeds[3:6]:
        answer(client, template, seed)
    assert practice_mastery(client) == "Proficient" == progress_mastery(client)
    clock.advance(days=1)  # Mastered takes more than one day
    for seed in seeds[6:9]:
        answer(client, template, seed)
    # and more than one of the lesson's templates
    assert practice_mastery(client) == "Proficient" == progress_mastery(client)
    reason = (
        "2 of 3: in your last 8 problems, an average score of 1.00; right at a first try without a hint on "
        "2 days; 1 problem type not yet tried"
    )
    assert reason in client.get("/practice/").content.decode()
    other = PracticeTemplate.objects.get(slug="l05-context-doubles")
    answer(client, other, 1, unit="")
    assert practice_mastery(client) == "Mastered" == progress_mastery(client)


def test_right_after_a_hint_counts_half(client, lessons):
    template = PracticeTemplate.objects.get(slug=SLUG)
    for seed in distinct_problems(template, 6):
        take_a_hint(client, template, seed)
        answer(client, template, seed)
    # Six answers right after a hint score 0.5 each: familiar, not proficient.
    assert practice_mastery(client) == "Familiar" == progress_mastery(client)


def test_one_learners_mastery_is_theirs_alone(client, lessons, django_user_model):
    from django.test import Client

    template = PracticeTemplate.objects.get(slug=SLUG)
    for seed in distinct_problems(template, 4):
        answer(client, template, seed)
    assert practice_mastery(client) == "Proficient"
    assert practice_mastery(Client()) == "Not started"


def test_the_reason_knows_a_type_tried_before_the_last_eight_problems(client, lessons, clock):
    first, second = (PracticeTemplate.objects.get(slug=slug) for slug in ("l05-context-doubles", SLUG))
    for seed in distinct_problems(first, 10):
        answer(client, first, seed, unit="")
    clock.advance(days=1)
    for seed in distinct_problems(second, 8):
        answer(client, second, seed)
    reason = (
        "1 of 3: in your last 8 problems, an average score of 1.00; right at a first try without a hint on "
        "1 day (2 needed); right on 1 problem type (2 needed)"
    )
    assert reason in client.get("/practice/").content.decode()
    assert reason in client.get("/progress/").content.decode()
