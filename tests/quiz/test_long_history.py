"""A learner with a long practice history: /progress/ and /review/ read summaries of it, not the
whole of it, on every visit, and still show every attempt counted."""

import re
import time
from collections import Counter
from collections.abc import Iterator

import pytest
from django.db.models.signals import post_init

from lessons.models import PracticeTemplate
from quiz.models import PracticeAttempt
from quiz.practice_stats import MASTERY_WINDOW

pytestmark = pytest.mark.django_db

SLUG = "l05-kv-per-conversation"
ANSWERS = 3 * MASTERY_WINDOW


@pytest.fixture
def practised_client(client, lessons, clock):
    template = PracticeTemplate.objects.get(slug=SLUG)
    for seed in range(1, ANSWERS + 1):
        typed = f"{template.problem(seed).answer * (1 if seed % 2 else 2)} GB"
        form = {"seed": seed, "answer": typed, "shown_at": time.time() - 3600}
        assert client.post(template.get_absolute_url(), form).status_code == 200
        clock.advance(hours=1)
    return client


@pytest.fixture
def rows_built() -> Iterator[Counter[str]]:
    """How many rows of each model a request turns into objects."""
    built: Counter[str] = Counter()

    def count(sender, **kwargs) -> None:
        built[sender.__name__] += 1

    post_init.connect(count)
    yield built
    post_init.disconnect(count)


def second_visit(client, path: str, rows_built: Counter[str]) -> str:
    """The page on a second visit: what is kept for every learner is built on the first."""
    client.get(path)
    rows_built.clear()
    return client.get(path).content.decode()


def test_progress_counts_every_attempt_from_a_window_of_rows(practised_client, rows_built):
    page = second_visit(practised_client, "/progress/", rows_built)
    row = page.split('id="practice-table"')[1].split("05 · KV cache and context length")[1]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row.split("</tr>")[0])
    assert cells[1:3] == [str(ANSWERS), "50%"]  # attempts, right first time: every other one
    assert PracticeAttempt.objects.count() == ANSWERS
    # Mastery's window of the lesson's last attempts, not all of them; their templates not at all.
    assert rows_built["PracticeAttempt"] <= MASTERY_WINDOW
    assert rows_built["PracticeTemplate"] == 0


def test_review_builds_no_template_of_the_learners(practised_client, rows_built, clock):
    clock.advance(days=365)
    page = second_visit(practised_client, "/review/", rows_built)
    assert "1 practice problem due now" in page and "Practice, new numbers · Lesson 05" in page
    assert rows_built["PracticeTemplate"] == 0
