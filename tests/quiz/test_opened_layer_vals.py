"""What htmx posts when a learner opens "Go deeper" (hx-vals, lessons' opened_layer_vals tag)."""

import html
import json
import re

import pytest
from django.test import Client

from quiz.models import LayerOpening, Showing
from tests.conftest import SEED_CARD_URL

pytestmark = pytest.mark.django_db


def deeper_vals(client: Client) -> dict[str, str]:
    page = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    return json.loads(html.unescape(re.search(r"hx-vals='([^']*)'", page)[1]))


def test_the_opening_names_the_learners_showing_and_carries_a_token_that_posts(student, seed_card):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(student)
    assert deeper_vals(browser)["showing"] == ""  # the answer shown by its address: nothing recorded yet
    token = re.search(
        r'name="csrfmiddlewaretoken" value="([^"]+)"', browser.get(SEED_CARD_URL).content.decode()
    )[1]
    browser.post(SEED_CARD_URL + "show/", {"answer": "More share a step.", "csrfmiddlewaretoken": token})
    first = deeper_vals(browser)
    showing = Showing.objects.get()
    assert first["layer"] == "deeper" and first["showing"] == str(showing.pk)
    assert re.fullmatch(r"[A-Za-z0-9]{64}", first["csrfmiddlewaretoken"])

    assert browser.post(SEED_CARD_URL + "opened/", first).status_code == 204
    assert LayerOpening.objects.get().showing == showing
