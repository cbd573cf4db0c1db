import pytest
from django.db import IntegrityError

from lessons.markdown import live_number_markup_problems, live_numbers_in_markup
from lessons.models import Card, CardTerm, Course, GlossaryTerm, Lesson


@pytest.fixture
def lesson(db) -> Lesson:
    course = Course.objects.create(slug="c", title="Course")
    return Lesson.objects.create(course=course, number=3, title="Concurrency sweep", slug="concurrency-sweep")


def test_card_renders_markdown_on_save(lesson):
    card = Card.objects.create(
        lesson=lesson, step=1, title="T", question="Why **so** cheap?", plain_words="- a\n- b"
    )
    assert card.rendered["question"] == "<p>Why <strong>so</strong> cheap?</p>"
    assert "<li>a</li>" in card.html["plain_words"]


def test_rendering_strips_scripts_handlers_and_javascript_links(lesson):
    card = Card.objects.create(
        lesson=lesson,
        step=1,
        title="T",
        question='Hi <script>alert(1)</script><img src=x onerror="alert(2)"> [x](javascript:alert(3))',
        plain_words='<iframe src="https://evil.example"></iframe><svg onload="alert(4)"></svg>ok',
    )
    html = card.rendered["question"] + card.rendered["plain_words"]
    for payload in ("<script", "alert(1)", "onerror", "javascript:", "<iframe", "<svg", "onload"):
        assert payload not in html
    assert "ok" in html


def test_label_and_url(lesson):
    card = Card.objects.create(lesson=lesson, step=2, title="Sizing", question="Q", plain_words="A")
    # The lesson's only published card: students see Step 1; its address keeps its step.
    assert card.label == "Step 1 · Sizing"
    assert card.get_absolute_url() == "/learn/c/concurrency-sweep/step-2/"
    Card.objects.create(lesson=lesson, step=1, title="Before", question="Q", plain_words="A")
    assert Card.objects.get(pk=card.pk).label == "Step 2 · Sizing"
    Card.objects.filter(pk=card.pk).update(published=False)
    assert Card.objects.get(pk=card.pk).label == "Draft · Sizing"
    assert card.natural_key() == ("c", "concurrency-sweep", 2)


def test_step_is_unique_within_a_lesson(lesson):
    Card.objects.create(lesson=lesson, step=1, title="A", question="Q", plain_words="A")
    with pytest.raises(IntegrityError):
        Card.objects.create(lesson=lesson, step=1, title="B", question="Q", plain_words="A")


def test_glossary_terms_are_reused_and_ordered_per_card(lesson):
    first = Card.objects.create(lesson=lesson, step=1, title="A", question="Q", plain_words="A")
    second = Card.objects.create(lesson=lesson, step=2, title="B", question="Q", plain_words="A")
    decode = GlossaryTerm.objects.create(term="Decode", definition="The writing phase.")
    batching = GlossaryTerm.objects.create(term="Batching", definition="Sharing a pass.", example="8 people.")
    CardTerm.objects.create(card=first, term=batching, order=1)
    CardTerm.objects.create(card=first, term=decode, order=2)
    CardTerm.objects.create(card=second, term=decode, order=1)
    assert [t.term for t in Card.objects.for_page().get(pk=first.pk).ordered_terms()] == [
        "Batching",
        "Decode",
    ]
    assert decode.cards.count() == 2
    assert batching.rendered["example"] == "<p>8 people.</p>"


@pytest.mark.parametrize(
    "text",
    [
        "See [the number]({{sim.c8.agg_tok_s}}).",
        "See [the number](https://example.org/{{ sim.c8.agg_tok_s }}).",
        '<abbr title="{{sim.c8.agg_tok_s}} tok/s">total</abbr>',
        '<a href="https://example.org/?q={{calc.l04-set.ceiling_tok_s}}">x</a>',
    ],
)
def test_a_live_number_inside_a_link_or_an_attribute_is_found(text):
    assert live_numbers_in_markup(text)
    assert "put it in the text instead" in live_number_markup_problems(text)[0]


@pytest.mark.parametrize(
    "text",
    [
        "Total {{sim.c8.agg_tok_s}} tok/s.",
        "[{{sim.c8.agg_tok_s}} tok/s](https://example.org/) and `{{sim.c1.agg_tok_s}}`",
        "**{{sim.c8.agg_tok_s}}**",
    ],
)
def test_a_live_number_in_the_text_is_fine(text):
    assert live_numbers_in_markup(text) == []
