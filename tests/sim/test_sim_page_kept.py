"""/sim/ with default settings is kept whole per content version (issue 23): each visitor gets
what a full render gives them, and the run queue and measured runs show as soon as they change."""

import re

import pytest
from django.db import connection
from django.shortcuts import render
from django.test import Client
from django.test.utils import CaptureQueriesContext

from felab_sim.models import Run
from felab_sim.pages.sim_views import _sim_context
from tests.textutil import without_csrf_tokens

pytestmark = pytest.mark.django_db


def full_render(client: Client) -> tuple[str, str]:
    response = client.get("/sim/")
    request = response.wsgi_request
    expected = render(request, "felab_sim/sim.html", _sim_context(request)[0]).content.decode()
    return without_csrf_tokens(response.content.decode()), without_csrf_tokens(expected)


@pytest.mark.parametrize("visitor", ["anonymous", "student", "instructor"])
def test_each_visitor_gets_the_page_a_full_render_gives(visitor, client, student_client, instructor_client):
    Client().get("/sim/")  # the kept page is built for someone else first
    browser = {"anonymous": client, "student": student_client, "instructor": instructor_client}[visitor]

    kept, expected = full_render(browser)

    assert kept == expected
    assert ("Start a real sweep" in kept) is (visitor != "anonymous")
    assert ('href="/instructor/"' in kept) is (visitor == "instructor")


def test_a_run_queued_or_measured_shows_on_the_next_page(client, student):
    assert "waiting for a worker" not in client.get("/sim/").content.decode()

    Run.objects.create(server_url="http://127.0.0.1:8001/v1", params={"levels": [1]}, started_by=student)
    assert "1 run waiting for a worker" in client.get("/sim/").content.decode()

    done = Run.objects.get()
    done.state, done.capacity = Run.State.DONE, 8
    done.save()
    page = client.get("/sim/").content.decode()
    assert "waiting for a worker" not in page
    assert f"Run {done.pk}</a>" in page and f'href="/sim/?run={done.pk}"' in page


def run_queries(client: Client, path: str = "/sim/") -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    return [query["sql"] for query in captured if "felab_sim_run" in query["sql"]]


def test_the_queue_is_read_once_while_no_run_changes(student_client, student):
    Run.objects.create(server_url="http://127.0.0.1:8001/v1", params={"levels": [1]}, started_by=student)
    assert len(run_queries(student_client)) == 1  # the status and the list, built together once
    assert run_queries(student_client) == []
    assert run_queries(Client()) == []  # another visitor reads what the first one's request kept
    # Another address keeps its own list (its links carry the address), and reads it once.
    assert len(run_queries(student_client, "/sim/?levels=1,2")) == 1
    assert run_queries(student_client, "/sim/?levels=1,2") == []


def test_every_kind_of_write_to_a_run_shows_on_the_next_page(client, student, other_student):
    run = Run.objects.create(
        server_url="http://127.0.0.1:8001/v1", params={"levels": [1]}, started_by=student
    )
    assert "1 run waiting for a worker" in client.get("/sim/").content.decode()

    # A worker takes its turn with a bulk update, which sends no signal.
    assert run.take_turn("worker-1")
    assert "A sweep is running" in client.get("/sim/").content.decode()

    Run.objects.filter(pk=run.pk).update(state=Run.State.DONE, capacity=4)
    page = client.get("/sim/").content.decode()
    assert "A sweep is running" not in page and f"Run {run.pk}</a>" in page and "capacity 4" in page

    Run.objects.bulk_create(
        [Run(server_url="http://127.0.0.1:8001/v1", params={"levels": [2]}, started_by=other_student)]
    )
    assert "1 run waiting for a worker" in client.get("/sim/").content.decode()

    # Deleting an account deletes its runs (a cascade, one signal each).
    other_student.delete()
    assert "waiting for a worker" not in client.get("/sim/").content.decode()
    Run.objects.filter(pk=run.pk).delete()
    assert f"Run {run.pk}</a>" not in client.get("/sim/").content.decode()


def test_the_queue_is_read_again_once_a_write_commits(student, django_capture_on_commit_callbacks):
    # A request that read the token between the write and its commit kept what the database held
    # before: the commit's own new token drops it.
    client = Client()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        Run.objects.create(server_url="http://127.0.0.1:8001/v1", params={"levels": [1]}, started_by=student)
        assert len(run_queries(client)) == 1
        assert run_queries(client) == []
    for callback in callbacks:
        callback()
    assert len(run_queries(client)) == 1


def test_an_anonymous_visitor_is_asked_to_log_in_and_comes_back_to_sim(client):
    page = client.get("/sim/").content.decode()

    assert '<a href="/accounts/login/?next=/sim/">Log in</a> to run a real sweep.' in page
    assert "csrfmiddlewaretoken" not in page.split('id="real-sweep"')[1]


def test_each_signed_in_page_carries_its_own_token_in_the_start_form(student_client):
    forms = [
        page.split('class="run-form"')[1].split("</form>")[0]
        for page in (student_client.get("/sim/").content.decode() for _ in range(2))
    ]

    tokens = [re.search(r'name="csrfmiddlewaretoken" value="(\w+)"', form).group(1) for form in forms]
    assert len(set(tokens)) == 2  # masked afresh on each page, as {% csrf_token %} does
    assert forms[0].replace(tokens[0], "") == forms[1].replace(tokens[1], "")


@pytest.mark.parametrize("address", ["/sim/?", "/sim/?&"])
def test_an_empty_query_string_is_the_default_page(student_client, address):
    # Signed in: an anonymous visitor's Log in link comes back to the address as it was typed.
    default = without_csrf_tokens(student_client.get("/sim/").content.decode())

    assert without_csrf_tokens(student_client.get(address).content.decode()) == default
