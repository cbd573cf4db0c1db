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


def test_the_home_page_lists_every_lesson_in_order(client, lessons):
    body = client.get("/").content.decode()
    positions = [body.find(f"Lesson {number:02d}") for number in range(19)]
    assert -1 not in positions and positions == sorted(positions)


def test_a_question_with_quotes_and_ampersands_gives_a_well_formed_description(client, seed_card):
    # Stripping the question's tags is not escaping it: a double quote left as it is would end
    # the content attribute early.
    seed_card.question = 'Is "time to first token" the same as latency & throughput? <b>No</b>.'
    seed_card.save()
    page = client.get(SEED_CARD_URL).content.decode()
    found = re.search(r'<meta name="description" content="([^"]*)">', page)
    assert found, "the description's attribute is cut short"
    assert found[1].endswith("Is &quot;time to first token&quot; the same as latency &amp; throughput? No.")
