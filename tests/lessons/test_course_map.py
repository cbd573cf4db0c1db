"""The course map (home), the lesson page and the glossary, with the whole bundled course loaded.

Query counts are compared before and after the course grows by ten lessons of six cards that
cite calculators, sweep scenarios and glossary terms: they must not move.
"""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from felab_sim.models import ParameterSet, Scenario
from lessons.models import Card, CardNumber, CardTerm, Course, GlossaryTerm, Lesson
from tests.conftest import SEED_CARD_URL
from tests.quiz.clocks import MovableClock

pytestmark = pytest.mark.django_db

COURSE = "llm-inference-performance"
FIRST_CARD_URL = f"/learn/{COURSE}/setup-and-guardrails/step-1/"
KV_LESSON_URL = f"/learn/{COURSE}/kv-cache/"


def queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(captured.captured_queries)


def grow_the_course(lessons: int = 10, cards: int = 6) -> None:
    """More of everything a page might query per item: lessons, cards, citations, live numbers, terms."""
    course = Course.objects.get(slug=COURSE)
    calc_set = ParameterSet.objects.order_by("slug").first()
    scenario = Scenario.objects.order_by("slug").first()
    terms = list(GlossaryTerm.objects.order_by("term")[:3])
    for offset in range(lessons):
        number = 50 + offset
        lesson = Lesson.objects.create(
            course=course, number=number, order=number, slug=f"extra-{number}", title=f"Extra {number}",
            intro="More to learn.", minutes=10,
        )  # fmt: skip
        for step in range(1, cards + 1):
            cited = f"{{{{calc.{calc_set.slug}.{_first_output(calc_set)}}}}}"
            card = Card.objects.create(
                lesson=lesson, step=step, title=f"Card {step}", question=f"How much is {cited}?",
                plain_words=f"It is {cited}.", scenario=scenario if step == 1 else None,
            )  # fmt: skip
            CardNumber.objects.create(
                card=card, order=1, label="It", live=f"calc.{calc_set.slug}.{_first_output(calc_set)}"
            )
            CardTerm.objects.bulk_create(
                CardTerm(card=card, term=term, order=i) for i, term in enumerate(terms)
            )


def _first_output(parameter_set: ParameterSet) -> str:
    return next(iter(parameter_set.result().outputs))


@pytest.mark.parametrize(
    "url",
    ["/", "/glossary/", KV_LESSON_URL, f"/learn/{COURSE}/concurrency-sweep/", FIRST_CARD_URL, SEED_CARD_URL],
)
def test_query_counts_do_not_grow_with_the_course(client, lessons, url):
    client.get(url)  # warm the per-process caches (sweeps, calculator results)
    before = queries(client, url)
    grow_the_course()
    client.get(url)
    assert queries(client, url) == before


def test_a_students_home_page_costs_the_same_however_far_they_are(student_client, lessons):
    student_client.get("/")
    fresh = queries(student_client, "/")
    for card in Card.objects.filter(lesson__slug__in=["setup-and-guardrails", "kv-cache"]):
        student_client.post(card.get_absolute_url() + "show/", {"answer": ""})
        student_client.post(card.get_absolute_url() + "rate/", {"rating": 3})
    grow_the_course()
    student_client.get("/")  # the course changed: the first visit fetches it again
    assert queries(student_client, "/") == fresh


def test_home_maps_every_lesson_in_order_with_intro_and_minutes(client, lessons):
    body = client.get("/").content.decode()
    titles = re.findall(r"Lesson (\d\d) · ", body)
    numbers = [int(n) for n in dict.fromkeys(titles)]
    assert numbers == sorted(numbers) and numbers[0] == 0
    for lesson in Lesson.objects.exclude(intro="").exclude(minutes=None):
        assert f"About {lesson.minutes} min" in body
        assert lesson.intro_html.split(".")[0] in body


def test_a_first_visit_starts_at_the_first_card(client, lessons):
    body = client.get("/").content.decode()
    assert f'href="{FIRST_CARD_URL}">Start: Lesson 00 · Step 1' in body


def test_continue_here_is_the_first_card_not_yet_rated(client, lessons):
    client.post(FIRST_CARD_URL + "show/", {"answer": "bandwidth"})
    client.post(FIRST_CARD_URL + "rate/", {"rating": 3})
    body = client.get("/").content.decode()
    assert f'href="/learn/{COURSE}/setup-and-guardrails/step-2/">Continue: Lesson 00 · Step 2' in body
    assert "1 seen · 1 rated" in body
    lesson_00 = body[body.index('id="lesson-setup-and-guardrails"') :]
    assert "Continue here" in lesson_00[: lesson_00.index("</li>")]


def test_a_due_card_comes_before_new_ones(client, lessons, monkeypatch):
    clock = MovableClock(monkeypatch)
    client.post(FIRST_CARD_URL + "show/", {"answer": ""})
    client.post(FIRST_CARD_URL + "rate/", {"rating": 1})  # Missed it: due again within minutes
    clock.advance(days=2)
    body = client.get("/").content.decode()
    assert f'href="{FIRST_CARD_URL}?review=1">Review: Lesson 00 · Step 1' in body
    assert "1 card due for review" in body


