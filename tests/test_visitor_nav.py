"""The header's links for each kind of visitor (accounts/templatetags/visitor_nav.py), on pages
kept for everyone and on pages rendered whole."""

import re

import pytest
from django.test import Client

from tests.conftest import SEED_CARD_URL

pytestmark = pytest.mark.django_db


def nav(client: Client, path: str) -> str:
    return re.search(r'<nav class="site-nav".*?</nav>', client.get(path).content.decode(), re.S)[0]


@pytest.mark.parametrize("path", [SEED_CARD_URL, "/sim/?levels=1,2", "/glossary/", "/"])
def test_each_visitor_sees_their_own_links_whoever_came_first(
    path, client, student_client, instructor_client, seed_card
):
    instructor, student, anonymous = (
        nav(instructor_client, path),
        nav(student_client, path),
        nav(client, path),
    )

    assert '<a href="/instructor/">Instructor</a> <a href="/admin/">Admin</a>' in instructor
    for links in (student, anonymous):
        assert "/instructor/" not in links and "/admin/" not in links
    for links in (instructor, student, anonymous):
        assert '<a href="/progress/">Progress</a>' in links and '<a href="/sim/">Simulator</a>' in links
    for links in (instructor, student):
        assert 'action="/accounts/logout/"' in links and "Log in" not in links
    assert "Log out" not in anonymous


def test_log_in_and_sign_up_come_back_to_the_page_but_not_from_the_account_pages(client, seed_card):
    card = nav(client, SEED_CARD_URL + "?answer=shown")
    assert f'href="/accounts/login/?next={SEED_CARD_URL}%3Fanswer%3Dshown">Log in</a>' in card
    assert f'href="/accounts/signup/?next={SEED_CARD_URL}%3Fanswer%3Dshown">Sign up</a>' in card
    for account_page in ("/accounts/login/", "/accounts/signup/"):
        links = nav(client, account_page)
        assert '<a href="/accounts/login/">Log in</a>' in links
        assert '<a class="nav-signup" href="/accounts/signup/">Sign up</a>' in links


def test_the_log_out_form_carries_a_token_that_logs_out(student, seed_card):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(student)
    token = re.search(r'name="csrfmiddlewaretoken" value="([A-Za-z0-9]{64})"', nav(browser, SEED_CARD_URL))[1]
    assert browser.post("/accounts/logout/", {"csrfmiddlewaretoken": token}).status_code == 302
    assert "Log in" in nav(browser, SEED_CARD_URL)
