"""No page a student studies on asks its templates for a value that is not there.

Django's template engine catches the exception a missing key or attribute raises (a query
parameter the address lacks, an attribute of None), calls dir() on the object and logs it at
DEBUG, then prints nothing: correct output, paid for on every request of a hot page. What a kept
page's once-per-version build reads is left out."""

import logging

import pytest

from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import rate, show

pytestmark = pytest.mark.django_db

LESSON_URL = SEED_CARD_URL.rsplit("step-", 1)[0]
PAGES = [
    SEED_CARD_URL,
    SEED_CARD_URL + "?answer=shown",
    SEED_CARD_URL + "?answer=hidden",
    SEED_CARD_URL + "?answer=shown&review=1",
    LESSON_URL,
    "/",
    "/progress/",
    "/review/",
    "/glossary/",
    "/sim/",
    "/sim/calc/prefill/",
]


@pytest.mark.parametrize("visitor", ["anonymous", "student"])
def test_the_study_pages_resolve_every_variable_they_print(
    visitor, client, student_client, seed_card, caplog
):
    browser = student_client if visitor == "student" else client
    show(browser, "shared steps")
    rate(browser, 3)
    for url in PAGES:  # the pages kept for everyone are built: once per content version, not per request
        browser.get(url)
    with caplog.at_level(logging.DEBUG, logger="django.template"):
        for url in PAGES:
            assert browser.get(url).status_code == 200, url
    failures = [record.getMessage() for record in caplog.records if record.name == "django.template"]
    assert failures == []
