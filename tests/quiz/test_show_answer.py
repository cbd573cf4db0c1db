"""Show answer stores what the student typed, then shows the answer with it."""

import pytest
from django.test import Client

from quiz.models import Showing
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import SHOW_URL, anonymous_learner, show
from tests.textutil import text_of

pytestmark = pytest.mark.django_db


def typed_answer_on_page(client: Client) -> str:
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    return " ".join(text_of(body, "typed-answer").split())


def test_question_has_an_optional_answer_box_before_the_reveal(client, seed_card):
    body = client.get(SEED_CARD_URL).content.decode()
    assert '<textarea id="your-answer" name="answer"' in body
    assert "Your answer" in body and "(optional)" in body
    assert f'<form class="answer-form" method="post" action="{SHOW_URL}"' in body
    assert body.index("your-answer") < body.index('id="answer-toggle"')


def test_anonymous_show_answer_stores_the_answer_against_the_session(client, seed_card):
    response = client.post(SHOW_URL, {"answer": "The weights are fetched once for everyone."})
    assert response.status_code == 302
    assert response["Location"] == SEED_CARD_URL + "?answer=shown"
    showing = Showing.objects.get()
    assert showing.user is None and showing.card == seed_card
    assert showing.anonymous_id == anonymous_learner(client).anonymous_id
    assert showing.answer == "The weights are fetched once for everyone."


def test_the_typed_answer_comes_back_beside_in_plain_words(client, seed_card):
    show(client, "Sharing the memory fetch.")
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    plain = text_of(body, "layer-plain")
    assert "In plain words" in plain and "Your answer" in plain and "Sharing the memory fetch." in plain
    assert plain.index("In plain words") < plain.index("Sharing the memory fetch.")
    assert body.index("Sharing the memory fetch.") < body.index('id="picture-it"')


def test_signed_in_show_answer_records_the_account(student_client, student, seed_card):
    show(student_client, "batching")
    showing = Showing.objects.get()
    assert showing.user == student and showing.anonymous_id == ""
    assert typed_answer_on_page(student_client) == "Your answer batching"


def test_nobody_sees_another_students_typed_answer(student_client, other_student_client, client, seed_card):
    show(student_client, "sam's private guess")
    for someone_else in (other_student_client, client):
        body = someone_else.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
        assert "sam's private guess" not in body and "sam&#x27;s private guess" not in body


def test_typed_answer_is_escaped(client, seed_card):
    show(client, '<script>alert("x")</script>\nsecond line')
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert '<script>alert("x")</script>' not in body
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<br>second line" in body


def test_an_empty_answer_box_shows_no_answer_block(client, seed_card):
    show(client, "   ")
    assert Showing.objects.get().answer == ""
    assert typed_answer_on_page(client) == ""


def test_htmx_show_answer_swaps_in_the_answer_and_pushes_a_shareable_url(client, seed_card):
    response = client.post(SHOW_URL, {"answer": "fetch once"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="answer"')
    assert "<html" not in body
    assert ">Hide answer<" in body and "In plain words" in body and "fetch once" in body
    assert response["HX-Push-Url"] == SEED_CARD_URL + "?answer=shown"
    assert "HX-Request" in response["Vary"]
    showing = Showing.objects.get()
    assert f'id="rating-showing" value="{showing.pk}"' in body


def test_review_mode_is_carried_through_show_answer(client, seed_card):
    response = client.post(SHOW_URL, {"answer": "", "review": "1"})
    assert response["Location"] == SEED_CARD_URL + "?answer=shown&review=1"
    body = client.get(response["Location"]).content.decode()
    assert 'name="review" value="1"' in body and "Reviewing the cards due now" in body


def test_plain_link_to_the_shown_answer_still_works_and_records_nothing(client, seed_card):
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert ">Hide answer<" in body and "In plain words" in body
    assert 'id="rating-showing" value=""' in body
    assert not Showing.objects.exists()


def test_show_answer_needs_a_csrf_token(seed_card):
    client = Client(enforce_csrf_checks=True)
    assert client.post(SHOW_URL, {"answer": "x"}).status_code == 403
    page = client.get(SEED_CARD_URL)
    token = page.cookies["csrftoken"].value
    assert client.post(SHOW_URL, {"answer": "x", "csrfmiddlewaretoken": token}).status_code == 302
    assert Showing.objects.get().answer == "x"


def test_show_answer_is_post_only_and_404s_for_unknown_cards(client, lessons):
    assert client.get(SHOW_URL).status_code == 405
    assert client.post(SHOW_URL.replace("step-1", "step-99")).status_code == 404


def test_nul_characters_in_the_answer_are_dropped_not_a_500(client, seed_card):
    # PostgreSQL refuses NUL in text; SQLite would store it. Either way it never reaches the row.
    response = client.post(SHOW_URL, {"answer": "memory\x00-bound"})
    assert response.status_code == 302
    assert Showing.objects.get().answer == "memory-bound"
