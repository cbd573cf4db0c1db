"""serving/sessions: Django's database session engines with the row's SQL compiled once. A
session reads back as Django's own engine reads it, an expired or unknown one is not loaded,
and a signed-in page reads the session in one query (issue 23)."""

from collections import OrderedDict
from datetime import timedelta
from importlib import import_module

import pytest
from django.contrib.sessions.backends.base import SessionBase
from django.contrib.sessions.backends.db import SessionStore as DjangoStore
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

import serving.sessions

pytestmark = pytest.mark.django_db
ENGINES = ["serving.sessions.db", "serving.sessions.cached_db"]


@pytest.fixture(params=ENGINES)
def engine(request, settings) -> str:
    settings.SESSION_ENGINE = request.param
    return request.param


def saved_session(engine: str, data: dict) -> str:
    store = import_module(engine).SessionStore()
    store.update(data)
    store.save()
    cache.clear()  # cached_db: the database's row is what is read
    return store.session_key


def test_a_session_reads_back_as_djangos_engine_reads_it(engine):
    key = saved_session(engine, {"quiz_learner": "ab" * 16, "n": 3})

    mine = import_module(engine).SessionStore(key)

    assert dict(mine.items()) == dict(DjangoStore(key).items()) == {"quiz_learner": "ab" * 16, "n": 3}
    assert mine.session_key == key


def test_an_expired_session_is_not_loaded(engine):
    key = saved_session(engine, {"n": 1})
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))

    store = import_module(engine).SessionStore(key)

    assert dict(store.items()) == {}
    assert store.session_key is None  # a new key when it is saved: the old one is never reused


def test_an_unknown_key_is_an_empty_session(engine):
    store = import_module(engine).SessionStore("x" * 32)
    assert dict(store.items()) == {} and store.session_key is None


def test_a_signed_in_page_reads_its_session_in_one_query(settings, student, lessons):
    settings.SESSION_ENGINE = "serving.sessions.db"  # production without Redis
    client = Client()
    client.force_login(student)
    client.get("/review/")

    with CaptureQueriesContext(connection) as captured:
        response = client.get("/review/")

    assert b"Log out" in response.content
    session_reads = [entry["sql"] for entry in captured.captured_queries if "django_session" in entry["sql"]]
    assert len(session_reads) == 1, session_reads


def test_a_rows_signature_is_checked_once_and_each_read_gets_its_own_objects(engine, monkeypatch):
    # A row text verified by an earlier test (the same data signed in the same second) is a hit.
    monkeypatch.setattr(serving.sessions, "_verified", OrderedDict())
    full_decodes = []
    django_decode = SessionBase.decode
    monkeypatch.setattr(
        SessionBase, "decode", lambda self, data: full_decodes.append(data) or django_decode(self, data)
    )
    key = saved_session(engine, {"answers": ["a"], "n": 1})
    store_class = import_module(engine).SessionStore

    first = store_class(key)
    first["answers"].append("changed in place")  # a view mutating a nested value
    second = store_class(key)

    assert second["answers"] == ["a"] and second["n"] == 1
    assert len(full_decodes) == 1  # the second read of the same row text skipped the signature check


def test_a_tampered_row_still_reads_as_an_empty_session(engine):
    key = saved_session(engine, {"n": 1})
    row = Session.objects.get(session_key=key)
    import_module(engine).SessionStore(key).load()  # its genuine text is now remembered
    Session.objects.filter(session_key=key).update(session_data=row.session_data[:-2] + "xx")
    cache.clear()

    assert dict(import_module(engine).SessionStore(key).items()) == {}
