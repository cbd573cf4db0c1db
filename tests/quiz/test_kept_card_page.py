"""The card page is kept whole per content version, and only its per-visitor parts are rendered
on each request (pagecache/kept_pages.py, issue 14): every visitor must still get exactly the page
a full render gives them, and nobody any part of another visitor's page."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.shortcuts import render
from django.template import TemplateSyntaxError
from django.test import Client, RequestFactory, override_settings

from lessons.models import Card
from lessons.views import card_context, card_template
from pagecache.kept_pages import VisitorDataOutsidePart, render_kept
from quiz.models import Rating
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import rate, show
from tests.textutil import without_csrf_tokens

pytestmark = pytest.mark.django_db


def full_render(response: HttpResponse, card: Card, *, answer_shown: bool, review_mode: bool) -> str:
    """What Django's own render() makes of the card page for the request that got `response`."""
    request = response.wsgi_request
    context = card_context(request, card, answer_shown=answer_shown, review_mode=review_mode)
    return render(request, card_template(request), context).content.decode()


def signed_in_student_who_rated(student_client: Client) -> Client:
    show(student_client, "More users share each step\nso the total rises <b>a lot</b>")
    rate(student_client, Rating.HARD)
    return student_client


def anonymous_visitor_who_typed(client: Client) -> Client:
    show(client, "Throughput goes up & latency too")
    return client


VISITORS = {
    "first-time visitor": lambda client, student_client, instructor_client: client,
    "anonymous visitor who typed an answer": lambda client, *_: anonymous_visitor_who_typed(client),
    "student who rated": lambda client, student_client, *_: signed_in_student_who_rated(student_client),
    "instructor": lambda client, student_client, instructor_client: instructor_client,
}
PAGES = {
    "answer shown": ({"answer": "shown"}, {}),
    "answer hidden": ({}, {}),
    "answer hidden again, the typed answer back in its box": ({"answer": "hidden"}, {}),
    "htmx hiding it again": ({"answer": "hidden"}, {"HX-Request": "true"}),
    "in review": ({"answer": "shown", "review": "1"}, {}),
    "htmx answer region": ({"answer": "shown"}, {"HX-Request": "true"}),
}


@pytest.mark.parametrize("visitor", VISITORS)
@pytest.mark.parametrize("page", PAGES)
def test_each_visitor_gets_the_page_a_full_render_gives(
    visitor, page, clock, client, student_client, instructor_client, seed_card
):
    someone_else = Client()
    anonymous_visitor_who_typed(someone_else)
    query, headers = PAGES[page]
    someone_else.get(SEED_CARD_URL, query, headers=headers)  # the kept page is built for them
    browser = VISITORS[visitor](client, student_client, instructor_client)

    response = browser.get(SEED_CARD_URL, query, headers=headers)

    assert response.status_code == 200
    expected = full_render(
        response,
        seed_card,
        answer_shown=query.get("answer") == "shown",
        review_mode="review" in query,
    )
    assert without_csrf_tokens(response.content.decode()) == without_csrf_tokens(expected)


def test_nothing_of_one_visitor_reaches_another(
    clock, client, student_client, other_student_client, seed_card
):
    show(student_client, "my-own-words-7731")
    rate(student_client, Rating.EASY)
    mine = student_client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert "my-own-words-7731" in mine and "You rated it <strong>Easy</strong>" in mine

    hidden_again = student_client.get(SEED_CARD_URL, {"answer": "hidden"}).content.decode()
    assert "my-own-words-7731</textarea>" in hidden_again

    for stranger in (client, other_student_client):
        assert "my-own-words-7731" not in stranger.get(SEED_CARD_URL, {"answer": "hidden"}).content.decode()
        theirs = stranger.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
        assert "my-own-words-7731" not in theirs
        assert "You rated it" not in theirs
        assert 'name="showing" id="rating-showing" value=""' in theirs
    assert "Log out" not in client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert "Log out" in other_student_client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert student_client.cookies["csrftoken"].value != other_student_client.cookies["csrftoken"].value


LEAKY = {
    "leaky.html": "{% load content_fragments %}<p>{% per_visitor %}{{ user }}{% endper_visitor %}</p><p>Hi {{ user }}</p>",
    "eaten.html": "{% load content_fragments %}{% filter upper %}{% per_visitor %}x{% endper_visitor %}{% endfilter %}",
    "fine.html": "{% load content_fragments %}<p>{{ title }}</p><p>{% per_visitor %}{% if user.is_authenticated %}in{% else %}out{% endif %}{% endper_visitor %}</p>",
    "arguments.html": "{% load content_fragments %}{% per_visitor user %}{% endper_visitor %}",
    "draw.html": "{% load content_fragments %}<p>{{ title }}</p><p>{% per_visitor %}{{ draw.seed }}{% endper_visitor %}</p>",
    "leaky-draw.html": "{% load content_fragments %}<p>{{ draw.seed }}</p>",
}
LOCMEM_TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "OPTIONS": {
            "loaders": [("django.template.loaders.locmem.Loader", LEAKY)],
            "context_processors": ["django.contrib.auth.context_processors.auth"],
        },
    }
]


@override_settings(TEMPLATES=LOCMEM_TEMPLATES)
def test_a_template_that_reads_the_visitor_outside_a_part_is_refused(rf: RequestFactory, student):
    request = rf.get("/")
    request.user = student
    with pytest.raises(VisitorDataOutsidePart, match="'user' is used outside"):
        render_kept(request, "leaky.html", dict, ("leaky",))
    with pytest.raises(ValueError, match="1 per_visitor parts but 0 marks"):
        render_kept(request, "eaten.html", dict, ("eaten",))
    with pytest.raises(TemplateSyntaxError, match="per_visitor takes no arguments"):
        render_kept(request, "arguments.html", dict, ("arguments",))
    assert (
        render_kept(request, "fine.html", lambda: {"title": "T"}, ("fine",)).content == b"<p>T</p><p>in</p>"
    )
    request.user = AnonymousUser()
    assert (
        render_kept(request, "fine.html", lambda: {"title": "T"}, ("fine",)).content == b"<p>T</p><p>out</p>"
    )


@override_settings(TEMPLATES=LOCMEM_TEMPLATES)
def test_a_pages_own_per_request_values_reach_its_parts_only(rf: RequestFactory):
    request = rf.get("/")
    request.user = AnonymousUser()
    for seed in (3, 4):
        page = render_kept(request, "draw.html", lambda: {"title": "T"}, ("draw",), {"draw": {"seed": seed}})
        assert page.content == f"<p>T</p><p>{seed}</p>".encode()
    with pytest.raises(VisitorDataOutsidePart, match="'draw' is used outside"):
        render_kept(request, "leaky-draw.html", dict, ("leaky-draw",), {"draw": {"seed": 1}})


def test_a_rated_card_says_where_to_go_next_in_the_lesson_and_in_review(student_client, seed_card):
    show(student_client, "shared steps")
    rate(student_client, Rating.GOT_IT)
    following = seed_card.following

    in_lesson = student_client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert "You rated it <strong>Got it</strong> this time" in in_lesson
    assert f'href="{following.get_absolute_url()}" rel="next">Next: {following.label} →</a>' in in_lesson
    assert "Next due card" not in in_lesson

    in_review = student_client.get(SEED_CARD_URL, {"answer": "shown", "review": "1"}).content.decode()
    assert "You rated it <strong>Got it</strong> this time" in in_review
    assert '<a class="button button-primary next-step" href="/review/next/">Next due card →</a>' in in_review
    assert f"Next: {following.label}" not in in_review
