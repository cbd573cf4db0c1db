"""pagecache/warm.py: gunicorn's master builds the course's pages before forking, so a worker's first
visitor finds them kept (issue 23: the card page's p99 at 500 students was first builds)."""

import runpy
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client

from felab_sim.engine.calculators import CALCULATORS
from lessons.models import Card, Lesson
from pagecache import kept_pages
from pagecache.warm import course_paths, warm_kept_pages
from tests.support.bundled_lessons import load_bundled_lessons

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def course(transactional_db) -> None:
    load_bundled_lessons()


@pytest.fixture
def builds(monkeypatch) -> list[str]:
    """The templates of every kept page built from now on."""
    built: list[str] = []
    build = kept_pages.KeptPage.build

    def counting(template_name, context, per_request=()):
        built.append(template_name)
        return build(template_name, context, per_request)

    monkeypatch.setattr(kept_pages.KeptPage, "build", staticmethod(counting))
    return built


def test_every_course_page_is_built_once_and_then_served_from_what_was_kept(course, builds, settings):
    settings.ALLOWED_HOSTS = [".felab.example.org"]  # a pattern, as a deployment may list it
    paths = list(course_paths())
    cards, lessons = Card.objects.published().count(), Lesson.objects.published().count()
    simulator = 3 + len(CALCULATORS)  # /sim/, the chain and engine pages, each calculator
    assert len(paths) == 4 + simulator + lessons + 2 * cards and cards >= 70 and lessons == 19
    assert "/sim/" in paths and "/sim/calc/continuous-batching/" in paths

    served, failed = warm_kept_pages()

    assert (served, failed) == (len(paths), [])
    assert builds, "the warm-up built no kept page"
    assert all(connection.connection is None for connection in connections.all())  # none to fork
    builds.clear()
    visitor = Client(HTTP_HOST="felab.example.org")
    for path in paths:
        assert visitor.get(path).status_code == 200, path
    assert builds == []  # every page a first-time visitor opens was already kept


def test_the_gunicorn_arbiter_warms_the_pages_and_starts_even_when_it_cannot(course, monkeypatch):
    hooks = runpy.run_path(str(Path(__file__).resolve().parent.parent / "config" / "gunicorn.conf.py"))
    logged: list[str] = []

    class Log:
        def info(self, message, *args):
            logged.append(message % args)

        warning = info

    class Arbiter:
        log = Log()

    hooks["when_ready"](Arbiter())
    assert logged and logged[0].startswith("kept ") and logged[0].endswith("(0 failed)"), logged

    def broken():
        raise RuntimeError("no such table: lessons_card")

    monkeypatch.setattr("pagecache.warm.course_paths", broken)
    hooks["when_ready"](Arbiter())
    assert "no such table" in logged[-1]
