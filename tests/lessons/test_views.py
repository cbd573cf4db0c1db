import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.models import Card
from tests.conftest import SEED_CARD_URL
from tests.textutil import seed_squashed, squash, text_of

pytestmark = pytest.mark.django_db


def test_home_lists_courses_lessons_and_steps(client, lessons):
    response = client.get("/")
    body = response.content.decode()
    assert response.status_code == 200
    assert "LLM inference performance" in body
    assert "Lesson 03 · Concurrency sweep" in body
    assert f'href="{SEED_CARD_URL}"' in body


def test_home_without_content_says_how_to_load_it(client):
    assert "import_lessons" in client.get("/").content.decode()


def test_lesson_page_lists_its_cards(client, seed_card):
    response = client.get("/learn/llm-inference-performance/concurrency-sweep/")
    assert response.status_code == 200
    assert "Step 1 · Concurrency sweep" in response.content.decode()


@pytest.mark.parametrize(
    "url",
    [
        "/learn/llm-inference-performance/nope/",
        "/learn/nope/concurrency-sweep/step-1/",
        "/learn/llm-inference-performance/concurrency-sweep/step-99/",
    ],
)
def test_unknown_lesson_or_step_is_404(client, lessons, url):
    assert client.get(url).status_code == 404


def test_card_hides_the_answer_until_asked(client, seed_card):
    body = client.get(SEED_CARD_URL).content.decode()
    assert "Why does sharing cost so little?" in body
    assert 'aria-expanded="false"' in body and ">Show answer<" in body
    assert "In plain words" not in body and "How did you do?" not in body


def test_card_with_answer_shown_is_the_seed_word_for_word_in_order(client, seed_card):
    response = client.get(SEED_CARD_URL, {"answer": "shown"})
    body = response.content.decode()
    assert 'aria-expanded="true"' in body and ">Hide answer<" in body
    card_text = squash(text_of(body, "card")).replace("Hideanswer", "", 1)
    assert card_text.startswith(seed_squashed())


def test_card_sections_come_in_the_card_order(client, seed_card):
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    headings = [
        "Step 1 · Concurrency sweep",
        "Hide answer",
        "In plain words",
        "Picture it",
        "With real numbers",
        "lesson 03’s practice server",
        "1 person alone",
        "Words to know",
        '#term-decode">Decode</a></dt>',
        "Go deeper: the engineer version",
        "The kit's question",
        "The kit's answer",
        "More detail:",
        "How did you do?",
    ]
    positions = [body.index(h) for h in headings]
    assert positions == sorted(positions)
    assert "<details" in body


def test_htmx_toggle_gets_only_the_answer_partial(client, seed_card):
    response = client.get(SEED_CARD_URL, {"answer": "shown"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="answer"')
    assert "<html" not in body and "In plain words" in body
    assert "HX-Request" in response["Vary"]
    hidden = client.get(SEED_CARD_URL, headers={"HX-Request": "true"}).content.decode()
    assert ">Show answer<" in hidden and "In plain words" not in hidden


def test_full_page_also_varies_on_hx_request(client, seed_card):
    assert "HX-Request" in client.get(SEED_CARD_URL)["Vary"]


def test_previous_and_next_links(client, seed_card):
    base = "/learn/llm-inference-performance/concurrency-sweep/"
    Card.objects.create(lesson=seed_card.lesson, step=5, title="Later", question="Q", plain_words="A")
    first = client.get(SEED_CARD_URL).content.decode()
    assert f'rel="next" href="{base}step-2/"' in first
    assert 'rel="prev"' not in first
    third = client.get(f"{base}step-3/").content.decode()
    assert f'rel="prev" href="{base}step-2/"' in third and f'rel="next" href="{base}step-5/"' in third
    last = client.get(f"{base}step-5/").content.decode()
    assert f'rel="prev" href="{base}step-3/"' in last and f'rel="next" href="{base}step-' not in last


def test_script_in_card_text_never_reaches_the_page(client, seed_card):
    seed_card.plain_words = (
        'Fine.<script>window.pwned=1</script><a href="javascript:alert(1)" onclick="x()">l</a>'
    )
    seed_card.save()
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert "window.pwned" not in body and "javascript:alert" not in body and 'onclick="x()"' not in body


def test_card_page_query_count_does_not_grow_with_glossary(client, seed_card, django_assert_max_num_queries):
    with CaptureQueriesContext(connection) as queries:
        client.get(SEED_CARD_URL, {"answer": "shown"})
    with django_assert_max_num_queries(len(queries)):
        client.get(SEED_CARD_URL, {"answer": "shown"})
    assert len(queries) <= 6, [q["sql"] for q in queries]
