"""accounts/sessions.py's snapshots (issue 23): a worker keeps what the joined statement read for a
session while the ``accounts`` token holds, and every change that could make it wrong redraws
the token, so it reaches the next page: a log out, a password change, an account deactivated or
deleted, the Instructors group joined, left or renamed, the session's data saved. Bulk writes,
which send no signal, reach a page once the snapshot is SNAPSHOT_MAX_AGE_S old."""

import dataclasses
from collections import OrderedDict
from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

import accounts.sessions
from accounts.instructors import is_instructor
from tests.limits import SteppedClock

pytestmark = pytest.mark.django_db

PAGE = "/"  # the header's Log out form: the page reads the user


@pytest.fixture
def clock(monkeypatch) -> SteppedClock:
    moved = SteppedClock()
    monkeypatch.setattr(accounts.sessions, "clock", moved)
    return moved


@pytest.fixture(autouse=True)
def database_sessions(settings, monkeypatch, clock):
    settings.SESSION_ENGINE = "accounts.sessions"  # production without Redis
    monkeypatch.setattr(accounts.sessions, "_session_users", OrderedDict())
    monkeypatch.setattr(accounts.sessions, "_snapshots", OrderedDict())


def session_key(client: Client) -> str:
    return client.cookies["sessionid"].value


def kept_signed_in(user: User) -> Client:
    """Signed in, and the session read twice: the second read keeps a snapshot."""
    client = Client()
    client.force_login(user)
    client.get(PAGE)  # this process learns whose the session is
    client.get(PAGE)  # the joined read, kept
    assert session_key(client) in accounts.sessions._snapshots
    return client


def account_reads(client: Client):
    """The page's response and its statements that read the session row or the user."""
    with CaptureQueriesContext(connection) as captured:
        response = client.get(PAGE)
    assert response.status_code == 200
    sql = [entry["sql"] for entry in captured.captured_queries]
    return response, [text for text in sql if '"auth_user"' in text or '"django_session"' in text]


def signed_out(client: Client) -> bool:
    response, _ = account_reads(client)
    return not response.wsgi_request.user.is_authenticated and b"Log out" not in response.content


def test_a_kept_session_is_read_with_no_statement_and_gives_each_request_its_own_user(student):
    client = kept_signed_in(student)

    first, reads = account_reads(client)
    second, _ = account_reads(client)

    assert reads == []
    assert b"Log out" in first.content
    assert first.wsgi_request.user == second.wsgi_request.user == student
    assert first.wsgi_request.user is not second.wsgi_request.user
    assert first.wsgi_request.user.password == student.password
    assert first.wsgi_request.session[SESSION_KEY] == str(student.pk)
    assert not is_instructor(first.wsgi_request.user)


def test_logging_out_ends_the_kept_session_at_once(student):
    client = kept_signed_in(student)
    accounts.sessions.SessionStore(session_key(client)).delete()  # as another worker's log out does

    assert signed_out(client)


def test_a_password_changed_elsewhere_ends_the_kept_session(student):
    client = kept_signed_in(student)
    student.set_password("a-new-and-different-pass-phrase")
    student.save()

    assert signed_out(client)
    assert not Session.objects.filter(session_key=session_key(client)).exists()  # Django flushed it


def test_an_account_deactivated_by_a_save_is_signed_out_at_once(student):
    client = kept_signed_in(student)
    student.is_active = False
    student.save()  # as the admin's user page saves it

    assert signed_out(client)


def test_a_deleted_account_is_signed_out_at_once(student):
    client = kept_signed_in(student)
    User.objects.filter(pk=student.pk).delete()

    assert signed_out(client)


def test_the_instructor_flag_follows_the_group_at_once(student, instructors_group):
    client = kept_signed_in(student)

    student.groups.add(instructors_group)
    response, _ = account_reads(client)
    assert is_instructor(response.wsgi_request.user)
    assert b">Instructor</a>" in response.content

    account_reads(client)  # kept again, as an instructor
    instructors_group.name = "Former instructors"
    instructors_group.save()
    response, _ = account_reads(client)
    assert not is_instructor(response.wsgi_request.user)


def test_a_bulk_update_waits_for_the_snapshots_age_or_accounts_changed(student, clock):
    client = kept_signed_in(student)
    User.objects.filter(pk=student.pk).update(is_active=False)  # no signal: the token stays

    response, _ = account_reads(client)
    assert response.wsgi_request.user.is_authenticated

    clock.advance(accounts.sessions.SNAPSHOT_MAX_AGE_S)
    assert signed_out(client)

    other = Client()
    other.force_login(student)  # force_login does not check is_active
    other.get(PAGE)
    User.objects.filter(pk=student.pk).update(is_active=True)
    accounts.sessions.accounts_changed()
    response, _ = account_reads(other)
    assert response.wsgi_request.user == student


def test_a_session_past_its_expiry_is_not_served_from_its_snapshot(student):
    client = kept_signed_in(student)
    key = session_key(client)
    snapshot = accounts.sessions._snapshots[key]
    past = timezone.now() - timedelta(seconds=1)
    Session.objects.filter(session_key=key).update(expire_date=past)
    accounts.sessions._snapshots[key] = dataclasses.replace(snapshot, expire_date=past)

    assert signed_out(client)


def test_saving_a_sessions_data_redraws_the_token_and_a_new_sessions_first_save_does_not(student):
    client = kept_signed_in(student)
    before = accounts.sessions.ACCOUNTS.read()

    fresh = accounts.sessions.SessionStore()
    fresh["n"] = 1
    fresh.save()
    assert accounts.sessions.ACCOUNTS.read() == before
    _, reads = account_reads(client)
    assert reads == []  # still kept

    store = accounts.sessions.SessionStore(session_key(client))
    store["n"] = 2
    store.save()
    assert accounts.sessions.ACCOUNTS.read() != before
    response, reads = account_reads(client)
    assert len(reads) == 1 and response.wsgi_request.session["n"] == 2


def test_what_a_request_sets_on_its_user_is_not_seen_by_the_next(student):
    client = kept_signed_in(student)
    response, _ = account_reads(client)
    response.wsgi_request.user.first_name = "Changed in memory only"

    response, _ = account_reads(client)
    assert response.wsgi_request.user.first_name == student.first_name


def test_the_snapshots_are_bounded(student, monkeypatch):
    monkeypatch.setattr(accounts.sessions, "SNAPSHOTS_KEPT", 2)
    clients = [kept_signed_in(student) for _ in range(3)]

    assert list(accounts.sessions._snapshots) == [session_key(client) for client in clients[1:]]


def test_logging_out_without_a_session_draws_no_token(student):
    client = kept_signed_in(student)
    before = accounts.sessions.ACCOUNTS.read()

    Client().post("/accounts/logout/")  # a visitor with no session: nothing is deleted

    assert accounts.sessions.ACCOUNTS.read() == before
    _, reads = account_reads(client)
    assert reads == []
