"""felab's predicted first tries against what learners then answered: the measures, and /instructor/'s
ten bins for the class once it has 200 predictions."""

import math
from datetime import UTC, datetime, timedelta

import pytest

from lessons.models import PracticeTemplate
from quiz import next_answer, recall_calibration
from quiz.models import PracticeAttempt, Rating, Verdict

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_auc_and_log_loss_on_known_answers():
    separated = [(0.9, True), (0.8, True), (0.3, False), (0.2, False)]
    assert recall_calibration.auc(separated) == 1.0
    assert recall_calibration.auc([(0.5, True), (0.5, False)]) == 0.5  # a tie counts half
    assert recall_calibration.auc([(0.9, False), (0.1, True)]) == 0.0
    assert recall_calibration.log_loss([(0.8, True), (0.8, False)]) == pytest.approx(
        -(math.log(0.8) + math.log(0.2)) / 2
    )
    assert recall_calibration.log_loss([(1.0, False)]) == pytest.approx(-math.log(recall_calibration.CLIP))


def test_ten_bins_hold_each_prediction_once():
    found = recall_calibration.bins([(0.05, False), (0.95, True), (1.0, True), (0.55, True), (0.55, False)])
    assert [b.answers for b in found] == [1, 0, 0, 0, 0, 2, 0, 0, 0, 2]
    assert found[5].share_right == 0.5 and found[9].mean_predicted == pytest.approx(0.975)
    assert found[0].span == "0.0–0.1"


def test_a_templates_first_answer_has_no_prediction_and_recall_falls_with_the_wait():
    rows = [
        next_answer.Answer("a", "l09-cost-per-1k", T0, Rating.GOT_IT, True, True, ref=1),
        next_answer.Answer("a", "l09-cost-per-1k", T0 + timedelta(days=2), Rating.GOT_IT, True, True, ref=2),
        next_answer.Answer(
            "a", "l09-cost-per-1k", T0 + timedelta(days=60), Rating.GOT_IT, True, False, ref=3
        ),
        next_answer.Answer("b", "l09-cost-per-1k", T0, Rating.MISSED_IT, True, False, ref=4),
    ]
    predictions = next_answer.predict(rows)
    assert [p.ref for p in predictions] == [2, 3]  # "b" has one answer
    assert predictions[0].recall > 0.85 > predictions[1].recall
    assert predictions[0].chance > predictions[1].chance


def practice(user, count: int) -> None:
    """`count` answers of the student's, ten a template, a day apart: count − templates predictions."""
    templates = list(PracticeTemplate.objects.order_by("slug"))
    rows = []
    for i in range(count):
        template = templates[i // 10]
        right = i % 3 != 0
        rows.append(PracticeAttempt(
            user=user, template=template, seed=i + 1, typed="1", value=1, expected=1, ratio=1,
            verdict=Verdict.RIGHT if right else Verdict.OFF, first_verdict=Verdict.RIGHT if right else Verdict.OFF,
            proposed_rating=Rating.GOT_IT if right else Rating.MISSED_IT, rating=Rating.GOT_IT if right else Rating.MISSED_IT,
            answered_at=T0 + timedelta(days=i % 10),
        ))  # fmt: skip
    PracticeAttempt.objects.bulk_create(rows)


@pytest.mark.django_db
def test_the_instructor_sees_how_many_until_200_then_the_ten_bins(instructor_client, student, lessons):
    practice(student, 220)  # 22 templates: 198 predictions
    page = instructor_client.get("/instructor/").content.decode()
    assert "198 practice answers with a prediction so far" in page
    assert 'id="recall-calibration"' not in page
    PracticeAttempt.objects.all().delete()
    practice(student, 230)  # 23 templates: 207
    page = instructor_client.get("/instructor/").content.decode()
    table = page.split('id="recall-calibration"')[1].split("</table>")[0]
    assert table.count("<tr>") == 11  # a header and ten bins
    assert "207 answers; log loss" in page
    # A bin of a handful of answers says so, rather than offer a share to read.
    found = recall_calibration.bins(recall_calibration.chances(
        recall_calibration.class_predictions(PracticeAttempt.objects.all())))  # fmt: skip
    assert any(b.too_few for b in found)
    assert table.count("too few to read") == sum(b.too_few for b in found)


@pytest.mark.django_db
def test_a_template_whose_early_answers_fall_outside_the_window_is_not_predicted_from_a_fresh_card(
    student, other_student, lessons, django_assert_num_queries
):
    practice(student, 60)  # six templates, ten answers each, days 0 to 9
    template = PracticeTemplate.objects.order_by("slug").last()
    later = PracticeAttempt.objects.bulk_create(
        PracticeAttempt(
            user=other_student, template=template, seed=day, typed="1", value=1, expected=1, ratio=1,
            verdict=Verdict.RIGHT, first_verdict=Verdict.RIGHT, proposed_rating=Rating.GOT_IT,
            rating=Rating.GOT_IT, answered_at=T0 + timedelta(days=day), tries=1, is_review=True,
        )
        for day in range(20, 25)
    )  # fmt: skip
    # The latest 20: the other student's five (all of their history) and 15 of the student's,
    # whose every template has answers before them.
    with django_assert_num_queries(2):
        latest = recall_calibration.class_predictions(PracticeAttempt.objects.all(), read_at_most=20)
    assert sorted(p.ref for p in latest) == sorted(row.pk for row in later[1:])
    # Read whole, the student's are predicted too.
    everything = recall_calibration.class_predictions(PracticeAttempt.objects.all())
    assert len(everything) == 54 + 4


def test_a_bin_of_few_answers_is_marked_too_few_to_read():
    found = recall_calibration.bins([(0.15, True)] * 9 + [(0.95, True)] * 10)
    assert found[1].too_few and not found[9].too_few and not found[0].too_few
