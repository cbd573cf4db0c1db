"""Change a password, reset a forgotten one by email, delete an account with all its records."""

import re
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client

from felab_sim.models import Run
from quiz.card_rating import rate_showing
from quiz.learners import Learner
from quiz.models import CardState, Layer, LayerOpening, LearnerProfile, Rating, Review, Showing
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-new-and-longer-passphrase-42"


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.described: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"])
        if values.get("aria-describedby"):
            self.described[values.get("name") or tag] = values["aria-describedby"].split()


def described_by(html: str) -> tuple[dict[str, list[str]], set[str]]:
    parser = _Ids()
    parser.feed(html)
    return parser.described, parser.ids


@pytest.mark.parametrize(
    "data",
    [None, {"username": "sam", "password1": "a", "password2": "b"}],
    ids=["empty form", "with errors"],
)
def test_sign_up_fields_are_described_by_ids_that_exist(client, student, data):
    response = client.post("/accounts/signup/", data) if data else client.get("/accounts/signup/")
    described, ids = described_by(response.content.decode())
    assert {"username", "password1", "password2", "share_name"} <= described.keys()
    missing = {name: [i for i in refs if i not in ids] for name, refs in described.items()}
    assert {name: refs for name, refs in missing.items() if refs} == {}


def test_sign_up_takes_an_optional_email_for_resets(client, db):
    client.post(
        "/accounts/signup/",
        {"username": "mo", "email": "mo@example.org", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert User.objects.get(username="mo").email == "mo@example.org"


def test_progress_links_the_account_pages_for_an_account_only(client, student_client):
    signed_in = student_client.get("/progress/").content.decode()
    assert 'href="/accounts/password/change/"' in signed_in and 'href="/accounts/delete/"' in signed_in
    anonymous = client.get("/progress/").content.decode()
    assert 'href="/accounts/delete/"' not in anonymous


def test_log_in_page_links_the_password_reset(client):
    assert 'href="/accounts/password/reset/"' in client.get("/accounts/login/").content.decode()


# Change


def test_a_student_changes_their_password_and_stays_signed_in(student_client, student):
    assert student_client.get("/accounts/password/change/").status_code == 200
    response = student_client.post(
        "/accounts/password/change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response["Location"] == "/accounts/password/change/done/"
    student.refresh_from_db()
    assert student.check_password(NEW_PASSWORD)
    assert "Password changed" in student_client.get(response["Location"]).content.decode()
    assert student_client.get("/accounts/password/change/").status_code == 200  # still signed in


def test_changing_needs_the_old_password(student_client, student):
    response = student_client.post(
        "/accounts/password/change/",
        {"old_password": "not-it", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 200 and 'class="field-error"' in response.content.decode()
    student.refresh_from_db()
    assert student.check_password(PASSWORD)


def test_changing_a_password_needs_an_account(client):
    assert client.get("/accounts/password/change/")["Location"].startswith("/accounts/login/")


# Email


def test_a_student_adds_the_address_reset_links_go_to_with_their_password(student_client, student):
    student.email = ""
    student.save()
    page = student_client.get("/progress/").content.decode()
    assert "Add an email address, to reset a forgotten password" in page
    wrong = student_client.post("/accounts/email/", {"email": "new@example.org", "password": "not-it"})
    assert wrong.status_code == 200 and "the address was not changed" in wrong.content.decode()
    student.refresh_from_db()
    assert student.email == ""
    response = student_client.post("/accounts/email/", {"email": "new@example.org", "password": PASSWORD})
    assert response["Location"] == "/progress/#your-account"
    student.refresh_from_db()
    assert student.email == "new@example.org"
    assert "Change your email address (new@example.org)" in student_client.get("/progress/").content.decode()


def test_changing_the_email_needs_an_account(client):
    assert client.get("/accounts/email/")["Location"].startswith("/accounts/login/")


# Reset


def _reset_link(message: mail.EmailMessage) -> str:
    match = re.search(r"https?://[^/\s]+(/accounts/password/reset/[^/\s]+/[^/\s]+/)", message.body)
    assert match, message.body
    return match.group(1)


def test_a_forgotten_password_is_reset_from_the_emailed_link(client, student):
    response = client.post("/accounts/password/reset/", {"email": "sam@example.org"})
    assert response["Location"] == "/accounts/password/reset/sent/"
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["sam@example.org"] and "felab" in message.subject

    form = client.get(_reset_link(message), follow=True)
    assert "Choose a new password" in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert done["Location"] == "/accounts/password/reset/done/"
    student.refresh_from_db()
    assert student.check_password(NEW_PASSWORD)

    # The link works once.
    again = client.get(_reset_link(message), follow=True).content.decode()
    assert "does not work any more" in again


def test_an_unknown_address_gets_the_same_answer_and_no_email(client, student):
    response = client.post("/accounts/password/reset/", {"email": "nobody@example.org"})
    assert response["Location"] == "/accounts/password/reset/sent/"
    assert mail.outbox == []


# Delete


def _records_of(user: User) -> dict[str, int]:
    return {
        "showings": Showing.objects.filter(user=user).count(),
        "reviews": Review.objects.filter(user=user).count(),
        "schedules": CardState.objects.filter(user=user).count(),
        "opened layers": LayerOpening.objects.filter(showing__user=user).count(),
        "profile": LearnerProfile.objects.filter(user=user).count(),
        "runs": Run.objects.filter(started_by=user).count(),
    }


def _study(user: User, card) -> None:
    showing = Showing.record(Learner(user=user), card, "my answer")
    rate_showing(showing, Rating.GOT_IT)
    LayerOpening.record(showing, Layer.DEEPER)
    LearnerProfile.objects.create(user=user, share_name=True)
    Run.objects.create(
        server_url="http://127.0.0.1:8001/v1", params={}, state=Run.State.DONE, started_by=user
    )


def test_deleting_an_account_deletes_every_record_of_it_and_nobody_elses(
    student_client, student, other_student, seed_card
):
    _study(student, seed_card)
    _study(other_student, seed_card)
    everything = {"showings": 1, "reviews": 1, "schedules": 1, "opened layers": 1, "profile": 1, "runs": 1}
    assert _records_of(student) == everything
    student_pk = student.pk

    page = student_client.get("/accounts/delete/").content.decode()
    assert "Delete your account" in page and 'name="password"' in page
    response = student_client.post("/accounts/delete/", {"password": PASSWORD})
    assert response["Location"] == "/"

    assert not User.objects.filter(pk=student_pk).exists()
    assert not Showing.objects.filter(user_id=student_pk).exists()
    assert not Review.objects.filter(user_id=student_pk).exists()
    assert not CardState.objects.filter(user_id=student_pk).exists()
    assert not LearnerProfile.objects.filter(user_id=student_pk).exists()
    assert not Run.objects.filter(started_by_id=student_pk).exists()
    # Nothing was left behind as ownerless rows either.
    assert (Showing.objects.count(), Review.objects.count(), LayerOpening.objects.count()) == (1, 1, 1)
    assert (CardState.objects.count(), Run.objects.count()) == (1, 1)
    assert _records_of(other_student) == everything
    assert "_auth_user_id" not in student_client.session
    home = student_client.get("/").content.decode()
    assert "everything recorded about it are deleted" in home


def test_a_wrong_password_deletes_nothing(student_client, student):
    response = student_client.post("/accounts/delete/", {"password": "not-it"})
    assert response.status_code == 200 and "nothing was deleted" in response.content.decode()
    assert User.objects.filter(pk=student.pk).exists()
    assert student_client.get("/accounts/delete/").status_code == 200  # still signed in


def test_deleting_needs_an_account(client):
    assert client.get("/accounts/delete/")["Location"].startswith("/accounts/login/")
    assert client.post("/accounts/delete/", {"password": PASSWORD})["Location"].startswith("/accounts/login/")


# Rate limits: every form that checks a password or sends a reset email shares the log-in's.


@pytest.mark.parametrize(
    ("path", "data"),
    [
        ("/accounts/password/change/", {"old_password": "x", "new_password1": "y", "new_password2": "y"}),
        ("/accounts/password/reset/", {"email": "sam@example.org"}),
        ("/accounts/password/reset/MQ/set-password/", {"new_password1": "y", "new_password2": "y"}),
        ("/accounts/delete/", {"password": "x"}),
        ("/accounts/email/", {"email": "x@example.org", "password": "x"}),
    ],
)
def test_account_forms_share_the_log_in_rate_limit(student_client, settings, path, data):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (2, 60)}
    codes = [student_client.post(path, data).status_code for _ in range(3)]
    assert codes[:2] != [429, 429] and codes[2] == 429
    assert student_client.get(path).status_code != 429  # the forms stay readable


def test_a_password_change_counts_with_log_ins_from_the_same_address(settings, student):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (2, 60)}
    browser = Client()
    browser.post("/accounts/login/", {"username": "sam", "password": "not-it"})
    browser.post("/accounts/login/", {"username": "sam", "password": "not-it"})
    browser.force_login(student)
    response = browser.post(
        "/accounts/password/change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 429
