"""Every page a student reads describes itself to search engines and link previews."""

import re

import pytest

from tests.conftest import SEED_CARD_URL

pytestmark = pytest.mark.django_db
DESCRIPTION = re.compile(r'<meta name="description" content="([^"]+)">')


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/", "question cards"),
        ("/learn/llm-inference-performance/concurrency-sweep/", "Lesson 03 of LLM inference performance"),
        (SEED_CARD_URL, "Lesson 03, Step 1 · Concurrency sweep: When 8 people used the practice server"),
        ("/sim/", "practice server simulated"),
        ("/progress/", "Your progress"),
        ("/review/", "due for review"),
    ],
)
def test_pages_have_a_meta_description(client, lessons, url, expected):
    found = DESCRIPTION.search(client.get(url).content.decode())
    assert found and expected in found[1]
    assert "<" not in found[1]  # the card's question, without its HTML


def test_the_home_page_says_where_the_other_lessons_are(client, lessons):
    body = client.get("/").content.decode()
    assert "The course has 19 lessons, 00 to 18; each is listed here once its cards are written." in body