def test_every_card_rated_says_so(client, lessons, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "learner-write": (0, 60)}  # every card in a second
    for card in Card.objects.all():
        client.post(card.get_absolute_url() + "show/", {"answer": ""})
        client.post(card.get_absolute_url() + "rate/", {"rating": 4})
    body = client.get("/").content.decode()
    assert "You have rated every card and nothing is due" in body


def test_glossary_lists_every_term_with_the_cards_that_use_it(client, lessons):
    body = client.get("/glossary/").content.decode()
    for term in GlossaryTerm.objects.all():
        assert f'id="{term.anchor}"' in body
    kv = GlossaryTerm.objects.get(term="KV cache")
    entry = body[body.index(f'id="{kv.anchor}"') :]
    entry = entry[: entry.index("</dd>")]
    for card in kv.cards.all():
        assert f'href="{card.get_absolute_url()}"' in entry


def test_words_to_know_on_a_card_link_to_the_glossary(client, lessons):
    body = client.get(FIRST_CARD_URL, {"answer": "shown"}).content.decode()
    assert 'href="/glossary/#term-memory-bandwidth">Memory bandwidth</a>' in body


def test_lesson_page_shows_its_intro_and_links_its_calculators(client, lessons):
    body = client.get(KV_LESSON_URL).content.decode()
    lesson = Lesson.objects.get(slug="kv-cache")
    assert lesson.intro_html.split(".")[0] in body
    assert "Try it" in body and 'href="/sim/calc/kv-cache/?' in body
    sweep = client.get(f"/learn/{COURSE}/concurrency-sweep/").content.decode()
    assert 'href="/sim/?' in sweep


def test_a_lesson_citing_several_calculators_links_each_once(client, lessons):
    body = client.get(f"/learn/{COURSE}/setup-and-guardrails/").content.decode()
    links = re.findall(r'href="/sim/calc/([a-z-]+)/', body)
    assert sorted(links) == ["decode-ceiling", "sizing"]


def test_glossary_has_an_a_to_z_index_of_its_letters(client, lessons):
    body = client.get("/glossary/").content.decode()
    index = body[
        body.index('<nav class="az-index"') : body.index("</nav>", body.index('<nav class="az-index"'))
    ]
    letters = sorted({term.term[0].upper() for term in GlossaryTerm.objects.all()})
    assert re.findall(r'<a href="#letter-([a-z])">', index) == [letter.lower() for letter in letters]
    for letter in letters:
        assert f'<section class="glossary-letter" id="letter-{letter.lower()}"' in body
    # Letters no term starts with are shown, not linked.
    assert '<span class="az-empty" title="No term under X">X</span>' in index
    kv = GlossaryTerm.objects.get(term="KV cache")
    section_k = body[body.index('id="letter-k"') : body.index('id="letter-l"')]
    assert f'id="{kv.anchor}"' in section_k


def test_glossary_search_without_javascript_keeps_the_terms_that_mention_the_words(client, lessons):
    body = client.get("/glossary/", {"q": "kv CACHE"}).content.decode()
    kept = set(re.findall(r'<div class="glossary-entry" id="([^"]+)"', body))
    expected = {
        term.anchor
        for term in GlossaryTerm.objects.all()
        if "kv cache" in f"{term.term} {term.definition} {term.example}".casefold()
    }
    assert kept == expected and GlossaryTerm.objects.get(term="KV cache").anchor in kept
    assert len(kept) < GlossaryTerm.objects.count()
    assert f"{len(kept)} terms</span> mentioning “kv CACHE”" in body
    assert 'value="kv CACHE"' in body and 'href="/glossary/">show all</a>' in body


def test_glossary_search_with_no_match_says_so(client, lessons):
    body = client.get("/glossary/", {"q": "<zzz>"}).content.decode()
    assert '<div class="glossary-entry"' not in body
    assert "No term mentions “&lt;zzz&gt;”" in body and "<zzz>" not in body


def test_the_longest_overdue_card_comes_first_and_a_tie_goes_to_the_first_in_the_course(
    client, lessons, monkeypatch
):
    clock = MovableClock(monkeypatch)
    later_card = f"/learn/{COURSE}/concurrency-sweep/step-2/"
    for card in (later_card, FIRST_CARD_URL):  # at the same instant: both due at the same moment
        client.post(card + "show/", {"answer": ""})
        client.post(card + "rate/", {"rating": 1})
    clock.advance(days=2)
    body = client.get("/").content.decode()
    assert f'href="{FIRST_CARD_URL}?review=1">Review: Lesson 00 · Step 1' in body
    assert "2 cards due for review" in body

    # Rated again now, lesson 00's card is due later than lesson 03's, which goes first.
    client.post(FIRST_CARD_URL + "show/", {"answer": ""})
    client.post(FIRST_CARD_URL + "rate/", {"rating": 1})
    clock.advance(days=2)
    body = client.get("/").content.decode()
    assert f'href="{later_card}?review=1">Review: Lesson 03 · Step 2' in body
