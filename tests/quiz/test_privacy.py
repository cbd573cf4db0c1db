"""Anonymous students' privacy: rows never hold a session key, and instructors cannot
single out a student, in the admin or on /instructor/, unless the student shares their name.

The attack this guards against: an instructor filtered the admin's lists on the column
that held anonymous students' session keys (`?session_key__startswith=a`, then `ab`, ...),
recovered a live session cookie one character at a time, and read the student's export.
"""

import string

import pytest
from django.apps import apps
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from accounts.instructors import VIEW_ONLY, grant_permissions
from quiz.admin import INSTRUCTORS_VIEW, names_a_learner
from quiz.models import CardState, LayerOpening, LearnerProfile, Rating, Review, Showing
from tests.conftest import PASSWORD
from tests.quiz.conftest import OPENED_URL, anonymous_learner, rate, show

# Session keys and the anonymous ids are drawn from these characters.
KEY_ALPHABET = string.ascii_lowercase + string.digits
# Each admin list, with the path from its rows to whose they are.
LISTS = {"review": "", "showing": "", "cardstate": "", "layeropening": "showing__"}


@pytest.fixture(autouse=True)
def _quiz_view_permissions(instructors_group):
    grant_permissions(
        apps, "quiz", INSTRUCTORS_VIEW, VIEW_ONLY
    )  # what migration 0005 grants, should a flush have removed it


@pytest.fixture
def anonymous_student(seed_card) -> Client:
    """A visitor who typed an answer, rated it and opened Go deeper, all without an account."""
    client = Client()
    show(client, "bigger batches, more tokens per second")
    rate(client, Rating.GOT_IT)
    showing = Showing.objects.get(user__isnull=True)
    assert client.post(OPENED_URL, {"layer": "deeper", "showing": showing.pk}).status_code == 204
    return client


def rows_listed(client: Client, model: str, query: dict[str, str]) -> int | None:
    """How many rows the admin list shows for a query; None when it shows no list at all."""
    response = client.get(f"/admin/quiz/{model}/", query)
    if response.status_code != 200:
        return None
    return response.context["cl"].result_count


def recover_by_prefix(client: Client, model: str, lookup: str, length: int) -> str:
    """The attack: grow a prefix one character at a time while the admin still lists a row."""
    known = ""
    while len(known) < length:
        for char in KEY_ALPHABET:
            if rows_listed(client, model, {f"{lookup}__startswith": known + char}):
                known += char
                break
        else:
            return known
    return known


@pytest.mark.parametrize("column", ["session_key", "anonymous_id"])
@pytest.mark.parametrize("model", LISTS)
def test_prefix_filters_in_the_admin_recover_nothing(instructor_client, anonymous_student, model, column):
    session_key = anonymous_student.session.session_key
    recovered = recover_by_prefix(instructor_client, model, LISTS[model] + column, len(session_key))
    assert recovered == ""
    # The probe is refused outright (400), not answered with an empty list.
    response = instructor_client.get(
        f"/admin/quiz/{model}/", {f"{LISTS[model]}anonymous_id__startswith": "a"}
    )
    assert response.status_code == 400


def test_no_row_holds_a_session_key_and_the_anonymous_id_opens_no_session(anonymous_student):
    session_key = anonymous_student.session.session_key
    anonymous_id = anonymous_learner(anonymous_student).anonymous_id
    stored = {
        *Showing.objects.values_list("anonymous_id", flat=True),
        *Review.objects.values_list("anonymous_id", flat=True),
        *CardState.objects.values_list("anonymous_id", flat=True),
    }
    assert stored == {anonymous_id} and session_key not in stored
    # Someone who learned the id and sends it as a session cookie is nobody.
    impostor = Client()
    impostor.cookies["sessionid"] = anonymous_id
    assert impostor.get("/progress/export.json").json()["showings"] == []
    assert len(anonymous_student.get("/progress/export.json").json()["showings"]) == 1


def test_admin_refuses_to_filter_by_account(instructor_client, student, student_client, seed_card):
    show(student_client, "mine")
    rate(student_client, Rating.HARD)
    for model, path in LISTS.items():
        for lookup in ("user", "user__id__exact", "user_id", "user__username", "user__isnull"):
            response = instructor_client.get(f"/admin/quiz/{model}/", {path + lookup: str(student.pk)})
            assert response.status_code == 400, (model, path + lookup)
    # Reaching the account through another relation is refused too.
    response = instructor_client.get("/admin/quiz/showing/", {"review__user__username": "sam"})
    assert response.status_code == 400
    # Filters that name no learner still work.
    assert rows_listed(instructor_client, "review", {"rating": str(Rating.HARD)}) == 1


