"""Opening "Go deeper" is counted once per showing, quietly, and only for the learner's own showing."""

import pytest

from quiz.models import LayerOpening, Showing
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import OPENED_URL, show

pytestmark = pytest.mark.django_db


def open_deeper(client, **extra):
    return client.post(OPENED_URL, {"layer": "deeper", **extra}, headers={"HX-Request": "true"})


def test_details_element_posts_its_opening_with_htmx(client, seed_card):
    show(client)
    showing = Showing.objects.get()
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert f'hx-post="{OPENED_URL}" hx-trigger="toggle once" hx-swap="none"' in body
    assert f'"layer": "deeper", "showing": "{showing.pk}"' in body


def test_opening_is_recorded_once_per_showing(client, seed_card):
    show(client)
    showing = Showing.objects.get()
    assert open_deeper(client, showing=showing.pk).status_code == 204
    assert open_deeper(client, showing=showing.pk).status_code == 204
    opening = LayerOpening.objects.get()
    assert (opening.showing, opening.layer) == (showing, "deeper")


def test_opening_from_a_plain_link_page_starts_a_showing(student_client, student, seed_card):
    assert open_deeper(student_client).status_code == 204
    assert LayerOpening.objects.get().showing.user == student


def test_unknown_layer_is_a_clear_400(client, seed_card):
    response = client.post(OPENED_URL, {"layer": "everything"})
    assert response.status_code == 400 and "layer must be one of deeper" in response.content.decode()
    assert not LayerOpening.objects.exists()


def test_another_students_showing_is_404(student_client, other_student_client, seed_card):
    show(student_client)
    showing = Showing.objects.get()
    assert open_deeper(other_student_client, showing=showing.pk).status_code == 404
    assert not LayerOpening.objects.exists()


def test_get_is_not_allowed(client, seed_card):
    assert client.get(OPENED_URL).status_code == 405
