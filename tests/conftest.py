"""The shared cast: a student, another student, an instructor, and anonymous visitors."""

import os
import sys
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.db.models import Q
from django.test import Client
from hypothesis import settings as hypothesis_settings

from accounts.instructors import INSTRUCTORS_GROUP
from lessons.models import Card
from tests.support.bundled_lessons import load_bundled_lessons
from tests.support.lanes import mark_lanes

# Property tests judge what a function returns, never how fast: on two cores shared by several
# test runs an example can take longer than hypothesis's 200 ms deadline and fail for no bug.
# Derandomized, every run draws the same examples: a CI run fails for a change, not for the draw.
hypothesis_settings.register_profile("felab", deadline=None, derandomize=True)
hypothesis_settings.load_profile("felab")

PASSWORD = "correct-horse-battery-staple"
SEED_CARD_URL = "/learn/llm-inference-performance/concurrency-sweep/step-1/"


def _own_folders_per_xdist_worker() -> None:
    # Under pytest-xdist each worker gets its own simulation permits and file cache: sharing
    # them, one worker's sim page would wait for (and 503 on) a permit another worker holds.
    # Processes the tests start inherit these from the environment.
    from django.conf import settings

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    defaults = {
        "FELAB_SIM_PERMITS_DIR": str(settings.SIM_PERMITS_DIR),
        "FELAB_CACHE_DIR": str(Path(tempfile.gettempdir()) / "felab-cache"),
    }
    for name, default in defaults.items():
        os.environ[name] = f"{os.environ.get(name, default)}-{worker}"
    settings.SIM_PERMITS_DIR = Path(os.environ["FELAB_SIM_PERMITS_DIR"])


_own_folders_per_xdist_worker()


def _quick_password_hashes() -> None:
    # PBKDF2's million rounds cost about half a second of CPU per user made or logged in, and
    # most tests make two or three; what tests check is who may log in, not the hash's cost.
    # Servers the tests start in processes of their own keep the production hashers.
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


_quick_password_hashes()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_lanes(items)


def pytest_runtest_setup(item: pytest.Item) -> None:
    # A browser test leaves Chromium open for the next one (tests/browser/conftest.py). Any other
    # test meets it closed: Playwright's event loop, marked running in this thread while it is
    # open, would refuse that test's asyncio.run().
    browsers = sys.modules.get("tests.browser.conftest")
    if browsers is not None and not item.path.resolve().is_relative_to(browsers.HERE):
        browsers.OPEN_CHROMIUM.close()


def _no_static_root(factory: pytest.TempPathFactory) -> Path:
    return factory.getbasetemp() / "no-static-root"


@pytest.fixture(autouse=True)
def _plain_static_storage(settings, tmp_path_factory):
    # The manifest exists only after collectstatic; tests read static files from source. No
    # STATIC_ROOT to scan either: the checkout's staticfiles/ may be rewritten meanwhile by a
    # `make run` or `make release` (WhiteNoise would fail on a file gone between list and stat).
    settings.STATIC_ROOT = str(_no_static_root(tmp_path_factory))
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def _fresh_cache():
    # Rate-limit windows live in the cache: each test starts with none used.
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def lessons(db) -> None:
    """The bundled lesson content, as `make run` imports it."""
    load_bundled_lessons()


@pytest.fixture
def seed_card(lessons) -> Card:
    return Card.objects.get(lesson__slug="concurrency-sweep", step=1)


# The Instructors group's permissions as the migrations grant them, read once right after
# the test database is migrated (before any transactional test's flush can delete it).
MIGRATED_INSTRUCTOR_PERMISSIONS: set[tuple[str, str]] = set()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker) -> None:
    with django_db_blocker.unblock():
        MIGRATED_INSTRUCTOR_PERMISSIONS.update(
            Permission.objects.filter(group__name=INSTRUCTORS_GROUP).values_list(
                "content_type__app_label", "codename"
            )
        )


@pytest.fixture
def instructors_group(db) -> Group:
    # A transactional test's flush removes the migrations' group, so tests that need it
    # make sure it is there with the permissions the migrations gave it, whatever they are.
    assert MIGRATED_INSTRUCTOR_PERMISSIONS, "the migrations made no Instructors group"
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    wanted = Q()
    for app_label, codename in MIGRATED_INSTRUCTOR_PERMISSIONS:
        wanted |= Q(content_type__app_label=app_label, codename=codename)
    group.permissions.add(*Permission.objects.filter(wanted))
    return group


@pytest.fixture
def student(db) -> User:
    return User.objects.create_user("sam", "sam@example.org", PASSWORD)


@pytest.fixture
def other_student(db) -> User:
    return User.objects.create_user("alex", "alex@example.org", PASSWORD)


@pytest.fixture
def instructor(db, instructors_group) -> User:
    user = User.objects.create_user("ines", "ines@example.org", PASSWORD, is_staff=True)
    user.groups.add(instructors_group)
    return user


@pytest.fixture
def anonymous_client() -> Client:
    return Client()


@pytest.fixture
def student_client(student) -> Client:
    client = Client()
    client.force_login(student)
    return client


@pytest.fixture
def other_student_client(other_student) -> Client:
    client = Client()
    client.force_login(other_student)
    return client


@pytest.fixture
def instructor_client(instructor) -> Client:
    client = Client()
    client.force_login(instructor)
    return client
