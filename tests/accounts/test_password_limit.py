"""One limit on every form that checks a password, per client address and per account tried.

/admin/login/ had none: 30 wrong passwords from one address in 8 s were 30 × 200, then the
right one logged in.
"""

import pytest
from django.test import Client
from django.urls import reverse

from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

LOGIN_FORMS = ["/accounts/login/", "/admin/login/"]


@pytest.fixture(autouse=True)
def ten_a_minute(settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (10, 60)}


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.mark.parametrize("form", LOGIN_FORMS)
def test_after_ten_wrong_passwords_even_the_right_one_is_refused(client, instructor, form):
    wrong = {"username": instructor.username, "password": "guess"}
    assert [client.post(form, wrong).status_code for _ in range(10)] == [200] * 10
    right = client.post(form, {"username": instructor.username, "password": PASSWORD})
    assert right.status_code == 429 and 1 <= int(right["Retry-After"]) <= 60
    assert not signed_in(client)
    assert client.get(form).status_code == 200  # the form itself stays readable


def test_both_log_in_forms_share_one_count(client, instructor):
    wrong = {"username": instructor.username, "password": "guess"}
    statuses = [client.post(LOGIN_FORMS[attempt % 2], wrong).status_code for attempt in range(12)]
    assert statuses == [200] * 10 + [429] * 2


def test_one_account_tried_from_many_addresses_is_limited(client, instructor):
    wrong = {"username": instructor.username, "password": "guess"}
    statuses = [
        client.post(LOGIN_FORMS[n % 2], wrong, REMOTE_ADDR=f"198.51.100.{n}").status_code for n in range(11)
    ]
    assert statuses == [200] * 10 + [429]
    # The account's spelling does not matter; another account from a new address is untouched.
    shouted = {"username": f"  {instructor.username.upper()} ", "password": PASSWORD}
    assert client.post("/admin/login/", shouted, REMOTE_ADDR="198.51.100.200").status_code == 429
    other = {"username": "someone-else", "password": "guess"}
    assert client.post("/accounts/login/", other, REMOTE_ADDR="198.51.100.201").status_code == 200


def test_many_accounts_tried_from_one_address_are_limited(client, db):
    statuses = [
        client.post(LOGIN_FORMS[n % 2], {"username": f"user{n}", "password": "guess"}).status_code
        for n in range(11)
    ]
    assert statuses == [200] * 10 + [429]


def test_the_right_password_under_the_limit_logs_in_to_the_admin(client, instructor):
    response = client.post("/admin/login/", {"username": instructor.username, "password": PASSWORD})
    assert response.status_code == 302 and signed_in(client)


def test_the_admins_own_log_in_link_reaches_the_limited_form(client, db):
    assert reverse("admin:login") == "/admin/login/"
    assert client.get("/admin/")["Location"].startswith("/admin/login/")


def test_sign_ups_and_log_ins_from_one_address_share_its_count(client, db):
    sign_up = {"username": "x", "password1": "short", "password2": "other"}
    statuses = [client.post("/accounts/signup/", sign_up).status_code for _ in range(5)]
    statuses += [
        client.post("/accounts/login/", {"username": f"u{n}", "password": "y"}).status_code for n in range(5)
    ]
    assert statuses == [200] * 10
    assert client.post("/admin/login/", {"username": "z", "password": "y"}).status_code == 429


@pytest.mark.parametrize("form", LOGIN_FORMS)
def test_a_look_alike_spelling_of_the_account_counts_as_the_account(client, django_user_model, form):
    """Django looks the typed username up after NFKC normalisation: `ｆrank` (a full-width f)
    logs in as `frank`, so it must spend frank's count."""
    django_user_model.objects.create_user("frank", "frank@example.org", PASSWORD, is_staff=True)
    wrong = {"username": "frank", "password": "guess"}
    statuses = [client.post(form, wrong, REMOTE_ADDR=f"198.51.100.{n}").status_code for n in range(10)]
    assert statuses == [200] * 10
    look_alike = {"username": "\uff46rank", "password": PASSWORD}
    assert client.post(form, look_alike, REMOTE_ADDR="198.51.100.99").status_code == 429
    assert not signed_in(client)


def test_a_look_alike_spelling_logs_in_as_the_account_under_the_limit(client, django_user_model):
    django_user_model.objects.create_user("frank", "frank@example.org", PASSWORD)
    look_alike = {"username": "\uff46rank", "password": PASSWORD}
    assert client.post("/accounts/login/", look_alike).status_code == 302 and signed_in(client)
