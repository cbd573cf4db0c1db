"""The glossary is kept whole per content version (issue 23): each visitor gets what a full
render gives them, an edit shows at once, drafts' cards only to instructors, and a search is
the asker's alone."""

import pytest
from django.shortcuts import render
from django.test import Client

from lessons.models import Card, GlossaryTerm
from lessons.views import _glossary_context
from tests.textutil import without_csrf_tokens

pytestmark = pytest.mark.django_db
GLOSSARY = "/glossary/"


@pytest.mark.parametrize("visitor", ["anonymous", "student", "instructor"])
def test_each_visitor_gets_the_page_a_full_render_gives(
    visitor, lessons, client, student_client, instructor_client
):
    Client().get(GLOSSARY)  # kept for someone else first
    browser = {"anonymous": client, "student": student_client, "instructor": instructor_client}[visitor]

    response = browser.get(GLOSSARY)

    request = response.wsgi_request
    drafts = visitor == "instructor"
    expected = render(request, "lessons/glossary.html", _glossary_context("", drafts=drafts)).content.decode()
    assert without_csrf_tokens(response.content.decode()) == without_csrf_tokens(expected)


def test_an_edited_definition_shows_at_once(lessons, client):
    term = GlossaryTerm.objects.order_by("term").first()
    client.get(GLOSSARY)
    term.definition = "A definition written a moment ago."
    term.save()
    assert "A definition written a moment ago." in client.get(GLOSSARY).content.decode()


def test_a_drafts_card_is_listed_for_instructors_only(lessons, client, instructor_client):
    card = Card.objects.filter(card_terms__isnull=False).order_by("pk").first()
    Card.objects.filter(pk=card.pk).update(published=False)
    link = f'href="{card.get_absolute_url()}"'
    instructor_client.get(GLOSSARY)

    assert link not in client.get(GLOSSARY).content.decode()
    assert link in instructor_client.get(GLOSSARY).content.decode()


def test_a_search_is_not_kept_for_others(lessons, client):
    term = GlossaryTerm.objects.order_by("term").first()
    searched = client.get(GLOSSARY, {"q": term.term}).content.decode()
    everything = Client().get(GLOSSARY).content.decode()
    assert len(everything) > len(searched)
