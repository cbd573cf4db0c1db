"""SQL per page a studying student opens, signed in (issue 23), after the page has been kept
once: the card page's two queries (tests/quiz/test_card_page_queries.py) and these. Sessions come
from the cache here, as with Redis in production. Production without Redis reads the session row
and its user in one query (accounts/sessions.py), and none while the worker keeps them."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from quiz.models import Rating
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import rate, show

pytestmark = pytest.mark.django_db

LESSON_URL = SEED_CARD_URL.rsplit("step-1/", 1)[0]
# Page: (address, the queries it may make, what they are).
PAGES = {
    "home": (
        "/",
        5,
        "the session; the content version; the user; the learner's schedules; the cards they opened",
    ),
    "/review/": (
        "/review/",
        5,
        "the session; the content version; the user; the learner's card schedules; their practice schedules",
    ),
    "/progress/": (
        "/progress/",
        6,
        "the session; the content version; the user; schedules; sharing profile; practice attempts",
    ),
    "/glossary/": ("/glossary/", 3, "the session; the content version; the user"),
    "lesson page": (LESSON_URL, 3, "the session; the content version; the user"),
    "calculator page": ("/sim/calc/prefill/", 3, "the session; the content version; the user"),
    # The sweep's rate limit counts in the database here (in Redis when there is one).
    "/sim/": (
        "/sim/",
        6,
        "the session; the content version; the rate limit's count; the user; the run queue; the measured runs",
    ),
}


@pytest.mark.parametrize("page", PAGES)
def test_a_signed_in_page_costs_at_most_its_queries(page, clock, student_client, seed_card):
    url, bound, _ = PAGES[page]
    show(student_client, "More users share each step")
    rate(student_client, Rating.GOT_IT)
    student_client.get(url)  # kept once per process and content version

    with CaptureQueriesContext(connection) as captured:
        response = student_client.get(url)

    assert response.status_code == 200
    assert b"Log out" in response.content
    queries = [entry["sql"] for entry in captured.captured_queries]
    assert len(queries) <= bound, "\n".join(queries)
