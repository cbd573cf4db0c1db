"""SQL queries per page stay flat as the class grows: 3 lessons × 3 cards, 50 students of history.

Run with -s to print the numbers quoted when the issue is closed.
"""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from lessons.models import Card, Course, Lesson
from quiz import scheduling
from quiz.models import CardState, Layer, LayerOpening, LearnerProfile, Review, Showing
from tests.quiz.clocks import START

pytestmark = pytest.mark.django_db

PAGES = ["/progress/", "/review/", "/instructor/", "/", "card"]
# Ceilings per page, whatever the number of students (session, user and nav included). The home
# page is the course map: each lesson's progress, what is due and where to continue (one query
# more than the plain lesson list it replaced; tests/lessons/test_course_map.py checks that it
# does not grow with the course).
# /progress/ reads the practice attempts in one more query, whatever their number; /instructor/'s
# practice table adds three grouped ones (first tries and ends, then the named mistakes at the
# first and at the last try), whatever the class's size; its mistakes nobody named two more (the
# mistakes named from the class's answers, and every template's latest wrong first tries).
# /instructor/ reads the class's practice answers once more for its predicted first tries (quiz/recall_calibration.py).
BOUNDS = {"/progress/": 9, "/review/": 6, "/instructor/": 16, "/": 8, "card": 11}


def build_class(students: int) -> tuple[list[User], list[Card]]:
    course = Course.objects.create(slug="perf", title="Perf")
    cards = []
    for number in (1, 2, 3):
        lesson = Lesson.objects.create(course=course, number=number, title=f"L{number}", slug=f"l{number}")
        for step in (1, 2, 3):
            cards.append(
                Card.objects.create(
                    lesson=lesson, step=step, title=f"C{step}", question="Q?", plain_words="A."
                )
            )
    users = User.objects.bulk_create([User(username=f"student{index:02d}") for index in range(students)])
    LearnerProfile.objects.bulk_create(
        [LearnerProfile(user=user, share_name=index % 2 == 0) for index, user in enumerate(users)]
    )
    showings = []
    for index, user in enumerate(users):
        for card in cards:
            for round_ in range(2):
                at = START + timedelta(days=3 * round_, minutes=index)
                showings.append(Showing(card=card, user=user, answer=f"answer {index}", shown_at=at))
    showings = Showing.objects.bulk_create(showings)
    reviews = [
        Review(
            card_id=showing.card_id,
            user_id=showing.user_id,
            showing=showing,
            rating=1 + (showing.user_id + showing.card_id + position) % 4,
            reviewed_at=showing.shown_at,
        )
        for position, showing in enumerate(showings)
    ]
    Review.objects.bulk_create(reviews)
    LayerOpening.objects.bulk_create(
        [LayerOpening(showing=showing, layer=Layer.DEEPER) for showing in showings[::3]]
    )
    histories: dict[tuple[int, int], list] = {}
    for review in reviews:
        histories.setdefault((review.user_id, review.card_id), []).append((review.rating, review.reviewed_at))
    states = []
    for (user_id, card_id), history in histories.items():
        fsrs_card = scheduling.replay(card_id, history, start=history[0][1])
        states.append(
            CardState(
                card_id=card_id,
                user_id=user_id,
                fsrs_card=fsrs_card.to_dict(),
                due=fsrs_card.due,
                last_rating=history[-1][0],
                last_reviewed_at=history[-1][1],
                review_count=len(history),
            )
        )
    CardState.objects.bulk_create(states)
    return users, cards


def count_queries(students: int, instructor: User, clock) -> dict[str, int]:
    users, cards = build_class(students)
    clock.current = START + timedelta(days=4)  # some cards due, some not
    student = Client()
    student.force_login(users[0])
    teacher = Client()
    teacher.force_login(instructor)
    card_url = cards[4].get_absolute_url() + "?answer=shown"
    counts = {}
    for page in PAGES:
        client = teacher if page == "/instructor/" else student
        url = card_url if page == "card" else page
        client.get(url)  # warm: anything cached per process is not the page's cost
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200
        counts[page] = len(queries)
    return counts


@pytest.mark.parametrize("students", [5, 50])
def test_queries_per_page_are_bounded_whatever_the_class_size(students, instructor, clock, capsys):
    counts = count_queries(students, instructor, clock)
    with capsys.disabled():
        print(f"\nSQL queries with 3 lessons × 3 cards and {students} students: {counts}")
    assert {page: count for page, count in counts.items() if count > BOUNDS[page]} == {}


def test_fifty_students_cost_no_more_queries_than_five(instructor, clock):
    few = count_queries(5, instructor, clock)
    Course.objects.all().delete()
    User.objects.exclude(pk=instructor.pk).delete()
    many = count_queries(50, instructor, clock)
    assert many == few
