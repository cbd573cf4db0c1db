"""bench/bench_learning.py --quick: simulated students practise through the site's own code and
the report gives every measure the issue asks for."""

import re
import sys
from pathlib import Path

import pytest

from quiz import recall_calibration
from quiz.models import PracticeAttempt, PracticeState

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_learning

pytestmark = pytest.mark.django_db


def test_the_quick_run_practises_through_the_site_and_reports_each_measure(lessons):
    results = bench_learning.simulate(*bench_learning.QUICK, seed=3)
    # The site recorded and scheduled what the students answered: one attempt a problem.
    assert PracticeAttempt.objects.count() == results.attempts > 50
    assert PracticeState.objects.exists()
    assert results.predictions and results.pairs
    assert all(0 < p <= 1 for p, _ in results.predictions)
    # /instructor/'s replay of the same answers reads the recall the bench read off the site's
    # schedules, and its predictions are the bench's.
    replayed = recall_calibration.class_predictions(PracticeAttempt.objects.all())
    assert sorted(round(p.recall, 9) for p in replayed) == sorted(round(p, 9) for p, _ in results.predictions)
    assert [(p.ref, p.chance) for p in replayed] == [(p.ref, p.chance) for p in results.felab]
    # Every answer has its true chance, and the site graded each first try the student meant right, right.
    assert results.truth.keys() == set(PracticeAttempt.objects.values_list("id", flat=True))
    assert results.misgraded <= results.attempts // 100
    lines, figures = bench_learning.report(results)
    text = "\n".join(lines)
    for measure in ("AUC of felab's prediction", "log loss", "mastery agrees with true mastery",
                    "| 0.9–1.0 |", "Cohen", "Planted unnamed mistakes", "the true chance (oracle)",
                    "FSRS's recall alone", "held out", "the rule, and every template predicted"):  # fmt: skip
        assert measure in text
    # Step 1's check on this class: one row a planted mistake, each with its template's largest
    # unnamed group, and the count of those that surfaced.
    section = lines[
        lines.index(next(line for line in lines if line.startswith("Planted unnamed mistakes"))) :
    ]
    for slug, _, words in bench_learning.PLANTED:
        assert any(line.startswith(f"| {slug} | {words} |") and line.rstrip().endswith(("| yes |", "| no |"))
                   for line in section)  # fmt: skip
    assert re.search(r"^[0-5] of 5 planted unnamed mistakes surface", section[-1])
    assert 0 <= figures["auc"] <= 1 and figures["log_loss"] > 0 and 0 <= figures["agreement"] <= 1
    # No predictor beats knowing the students' true chances, on log loss, over many answers.
    assert figures["oracle_log_loss"] < figures["log_loss"] < figures["fsrs_log_loss"]


def test_a_student_who_stays_away_forgets():
    student = bench_learning.Student(0, named=True, skill={"k-and-v": 0.9})
    student.open_lesson({"k-and-v"}, bench_learning.START)
    from datetime import timedelta

    soon = student.p_concept("k-and-v", bench_learning.START + timedelta(hours=1))
    later = student.p_concept("k-and-v", bench_learning.START + timedelta(days=20))
    assert 0.9 > soon > later >= 0.9 * 0.4
