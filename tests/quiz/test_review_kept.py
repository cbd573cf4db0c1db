"""/review/ is kept around each learner's list (issue 23): the page is the same for everyone but
the list, which is rendered for its learner on every request."""

import pytest
from django.test import Client

from pagecache.content_cache import CONTENT
from quiz.models import Rating
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import rate
from tests.textutil import page_without_csrf_tokens

pytestmark = pytest.mark.django_db


def page(client: Client) -> str:
    return page_without_csrf_tokens(client, "/review/")


def test_each_learner_sees_their_own_list(clock, seed_card, student_client, other_student):
    other = Client()
    other.force_login(other_student)
    assert student_client.post(SEED_CARD_URL + "show/", {"answer": "typed"}).status_code == 302
    assert rate(student_client, Rating.MISSED_IT).status_code == 200
    clock.advance(hours=2)
    pages = {"student": page(student_client), "other": page(other), "anonymous": page(Client())}
    assert 'class="due-list"' in pages["student"] and seed_card.label in pages["student"]
    for name in ("other", "anonymous"):
        assert "Nothing is due now" in pages[name] and 'class="due-list"' not in pages[name]
    CONTENT.changed()  # nothing kept: the same pages from a fresh render
    assert page(student_client) == pages["student"] and page(other) == pages["other"]