@pytest.mark.parametrize(
    ("lookup", "refused"),
    [
        ("user", True),
        ("user_id", True),
        ("anonymous_id__startswith", True),
        ("showing__user__username", True),
        ("card__showings__anonymous_id", True),
        ("rating", False),
        ("card__lesson__id__exact", False),
        ("reviewed_at__gte", False),
    ],
)
def test_names_a_learner(lookup, refused):
    assert names_a_learner(lookup) is refused


def test_change_pages_show_the_learner_by_consent_only(
    instructor_client, anonymous_student, student, student_client, other_student, other_student_client
):
    LearnerProfile.objects.create(user=other_student, share_name=True)
    student.first_name, student.last_name = "Sam", "Okafor"
    student.save()
    show(student_client, "sam's private answer")
    show(other_student_client, "alex's shared answer")
    anonymous_id = anonymous_learner(anonymous_student).anonymous_id
    expected = {
        Showing.objects.get(user__isnull=True): "anonymous",
        Showing.objects.get(user=student): "a student (name not shared)",
        Showing.objects.get(user=other_student): "alex",
    }
    for showing, label in expected.items():
        body = instructor_client.get(f"/admin/quiz/showing/{showing.pk}/change/").content.decode()
        assert f'<div class="readonly">{label}</div>' in body
        assert "Sam" not in body and "Okafor" not in body and anonymous_id not in body
    review = Review.objects.get(user__isnull=True)
    body = instructor_client.get(f"/admin/quiz/review/{review.pk}/change/").content.decode()
    assert '<div class="readonly">anonymous</div>' in body and anonymous_id not in body
    opening = LayerOpening.objects.get()
    body = instructor_client.get(f"/admin/quiz/layeropening/{opening.pk}/change/").content.decode()
    assert anonymous_id not in body and anonymous_student.session.session_key not in body


def test_dashboard_names_only_students_who_share(
    clock, instructor_client, student, student_client, anonymous_student
):
    student.first_name = "Sam"
    student.save()
    clock.advance(minutes=5)
    show(anonymous_student)  # an anonymous learner counts once their study spans a few minutes
    show(student_client, "a private thought")
    body = instructor_client.get("/instructor/").content.decode()
    assert "a private thought" in body and "a student (name not shared)" in body
    assert "bigger batches" in body and "anonymous" in body
    assert "Sam" not in body and ">sam<" not in body
    assert anonymous_learner(anonymous_student).anonymous_id not in body


def test_merge_at_log_in_takes_the_anonymous_work(anonymous_student, student):
    anonymous_id = anonymous_learner(anonymous_student).anonymous_id
    response = anonymous_student.post("/accounts/login/", {"username": "sam", "password": PASSWORD})
    assert response.status_code == 302
    assert Showing.objects.get().user == student and Review.objects.get().user == student
    assert not Showing.objects.filter(anonymous_id=anonymous_id).exists()
    assert CardState.objects.get().user == student


@pytest.mark.django_db(transaction=True)
def test_migration_replaces_stored_session_keys_and_keeps_students_progress(lessons):
    executor = MigrationExecutor(connection)
    before = [("quiz", "0006_anonymous_learner_ids")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    Card = old.get_model("lessons", "Card")
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=1)
    # Before: the learner's rows carried their live session key, and so did their session.
    session = SessionStore()
    session.create()
    session["quiz_learner"] = session.session_key
    session["other"] = "kept"
    session.save()
    key = session.session_key
    showing = old.get_model("quiz", "Showing").objects.create(card=card, anonymous_id=key, answer="before")
    old.get_model("quiz", "Review").objects.create(card=card, anonymous_id=key, showing=showing, rating=3)
    OldCardState = old.get_model("quiz", "CardState")
    OldCardState.objects.create(
        card=card, anonymous_id=key, due=showing.shown_at, last_rating=3, last_reviewed_at=showing.shown_at
    )
    someone_gone = old.get_model("quiz", "Showing").objects.create(card=card, anonymous_id="x" * 32)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    new_id = Showing.objects.get(pk=showing.pk).anonymous_id
    assert new_id not in ("", key) and len(new_id) == 32
    assert Review.objects.get().anonymous_id == new_id and CardState.objects.get().anonymous_id == new_id
    assert Showing.objects.get(pk=someone_gone.pk).anonymous_id not in ("", "x" * 32, new_id)
    stored = SessionStore(session_key=key).load()
    assert stored == {"quiz_learner": new_id, "other": "kept"}
    # The student, still holding their cookie, keeps their progress.
    client = Client()
    client.cookies["sessionid"] = key
    assert [row["answer"] for row in client.get("/progress/export.json").json()["showings"]] == ["before"]
