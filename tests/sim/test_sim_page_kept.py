"""/sim/ with default settings is kept whole per content version (issue 23): each visitor gets
what a full render gives them, and the run queue and measured runs show as soon as they change."""

import pytest
from django.shortcuts import render
from django.test import Client

from felab_sim.models import Run
from felab_sim.views import _sim_context
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
