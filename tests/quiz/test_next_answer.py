"""felab's predicted chance of a right first try: skill from the learner's own earlier first tries
on the template's concepts, the class's rate as the prior, times FSRS's recall; read from the
records before each answer only, and over a bounded number of them."""

from datetime import UTC, datetime, timedelta

import pytest

from quiz import next_answer, recall_calibration
from quiz.models import PracticeAttempt, Rating

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# Two templates sharing "token-prices", and one sharing nothing with them.
PRICES, PRICES_TOO, SIGMOID = "l09-cost-per-1k", "l09-output-doubles", "l18-loss"


def answer(learner, template, day, right, ref=None):
    return next_answer.Answer(
        learner,
        template,
        T0 + timedelta(days=day),
        Rating.GOT_IT if right else Rating.MISSED_IT,
        True,
        right,
        ref=ref,
    )


def class_of(rate_right: bool, learners: int = 6) -> list[next_answer.Answer]:
    """Other learners, each answering PRICES twice, all right or all wrong."""
    return [answer(f"other{i}", PRICES, day, rate_right) for i in range(learners) for day in (0, 1)]


def test_a_template_s_first_answer_has_no_prediction_and_the_chance_is_skill_times_recall():
    found = next_answer.predict([answer("a", PRICES, 0, True, 1), answer("a", PRICES, 3, True, 2)])
    assert [p.ref for p in found] == [2]
    only = found[0]
    assert 0 < only.memory < 1 and 0 < only.skill <= 1
    assert only.chance == pytest.approx(only.skill * only.memory)


def test_the_prior_is_the_class_s_rate_on_the_template_s_concepts():
    mine = [answer("me", PRICES_TOO, 10, True), answer("me", PRICES_TOO, 11, True, "second")]
    strong = next_answer.predict(class_of(True) + mine)
    weak = next_answer.predict(class_of(False) + mine)

    # The same learner, the same own record: a class that gets token prices right lifts the
    # skill read for it, one that gets them wrong lowers it.
    assert mine_of_ref(strong, "second").skill > mine_of_ref(weak, "second").skill + 0.2
    # A concept the class never tried starts from the class's rate over all concepts.
    mine = [answer("me", SIGMOID, 10, True), answer("me", SIGMOID, 11, True, "s")]
    assert (
        mine_of_ref(next_answer.predict(class_of(False) + mine), "s").skill
        < mine_of_ref(next_answer.predict(class_of(True) + mine), "s").skill
    )


def mine_of_ref(found, ref):
    return next(p for p in found if p.ref == ref)


def test_the_learner_s_own_first_tries_on_a_shared_concept_move_the_skill():
    history = [answer("me", PRICES, day, right) for day, right in ((0, False), (1, False), (2, False))]
    later = [answer("me", PRICES_TOO, 5, True), answer("me", PRICES_TOO, 6, True, "p")]
    low = mine_of_ref(next_answer.predict(class_of(True) + history + later), "p")
    high = mine_of_ref(next_answer.predict(class_of(True) + later), "p")
    assert low.skill < high.skill


def test_no_prediction_reads_a_later_answer():
    rows = class_of(True) + [answer("me", PRICES, d, d % 2 == 0, ref=d) for d in range(2, 8)]
    before = {p.ref: (p.skill, p.memory) for p in next_answer.predict(rows) if p.ref is not None}
    # The same rows, then later ones of every kind, the learner's and the class's, and the last
    # row's outcome turned over: every earlier prediction is unchanged.
    changed = [*rows[:-1], answer("me", PRICES, 7, False, ref=7)]
    later = [answer("me", PRICES, 20 + d, False) for d in range(5)] + [answer("other0", PRICES, 30, False)]
    after = {p.ref: (p.skill, p.memory) for p in next_answer.predict(changed + later) if p.ref is not None}
    assert after == before and len(before) == 5


@pytest.mark.django_db
def test_the_class_s_predictions_read_a_bounded_number_of_answers(
    student, lessons, django_assert_num_queries
):
    from tests.quiz.test_recall_calibration import practice

    practice(student, 60)  # six templates, ten answers each
    with django_assert_num_queries(1):
        everything = recall_calibration.class_predictions(PracticeAttempt.objects.all())
    assert len(everything) == 54
    latest = recall_calibration.class_predictions(PracticeAttempt.objects.all(), read_at_most=20)
    # The latest 20 answers only: each template's first among them has no prediction.
    assert len(latest) < 20
    ids = set(PracticeAttempt.objects.order_by("-answered_at", "-id").values_list("id", flat=True)[:20])
    assert {p.ref for p in latest} <= ids


def test_a_card_in_hand_reads_the_recall_its_stored_form_does():
    from quiz import scheduling

    card = scheduling.replay(1, [(Rating.GOT_IT, T0), (Rating.HARD, T0 + timedelta(days=3))], T0)
    for days in (3, 3.5, 10, 90):
        at = T0 + timedelta(days=days)
        assert scheduling.card_retrievability(card, at) == scheduling.retrievability(card.to_dict(), at)
    assert scheduling.card_retrievability(scheduling.new_card(1, T0), T0) is None
