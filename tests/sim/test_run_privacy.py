"""Who may see who started a real run: the owner, and instructors only when the student chose
to share their name (quiz's LearnerProfile.share_name). Nobody sees the practice server's
internal address."""

import re

import pytest
from django.test import Client

from felab_sim.models import Run, RunLevel
from quiz.models import LearnerProfile
from tests.sim.test_prefix_cache_runs import prefix_run

pytestmark = pytest.mark.django_db

INTERNAL_URL = "http://10.1.2.3:8001/v1"


def sweep_run(user) -> Run:
    run = Run.objects.create(
        server_url=INTERNAL_URL, params={"levels": [1, 8]}, started_by=user, state=Run.State.RUNNING
    )
    for conc in (1, 8):
        RunLevel.objects.create(run=run, conc=conc, requests=12 if conc == 1 else 24)
    return run


def pages(run: Run, client: Client) -> list[str]:
    """Every page that shows the run: a sweep's own page and its polled partial, or a
    prefix-cache run's calculator page and its polled partial."""
    full = client.get(run.get_absolute_url())
    partial = client.get(f"/sim/runs/{run.pk}/", headers={"HX-Request": "true"})
    assert full.status_code == partial.status_code == 200
    return [full.content.decode(), partial.content.decode()]


def viewer(name, student, other_student, instructor) -> Client:
    client = Client()
    if name == "instructor, name shared":
        LearnerProfile.objects.create(user=student, share_name=True)
    user = {
        "anonymous": None,
        "another student": other_student,
        "the owner": student,
        "instructor": instructor,
        "instructor, name shared": instructor,
    }[name]
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize("kind", ["sweep", "prefix-cache"])
@pytest.mark.parametrize(
    ("who", "shown"),
    [
        ("anonymous", None),
        ("another student", None),
        ("the owner", "by you"),
        ("instructor", "by a student (name not shared)"),
        ("instructor, name shared", "by sam"),
    ],
)
def test_a_runs_owner_is_named_only_to_them_and_to_instructors_with_consent(
    kind, who, shown, student, other_student, instructor
):
    run = sweep_run(student) if kind == "sweep" else prefix_run(student)
    Run.objects.filter(pk=run.pk).update(server_url=INTERNAL_URL)
    full, partial = pages(run, viewer(who, student, other_student, instructor))
    assert "the practice server" in full
    if shown:
        assert shown in full
    for page in (full, partial):
        if not shown:
            assert not re.search(r"\bby (you|sam|a student)\b", page)
        if who != "instructor, name shared":
            assert not re.search(r"\bsam\b", page)  # the owner's username, anywhere on the page
        assert INTERNAL_URL not in page and "10.1.2.3" not in page
