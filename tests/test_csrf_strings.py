"""CSRF secrets and masks come from one read of the OS's random source (serving/csrf_strings.py)."""

import os
from collections import Counter

from django.middleware import csrf
from django.test import Client, RequestFactory

from serving import csrf_strings


def test_django_draws_its_csrf_strings_with_one_os_read_each(monkeypatch):
    reads = []
    real_urandom = os.urandom
    monkeypatch.setattr(os, "urandom", lambda n: reads.append(n) or real_urandom(n))
    request = RequestFactory().get("/")

    token = csrf.get_token(request)  # a new secret, then the token's mask

    assert len(reads) <= 2 + 1  # one each; a third only if a read had too many unusable bytes
    assert len(token) == 2 * csrf.CSRF_SECRET_LENGTH
    assert csrf._unmask_cipher_token(token) == request.META["CSRF_COOKIE"]


def test_the_strings_are_of_djangos_alphabet_and_length_each_character_equally_likely():
    strings = [csrf_strings.new_csrf_string() for _ in range(4000)]

    assert {len(string) for string in strings} == {csrf.CSRF_SECRET_LENGTH}
    counts = Counter("".join(strings))
    assert set(counts) == set(csrf.CSRF_ALLOWED_CHARS)
    expected = 4000 * csrf.CSRF_SECRET_LENGTH / len(csrf.CSRF_ALLOWED_CHARS)  # about 2,065 each
    # Bytes taken modulo 62 without dropping the top 8 would give the first 8 characters 5/4 of
    # the others' share; each count stays within 10% of the mean (about 4.5 standard deviations).
    assert all(abs(count - expected) < 0.1 * expected for count in counts.values()), counts


def test_a_form_posted_with_the_pages_token_is_accepted(db):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/accounts/login/").content.decode()
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]

    response = client.post(
        "/accounts/login/", {"username": "nobody", "password": "x", "csrfmiddlewaretoken": token}
    )

    assert response.status_code == 200  # the form again with its error, not 403
