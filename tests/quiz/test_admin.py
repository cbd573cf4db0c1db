"""Students' records in the admin: instructors may look, nobody may edit."""

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission, User
from django.db import connection
from django.test import Client

from accounts.instructors import INSTRUCTORS_GROUP, VIEW_ONLY, grant_permissions
from quiz.admin import INSTRUCTORS_VIEW
from quiz.models import LearnerProfile, Rating, Review
from tests.conftest import PASSWORD
from tests.quiz.conftest import rate, show

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _quiz_view_permissions(instructors_group):
    # What migration 0005 grants, in case a transactional test's flush removed it.
    grant_permissions(apps, "quiz", INSTRUCTORS_VIEW, VIEW_ONLY)


@pytest.fixture
def rated(student_client, other_student, other_student_client, seed_card) -> Review:
    LearnerProfile.objects.create(user=other_student, share_name=True)
    show(other_student_client, "alex's answer")
    rate(other_student_client, Rating.HARD)
    show(student_client, "sam's answer")
    rate(student_client, Rating.GOT_IT)
    return Review.objects.get(user__username="sam")


def test_migration_grants_instructors_view_only_on_quiz_records(db):
    group = Group.objects.get(name=INSTRUCTORS_GROUP)
    codenames = set(
        Permission.objects.filter(group=group, content_type__app_label="quiz").values_list(
            "codename", flat=True
        )
    )
    records = {"view_review", "view_showing", "view_cardstate", "view_layeropening"}
    # Not a student's record: the mistakes instructors name from the class's answers.
    named = {f"{action}_classmistake" for action in ("add", "change", "delete", "view")}
    assert codenames == records | named


@pytest.mark.parametrize("model", ["review", "showing", "cardstate", "layeropening"])
def test_instructor_can_list_and_open_but_not_change(instructor_client, rated, model):
    listing = instructor_client.get(f"/admin/quiz/{model}/")
    assert listing.status_code == 200
    assert instructor_client.get(f"/admin/quiz/{model}/add/").status_code == 403


def test_review_page_is_read_only(instructor_client, rated):
    page = instructor_client.get(f"/admin/quiz/review/{rated.pk}/change/")
    body = page.content.decode()
    assert page.status_code == 200 and "Got it" in body
    assert 'name="_save"' not in body
    response = instructor_client.post(f"/admin/quiz/review/{rated.pk}/change/", {"rating": 1})
    assert response.status_code == 403
    assert (
        instructor_client.post(f"/admin/quiz/review/{rated.pk}/delete/", {"post": "yes"}).status_code == 403
    )
    rated.refresh_from_db()
    assert rated.rating == Rating.GOT_IT


def test_instructor_sees_names_only_with_consent(instructor_client, rated):
    body = instructor_client.get("/admin/quiz/review/").content.decode()
    assert "alex" in body and "a student (name not shared)" in body
    assert ">sam<" not in body
    showings = instructor_client.get("/admin/quiz/showing/").content.decode()
    assert "sam&#x27;s answer" in showings and ">sam<" not in showings


def test_superuser_too_sees_names_only_with_consent_and_cannot_edit(rated):
    # A superuser who teaches is an instructor looking at students' records: consent applies.
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    admin = Client()
    admin.force_login(User.objects.get(username="root"))
    body = admin.get("/admin/quiz/review/").content.decode()
    assert "alex" in body and "a student (name not shared)" in body
    assert ">sam<" not in body
    assert admin.get("/admin/quiz/review/add/").status_code == 403


def test_students_and_their_profiles_stay_out(student_client, instructor_client):
    assert student_client.get("/admin/quiz/review/").status_code == 302
    assert instructor_client.get("/admin/quiz/learnerprofile/").status_code == 404


# --------------------------------------------------------------------------- filters the database cannot apply


@pytest.fixture
def superuser_client(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("boss", "boss@example.com", PASSWORD))
    return client


@pytest.mark.parametrize(
    ("url", "param"),
    [
        ("/admin/quiz/showing/?answer=%00", "answer"),
        ("/admin/quiz/cardstate/?fsrs_card__x=%00", "fsrs_card__x"),
        ("/admin/quiz/showing/?answer__iregex=%5B", "answer__iregex"),
        ("/admin/quiz/showing/?q=%00", "q"),
        ("/admin/quiz/showing/?shown_at__year=99999999999", "shown_at__year"),
        ("/admin/quiz/review/?reviewed_at__year=99999999999", "reviewed_at__year"),
        # SQLite has no JSON containment (PostgreSQL's jsonb applies it, and answers 200).
        pytest.param(
            "/admin/quiz/cardstate/?fsrs_card__contains=x",
            "fsrs_card__contains",
            marks=pytest.mark.skipif(connection.vendor != "sqlite", reason="jsonb applies @>"),
        ),
        ("/admin/lessons/card/?question__iregex=%5B", "question__iregex"),
        ("/admin/lessons/glossaryterm/?term__regex=(", "term__regex"),
        ("/admin/auth/user/?username__iregex=%5B", "username__iregex"),
    ],
)
def test_a_filter_the_database_cannot_apply_is_a_400_naming_it(
    instructor_client, superuser_client, rated, url, param
):
    for client in (instructor_client, superuser_client):
        response = client.get(url)
        if url.startswith("/admin/auth/") and client is instructor_client:
            continue  # instructors may not see users at all
        assert response.status_code == 400, (url, response.status_code)
        assert f"The filter &#x27;{param}&#x27;" in response.content.decode()


def test_every_changelist_refuses_a_nul_filter_by_name(superuser_client, rated):
    from django.contrib import admin

    for model in admin.site._registry:
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/?name=x%00y"
        response = superuser_client.get(url)
        assert response.status_code == 400, url
        assert "The filter &#x27;name&#x27; holds a NUL character" in response.content.decode()


def test_ordinary_filters_and_searches_still_work(instructor_client, rated):
    assert instructor_client.get("/admin/quiz/showing/?q=answer").status_code == 200
    assert instructor_client.get("/admin/quiz/review/?rating__exact=3").status_code == 200
    assert instructor_client.get("/admin/quiz/showing/?shown_at__year=2026").status_code == 200
    # A filter the admin cannot build is still Django's own "?e=1" page.
    assert instructor_client.get("/admin/quiz/cardstate/?due__gte=abc").status_code == 302
