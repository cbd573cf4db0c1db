"""Mastery per lesson on /practice/ and /progress/, from the learner's recent practice."""

import re
import time

import pytest

from lessons.models import PracticeTemplate

pytestmark = pytest.mark.django_db

SLUG = "l05-kv-per-conversation"


def answer(client, template: PracticeTemplate, seed: int, factor: float = 1.0, **extra) -> None:
    typed = f"{template.problem(seed).answer * factor} GB"
    data = {"seed": seed, "answer": typed, "shown_at": time.time() - 3600, **extra}
    assert client.post(template.get_absolute_url(), data).status_code == 200


def practice_mastery(client) -> str:
    page = client.get("/practice/").content.decode()
    section = page.split("Lesson 05 · KV cache and context length")[1]
    return re.search(r'class="mastery[^"]*">([^<]+)<', section).group(1)


def progress_mastery(client) -> str:
    page = client.get("/progress/").content.decode()
    row = page.split('id="practice-table"')[1].split("05 · KV cache and context length")[1]
    return re.search(r'<td class="mastery[^"]*">([^<]+)</td>', row).group(1)


def test_mastery_rises_as_the_student_answers_right_first_time(client, lessons):
    template = PracticeTemplate.objects.get(slug=SLUG)
    assert practice_mastery(client) == "Not started"
    answer(client, template, 1, factor=3)  # off
    assert practice_mastery(client) == "Attempted" == progress_mastery(client)
    for seed in (2, 3):
        answer(client, template, seed)
    assert practice_mastery(client) == "Familiar" == progress_mastery(client)
    for seed in (4, 5, 6):
        answer(client, template, seed)
    assert practice_mastery(client) == "Proficient" == progress_mastery(client)
    for seed in range(7, 14):
        answer(client, template, seed)
    assert practice_mastery(client) == "Mastered" == progress_mastery(client)


def test_right_after_a_hint_counts_half(client, lessons):
    template = PracticeTemplate.objects.get(slug=SLUG)
    for seed in range(1, 7):
        answer(client, template, seed, hints=1)
    # Six answers right after a hint score 0.5 each: familiar, not proficient.
    assert practice_mastery(client) == "Familiar" == progress_mastery(client)


def test_one_learners_mastery_is_theirs_alone(client, lessons, django_user_model):
    from django.test import Client

    template = PracticeTemplate.objects.get(slug=SLUG)
    for seed in range(1, 5):
        answer(client, template, seed)
    assert practice_mastery(client) == "Proficient"
    assert practice_mastery(Client()) == "Not started"
