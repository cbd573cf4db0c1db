"""accounts/sessions.py and accounts/session_users.py (issue 23): production's database sessions
read the signed-in user in the same query as the session row, and every check Django makes of a
session's user still holds: logged out, expired, password changed, deactivated, deleted, the
Instructors flag as fresh as the group, and a remembered pk that is wrong changes nothing."""

import gc
import weakref
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
from accounts.backends import InstructorFlagBackend
from accounts.instructors import INSTRUCTOR_FLAG, is_instructor

pytestmark = pytest.mark.django_db

PAGE = "/"  # the header's Log out form: the page reads the user


@pytest.fixture(autouse=True)
def database_sessions(settings, monkeypatch):
    settings.SESSION_ENGINE = "accounts.sessions"  # production without Redis
    monkeypatch.setattr(accounts.sessions, "_session_users", OrderedDict())
    monkeypatch.setattr(accounts.sessions, "_snapshots", OrderedDict())


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    client.get(PAGE)  # the first read: this process learns whose the session is
    return client


def session_key(client: Client) -> str:
    return client.cookies["sessionid"].value


def queries_of_a_page(client: Client) -> tuple[list[str], object]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(PAGE)
    assert response.status_code == 200
    return [entry["sql"] for entry in captured.captured_queries], response


def test_the_session_and_its_user_are_read_in_one_query(student):
    client = signed_in(student)

    queries, response = queries_of_a_page(client)

    assert b"Log out" in response.content
    user_reads = [sql for sql in queries if '"auth_user"' in sql]
    session_reads = [sql for sql in queries if '"django_session"' in sql]
    assert len(user_reads) == 1 and user_reads == session_reads, queries
    assert response.wsgi_request.user == student
    assert not hasattr(response.wsgi_request.user, "felab_session_data")  # the row's data taken off


def test_the_first_read_of_a_session_in_a_process_takes_two_queries_and_is_right(student):
    client = Client()
    client.force_login(student)

    queries, response = queries_of_a_page(client)

    assert response.wsgi_request.user == student
    assert len([sql for sql in queries if '"auth_user"' in sql or '"django_session"' in sql]) == 2


def test_a_session_logged_out_elsewhere_is_anonymous_on_the_next_page(student):
    client = signed_in(student)
    Session.objects.filter(session_key=session_key(client)).delete()

    _, response = queries_of_a_page(client)

    assert not response.wsgi_request.user.is_authenticated
    assert b"Log out" not in response.content


def test_an_expired_session_is_anonymous(student):
    client = signed_in(student)
    Session.objects.filter(session_key=session_key(client)).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )

    _, response = queries_of_a_page(client)

    assert not response.wsgi_request.user.is_authenticated


def test_a_password_changed_elsewhere_ends_the_session(student):
    client = signed_in(student)
    student.set_password("a-new-and-different-pass-phrase")
    student.save()

    _, response = queries_of_a_page(client)

    assert not response.wsgi_request.user.is_authenticated
    assert not Session.objects.filter(session_key=session_key(client)).exists()  # Django flushed it


def test_a_deactivated_user_is_anonymous(student):
    client = signed_in(student)
    User.objects.filter(pk=student.pk).update(is_active=False)

    _, response = queries_of_a_page(client)

    assert not response.wsgi_request.user.is_authenticated


def test_a_deleted_user_is_anonymous(student):
    client = signed_in(student)
    User.objects.filter(pk=student.pk).delete()

    _, response = queries_of_a_page(client)

    assert not response.wsgi_request.user.is_authenticated


def test_the_instructor_flag_is_as_fresh_as_the_group(student, instructors_group):
    client = signed_in(student)
    _, response = queries_of_a_page(client)
    assert not is_instructor(response.wsgi_request.user)

    student.groups.add(instructors_group)
    _, response = queries_of_a_page(client)
    assert is_instructor(response.wsgi_request.user)
    assert b">Instructor</a>" in response.content

    student.groups.remove(instructors_group)
    _, response = queries_of_a_page(client)
    assert not is_instructor(response.wsgi_request.user)


def test_a_wrongly_remembered_pk_still_gives_the_sessions_own_user(student, other_student):
    client = signed_in(student)
    accounts.sessions._session_users[session_key(client)] = other_student.pk  # a guess gone wrong

    queries, response = queries_of_a_page(client)

    assert response.wsgi_request.user == student
    assert accounts.sessions._session_users[session_key(client)] == student.pk  # corrected
    assert len([sql for sql in queries if '"auth_user"' in sql]) == 2  # the guess's row, then the user's


def test_the_row_is_given_only_inside_the_requests_own_user_lookup(student):
    store = accounts.sessions.SessionStore(session_key(signed_in(student)))
    store.load()
    assert store.user_read_with_session is not None and store.user_read_with_session.pk == student.pk

    with CaptureQueriesContext(connection) as captured:
        user = InstructorFlagBackend().get_user(student.pk)  # no request's session on offer

    assert user == student and len(captured) == 1
    assert getattr(user, INSTRUCTOR_FLAG) is False


def test_sessions_without_a_user_are_read_as_django_reads_them(student):
    client = Client()
    store = accounts.sessions.SessionStore()
    store["n"] = 3
    store.save()
    client.cookies["sessionid"] = store.session_key

    _, response = queries_of_a_page(client)

    assert not response.wsgi_request.user.is_authenticated
    assert accounts.sessions.SessionStore(store.session_key)["n"] == 3
    assert store.session_key not in accounts.sessions._session_users
    assert SESSION_KEY not in accounts.sessions.SessionStore(store.session_key)


def test_the_remembered_session_hash_is_djangos_and_follows_the_password(student, settings):
    user = InstructorFlagBackend().get_user(student.pk)
    assert user.get_session_auth_hash() == User.get_session_auth_hash(user)

    user.set_password("a-new-and-different-pass-phrase")  # as the password change page does
    assert user.get_session_auth_hash() == User.get_session_auth_hash(user) != student.get_session_auth_hash()

    settings.SECRET_KEY = "another-secret-key-" + "y" * 40
    assert user.get_session_auth_hash() == User.get_session_auth_hash(user)


def test_the_request_user_is_freed_when_its_last_reference_goes(student):
    """The remembered hash holds its user weakly: no cycle left to the garbage collector."""
    gc.disable()
    try:
        user = InstructorFlagBackend().get_user(student.pk)
        freed = weakref.ref(user)
        del user
        assert freed() is None
    finally:
        gc.enable()
