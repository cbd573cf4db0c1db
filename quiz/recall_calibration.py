"""How well felab's predictions match what learners then answered: log loss, AUC and ten
calibration bins, for /instructor/ (the class's practice) and bench/bench_learning.py (a
simulated class) alike.

A prediction is felab's chance that a learner's first try at a practice template is right
(quiz/next_answer.py: the learner's skill on the template's concepts × FSRS's retrievability of
the template's schedule), made just before an answer from the records before it; the outcome is
that answer's first try right without a hint. A template's first answer has no prediction:
nothing was scheduled yet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import next_answer

# The instructor page shows the bins once the class has this many predictions: 20 answers a bin
# on average, but predictions cluster high (most learners are likely to get most problems right),
# so the low bins hold few; a bin with fewer than FEW_TO_READ answers is marked too few to read.
SHOWN_FROM = 200
# Under this many answers a bin's share right is known to worse than about ±0.16 (the standard
# error of a share near one half from 10 answers): the page marks it rather than let it be read.
FEW_TO_READ = 10
# The latest this many answers are read, whatever the class's size: a request replays, for each
# answer, its template's schedule and each of its concepts' through FSRS (a few reviews an
# answer), so its work is bounded here (raise it, or precompute, for more). 10,000 answers give
# 1,000 a bin on average. A learner's template whose earlier answers fall before them would be
# replayed from a fresh schedule, so its predictions are left out (class_predictions).
READ_AT_MOST = 10_000
# Predictions are clipped so one wrong answer at 100% costs a finite amount, as the FSRS benchmark does.
CLIP = 1e-4


@dataclass(frozen=True)
class Bin:
    low: float
    answers: int
    mean_predicted: float
    share_right: float

    @property
    def too_few(self) -> bool:
        """Answers in it, but too few for its share right to be read (FEW_TO_READ)."""
        return 0 < self.answers < FEW_TO_READ

    @property
    def span(self) -> str:
        return f"{self.low:.1f}–{self.low + 0.1:.1f}"


def log_loss(predictions: list[tuple[float, bool]]) -> float:
    total = 0.0
    for p, right in predictions:
        p = min(max(p, CLIP), 1 - CLIP)
        total -= math.log(p if right else 1 - p)
    return total / len(predictions) if predictions else float("nan")


def auc(predictions: list[tuple[float, bool]]) -> float:
    """The chance a right answer had a higher prediction than a wrong one (ties count half)."""
    ordered = sorted(predictions, key=lambda item: item[0])
    rank_sum, positives, i = 0.0, 0, 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1][0] == ordered[i][0]:
            j += 1
        rights = sum(1 for k in range(i, j + 1) if ordered[k][1])
        rank_sum += rights * ((i + j) / 2 + 1)
        positives += rights
        i = j + 1
    negatives = len(ordered) - positives
    if not positives or not negatives:
        return float("nan")
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def bins(predictions: list[tuple[float, bool]]) -> list[Bin]:
    """Ten bins of predicted chance, 0–0.1 to 0.9–1.0, each with its answers, mean prediction and
    share right (nan for an empty one)."""
    found: list[list[tuple[float, bool]]] = [[] for _ in range(10)]
    for p, right in predictions:
        found[min(int(p * 10), 9)].append((p, right))
    return [
        Bin(i / 10, len(b), sum(p for p, _ in b) / len(b) if b else math.nan,
            sum(r for _, r in b) / len(b) if b else math.nan)
        for i, b in enumerate(found)
    ]  # fmt: skip


def class_predictions(
    attempts, read_at_most: int = READ_AT_MOST, predictor: next_answer.Predictor | None = None
) -> list[next_answer.Prediction]:
    """next_answer.predict over the given PracticeAttempt queryset's latest `read_at_most` answers,
    oldest first (what came before them is not read: the work a request does is bounded); each
    prediction's ref is its attempt's id, each learner's key (user id, anonymous id).

    When answers were left out, a learner's template with an answer among them would have its
    schedule replayed from a fresh card, as if the window's first answer were its first: its
    predictions are left out (one more query, on the window's learners and templates). Its rows
    are still read, for the class's rates and the learner's concept schedules."""
    from django.db import models

    from .models import Verdict

    latest = list(
        attempts.order_by("-answered_at", "-id").values_list(
            "id",
            "user_id",
            "anonymous_id",
            "template__slug",
            "rating",
            "answered_at",
            "is_review",
            "first_verdict",
            "verdict",
            "first_hints",
            "tries",
            "template_id",
        )[:read_at_most]
    )
    cut: set[tuple] = set()
    if latest and len(latest) == read_at_most:
        oldest_id, oldest_at = latest[-1][0], latest[-1][5]
        users = {row[1] for row in latest if row[1] is not None}
        anonymous = {row[2] for row in latest if row[1] is None}
        cut = set(
            attempts.filter(models.Q(answered_at__lt=oldest_at) | models.Q(answered_at=oldest_at, id__lt=oldest_id))
            .filter(template_id__in={row[11] for row in latest})
            .filter(models.Q(user_id__in=users) | models.Q(user__isnull=True, anonymous_id__in=anonymous))
            .order_by()
            .values_list("user_id", "anonymous_id", "template_id")
            .distinct()
        )  # fmt: skip
    latest.reverse()
    left_out = {row[0] for row in latest if (row[1], row[2], row[11]) in cut}
    answers = (
        next_answer.Answer((user, anonymous), slug, at, rating, is_review,
                           (first or verdict) == Verdict.RIGHT and not hints and tries > 0, ref=pk)
        for pk, user, anonymous, slug, rating, at, is_review, first, verdict, hints, tries, _ in latest
    )  # fmt: skip
    return [found for found in next_answer.predict(answers, predictor) if found.ref not in left_out]


def chances(predictions: list[next_answer.Prediction]) -> list[tuple[float, bool]]:
    """(felab's predicted chance, right) of each prediction: what the measures read."""
    return [(found.chance, found.right) for found in predictions]
