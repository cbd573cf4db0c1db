"""/instructor/: how the class rated each card, which layers they open, what they typed."""

import json
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from quiz.models import LearnerProfile, Rating, Showing
from tests.conftest import PASSWORD, SEED_CARD_URL
from tests.quiz.conftest import OPENED_URL, rate, show

pytestmark = pytest.mark.django_db


def figure_of(body: str) -> dict:
    match = re.search(r'<script id="ratings-figure" type="application/json">(.*?)</script>', body, re.S)
    assert match, "no data island"
    return json.loads(match[1])


def row_of(body: str, card_label: str) -> list[str]:
    match = re.search(
        r"<th scope=\"row\"><a [^>]*>L03 · " + re.escape(card_label) + r"</a></th>(.*?)</tr>", body, re.S
    )
    assert match, f"no row for {card_label}"
    return re.findall(r"<td>(\d+)</td>", match[1])


def test_anonymous_visitors_are_sent_to_log_in(client, db):
    response = client.get("/instructor/")
    assert response.status_code == 302 and response["Location"] == "/accounts/login/?next=/instructor/"


def test_students_get_403(student_client, other_student_client):
    assert student_client.get("/instructor/").status_code == 403
    assert other_student_client.get("/instructor/").status_code == 403


def test_instructors_and_superusers_get_the_page(instructor_client, lessons):
    assert instructor_client.get("/instructor/").status_code == 200
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    admin = Client()
    admin.force_login(User.objects.get(username="root"))
    assert admin.get("/instructor/").status_code == 200


def test_each_student_counts_once_per_card_by_latest_rating(
    instructor_client, student_client, other_student_client, seed_card, second_card, clock
):
    visitor = Client()
    show(student_client)
    rate(student_client, Rating.GOT_IT)
    show(visitor)  # an anonymous learner counts once their study spans a few minutes
    clock.advance(minutes=20)
    show(student_client)
    rate(student_client, Rating.EASY)  # sam's latest: Easy
    show(other_student_client)
    rate(other_student_client, Rating.MISSED_IT)
    show(visitor)
    rate(visitor, Rating.MISSED_IT)
    student_client.post(OPENED_URL, {"layer": "deeper"})
    visitor.post(OPENED_URL, {"layer": "deeper"})

    body = instructor_client.get("/instructor/").content.decode()
    # Rated by, Missed it, Hard, Got it, Easy, revealed, opened Go deeper
    assert row_of(body, seed_card.label) == ["3", "2", "0", "0", "1", "3", "2"]
    assert row_of(body, second_card.label) == ["0"] * 7

    figure = figure_of(body)
    assert figure["layout"]["barmode"] == "stack"
    assert [trace["name"] for trace in figure["data"]] == ["Missed it", "Hard", "Got it", "Easy"]
    seed_index = figure["data"][0]["y"].index(f"L03 · Step {seed_card.step}")
    assert [trace["x"][seed_index] for trace in figure["data"]] == [2, 0, 0, 1]
    assert all(trace["type"] == "bar" and trace["orientation"] == "h" for trace in figure["data"])


def test_chart_is_drawn_from_a_data_island_by_static_scripts(instructor_client, lessons):
    body = instructor_client.get("/instructor/").content.decode()
    # The site's one chart script, which fetches plotly.js only on pages that plot.
    assert (
        '<script src="/static/js/plots.js" data-plotly-src="/static/vendor/plotly-basic-4.1.1.min.js" defer>'
        in body
    )
    assert 'data-figure="ratings-figure"' in body


def test_latest_typed_answers_name_only_students_who_share(
    instructor_client, student, student_client, other_student, other_student_client, seed_card, clock
):
    LearnerProfile.objects.create(user=student, share_name=True)
    student.first_name = "Sam"
    student.save()
    visitor = Client()
    show(visitor, "")  # an anonymous learner counts once their study spans a few minutes
    clock.advance(minutes=5)
    show(student_client, "shared thought")
    clock.advance(seconds=1)
    show(other_student_client, "private thought")
    clock.advance(seconds=1)
    show(visitor, "visitor thought <b>bold</b>")
    clock.advance(seconds=1)
    show(student_client, "")  # nothing typed: not listed

    body = instructor_client.get("/instructor/").content.decode()
    feed = re.findall(
        r'<blockquote>(.*?)</blockquote>\s*<p class="answer-meta"><span class="who">(.*?)</span>', body
    )
    assert feed == [
        ("visitor thought &lt;b&gt;bold&lt;/b&gt;", "anonymous"),
        ("private thought", "a student (name not shared)"),
        ("shared thought", "Sam"),
    ]
    assert "alex" not in body  # the student who did not agree is never named


def test_latest_answers_are_capped(instructor_client, student, seed_card):
    for index in range(25):
        Showing.objects.create(card=seed_card, user=student, answer=f"answer {index}")
    body = instructor_client.get("/instructor/").content.decode()
    assert body.count("<blockquote>") == 20


def test_nav_link_is_for_instructors_only(instructor_client, student_client, seed_card):
    assert 'href="/instructor/"' in instructor_client.get(SEED_CARD_URL).content.decode()
    assert 'href="/instructor/"' not in student_client.get(SEED_CARD_URL).content.decode()
