"""/progress/export.json comes in pages of a bounded size, each naming the next: one learner's
thousands of attempts are never one response, and the pages together are all of them."""

import json
from datetime import timedelta

import pytest

from lessons.models import PracticeTemplate
from quiz import clock
from quiz.learner_export import EXPORT_PAGE_ROWS
from quiz.models import PracticeAttempt, Showing, Verdict

pytestmark = pytest.mark.django_db

ATTEMPTS = 1_330


def many_attempts(student, count: int) -> list[tuple[str, int]]:
    templates = list(PracticeTemplate.objects.order_by("pk"))
    start = clock.now() - timedelta(days=30)
    rows = [
        PracticeAttempt(
            template=templates[index % len(templates)], user=student, seed=index + 1, typed="1", value=1.0,
            expected=2.0, ratio=0.5, verdict=Verdict.OFF, proposed_rating=1, rating=1,
            answered_at=start + timedelta(minutes=index),
        )
        for index in range(count)
    ]  # fmt: skip
    PracticeAttempt.objects.bulk_create(rows)
    return [(row.template.slug, row.seed) for row in rows]


def all_pages(client) -> list[dict]:
    pages, url = [], "/progress/export.json"
    while url is not None:
        assert len(pages) < 100, "the next links never end"
        response = client.get(url)
        assert response.status_code == 200
        pages.append(json.loads(response.content))
        url = pages[-1]["next"]
    return pages


def test_thousands_of_attempts_come_in_bounded_pages_that_together_hold_them_all(
    student, student_client, lessons
):
    made = many_attempts(student, ATTEMPTS)
    pages = all_pages(student_client)
    assert all(len(page["practice_attempts"]) <= EXPORT_PAGE_ROWS for page in pages)
    assert len(pages) == -(-ATTEMPTS // EXPORT_PAGE_ROWS)
    exported = [(row["template"], row["seed"]) for page in pages for row in page["practice_attempts"]]
    assert exported == made  # every attempt once, oldest first
    assert [page["page"] for page in pages] == list(range(1, len(pages) + 1))


def test_every_list_is_paged_alike_and_nothing_is_left_out(student, student_client, seed_card):
    Showing.objects.bulk_create(
        Showing(
            card=seed_card,
            user=student,
            answer=f"answer {index}",
            shown_at=clock.now() + timedelta(seconds=index),
        )
        for index in range(EXPORT_PAGE_ROWS + 3)
    )
    pages = all_pages(student_client)
    assert [len(page["showings"]) for page in pages] == [EXPORT_PAGE_ROWS, 3]
    answers = [row["answer"] for page in pages for row in page["showings"]]
    assert answers == [f"answer {index}" for index in range(EXPORT_PAGE_ROWS + 3)]
    assert all(page["learner"]["account"] == "sam" for page in pages)


def test_a_small_export_is_one_page_with_no_next(student_client, db):
    [page] = all_pages(student_client)
    assert page["next"] is None and page["showings"] == []


@pytest.mark.parametrize("page", ["0", "-1", "abc", "1.5", "9" * 40, ""])
def test_a_page_that_is_no_whole_number_from_one_is_a_400(student_client, db, page):
    response = student_client.get("/progress/export.json", {"page": page})
    assert response.status_code == 400
    assert "page" in response.json()["error"]["message"]


def test_a_page_past_the_last_is_empty(student_client, db):
    data = student_client.get("/progress/export.json", {"page": "7"}).json()
    assert data["showings"] == [] and data["practice_attempts"] == [] and data["next"] is None
