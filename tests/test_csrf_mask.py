"""The pages' CSRF tokens (serving/csrf.py): masked afresh on every page from one OS draw, and
accepted by Django's CsrfViewMiddleware as its own."""

import re
from collections import Counter

import pytest
from django.middleware.csrf import CSRF_ALLOWED_CHARS
from django.test import Client

from quiz.models import Showing
from serving import csrf as serving_csrf
from serving.csrf import random_characters
from tests.conftest import PASSWORD, SEED_CARD_URL

SHOW_URL = SEED_CARD_URL + "show/"
FORM_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([A-Za-z0-9]{64})"')


def page_token(client: Client) -> str:
    return FORM_TOKEN.search(client.get(SEED_CARD_URL).content.decode()).group(1)


@pytest.mark.django_db
def test_a_pages_masked_token_is_accepted_and_a_changed_one_refused(seed_card):
    client = Client(enforce_csrf_checks=True)
    client.get(SEED_CARD_URL)  # the first visit draws the secret and sets its cookie
    first, second = page_token(client), page_token(client)
    secret = client.cookies["csrftoken"].value
    assert first != second and secret not in (first, second)  # a new mask for every page
    assert client.post(SHOW_URL, {"answer": "a", "csrfmiddlewaretoken": first}).status_code == 302
    assert client.post(SHOW_URL, {"answer": "b", "csrfmiddlewaretoken": second}).status_code == 302
    flipped = second[:40] + ("A" if second[40] != "A" else "B") + second[41:]
    assert client.post(SHOW_URL, {"answer": "c", "csrfmiddlewaretoken": flipped}).status_code == 403
    assert [showing.answer for showing in Showing.objects.order_by("id")] == ["a", "b"]


@pytest.mark.django_db
def test_the_first_page_a_visitor_opens_carries_a_token_for_its_new_cookie(seed_card):
    client = Client(enforce_csrf_checks=True)
    token = page_token(client)  # no cookie yet: Django draws the secret on this very page
    assert "csrftoken" in client.cookies
    assert client.post(SHOW_URL, {"answer": "a", "csrfmiddlewaretoken": token}).status_code == 302


def test_the_mask_draws_every_character_alike():
    drawn = Counter(random_characters(62 * 2_000))
    assert set(drawn) == set(CSRF_ALLOWED_CHARS)
    # 2,000 expected each, one standard deviation about 44: a biased draw (byte % 62 over all
    # 256 bytes) would give the first eight characters about 2,420 each.
    assert all(1_750 < count < 2_250 for count in drawn.values()), drawn.most_common(3)


@pytest.mark.django_db
def test_a_page_without_a_form_sets_no_csrf_cookie_and_one_page_shows_one_token(seed_card, student_client):
    anonymous = Client()
    assert "csrftoken" not in anonymous.get("/glossary/").cookies  # no form: no token drawn
    # Signed in, the card's forms (the header's Log out, the answer box) carry the same token.
    page = student_client.get(SEED_CARD_URL).content.decode()
    tokens = FORM_TOKEN.findall(page)
    assert len(tokens) >= 2 and len(set(tokens)) == 1


YEAR_S = 31_449_600  # Django's CSRF_COOKIE_AGE


@pytest.mark.django_db
def test_a_cookie_the_visitor_holds_is_renewed_once_an_hour_not_on_every_page(seed_card, monkeypatch):
    now = [1_000_000.0]
    monkeypatch.setattr(serving_csrf, "clock", lambda: now[0])
    client = Client(enforce_csrf_checks=True)
    first = client.get(SEED_CARD_URL)
    assert "csrftoken" in first.cookies  # a first visit: set at once
    secret = client.cookies["csrftoken"].value
    renewed = client.get(SEED_CARD_URL)
    assert renewed.cookies["csrftoken"]["max-age"] == YEAR_S  # the first page this process saw it on
    now[0] += serving_csrf.RENEW_EVERY_S - 1
    within_the_hour = client.get(SEED_CARD_URL)
    assert "csrftoken" not in within_the_hour.cookies
    assert "Cookie" in within_the_hour["Vary"]  # the page still varies with the cookie
    token = FORM_TOKEN.search(within_the_hour.content.decode()).group(1)
    assert client.post(SHOW_URL, {"answer": "a", "csrfmiddlewaretoken": token}).status_code == 302
    now[0] += 2
    after_the_hour = client.get(SEED_CARD_URL)
    assert after_the_hour.cookies["csrftoken"].value == secret
    assert after_the_hour.cookies["csrftoken"]["max-age"] == YEAR_S


@pytest.mark.django_db
def test_a_log_in_sets_its_new_secret_at_once(seed_card, student):
    client = Client(enforce_csrf_checks=True)
    client.get("/accounts/login/")
    client.get("/accounts/login/")  # the cookie held and renewed: the next pages leave it be
    before = client.cookies["csrftoken"].value
    login_page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login_page.content.decode()).group(1)
    response = client.post(
        "/accounts/login/", {"username": "sam", "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302
    assert response.cookies["csrftoken"].value not in ("", before)  # Django rotates it at log in
    after_login = page_token(client)
    assert client.post(SHOW_URL, {"answer": "b", "csrfmiddlewaretoken": after_login}).status_code == 302
