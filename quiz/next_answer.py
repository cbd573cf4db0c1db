"""felab's predicted chance that a learner's next first try at a practice template is right, from
the server's own records: skill × memory.

- Memory: FSRS's retrievability (scheduling.retrievability, the scheduler's default parameters),
  kept per concept (felab_sim/engine/problems/concepts.py) rather than per template: a concept is
  practised by every template that uses it, so each first try reviews the schedule of each of
  its template's concepts ("Got it" when right without a hint, else "Missed it"). A template's
  memory is its weakest concept's retrievability: a problem needs every one of them.
- Skill: the learner's right first tries per unit of memory on the template's concepts. Per
  concept, over the learner's earlier first tries at problems that use it: (PRIOR_STRENGTH × the
  other learners' rate + right ones) ÷ (PRIOR_STRENGTH + the memory each was tried at, its
  template's as above), the other learners' rate counted the same way (the posterior mean of a
  Gamma-Poisson rate with the class's as its prior; on a concept no one else has tried, their
  rate over all concepts).
  Counting per unit of memory, not per try, keeps forgetting out of skill: a try made at half
  memory weighs half a try, so skill × memory does not count forgetting twice. The template's
  skill is the mean of its concepts' (each is already a rate of whole problems right, so a mean,
  not a product), at most 1.

A prediction is made for an answer to a template the learner has a schedule for (its first
answer has none); beside it, the template's own schedule's retrievability, what FSRS alone says.
Each row is predicted from the rows before it, then counted: the rows are every learner's,
oldest first, so nothing after an answer is read for it, the class's rates included.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import fsrs

from felab_sim.engine.problems import concepts

from . import scheduling

# The class's rate weighs as much as two of the learner's own first tries at full memory: enough
# to keep a learner's first answer or two from reading as certainty (one right try alone would
# otherwise say skill 1), little enough that the learner's own record leads after a handful of
# tries, as a class's learners differ widely (on the simulated class, from about 20% to 90% right).
PRIOR_STRENGTH = 2.0
# Before the class has any first try on a concept: even odds.
NO_CLASS_RATE = 0.5
# A concept's schedule is reviewed at every first try that uses it: right without a hint is
# "Got it", anything else "Missed it" (the site's own ratings of a first try).
RIGHT_RATING, WRONG_RATING = 3, 1
ALL = "*"  # a learner's rate over every concept, beside their rate on each


@dataclass(frozen=True)
class Answer:
    """One answer as the predictor reads it: whose (any hashable key), which template (its slug:
    its concepts), when, the rating the schedule got and whether it counted as a review, and
    whether its first try was right without a hint."""

    learner: object
    template: str
    at: datetime
    rating: int
    is_review: bool
    right: bool
    ref: object = None  # the caller's handle on the row, handed back with its prediction


@dataclass(frozen=True)
class Prediction:
    ref: object
    recall: float  # FSRS's retrievability of the template's schedule (what the site schedules by)
    memory: float  # the lowest of FSRS's retrievability of the template's concepts
    skill: float
    right: bool

    @property
    def chance(self) -> float:
        return self.skill * self.memory


@dataclass
class _Rate:
    right: float = 0.0
    exposure: float = 0.0  # the memory each try was made at, summed


@dataclass
class _State:
    templates: dict[tuple[object, str], fsrs.Card] = field(default_factory=dict)  # (learner, template)
    concepts: dict[tuple[object, str], fsrs.Card] = field(default_factory=dict)  # (learner, concept)
    learner: dict[tuple[object, str], _Rate] = field(default_factory=dict)  # (learner, concept or ALL)
    class_: dict[str, _Rate] = field(default_factory=dict)  # by concept
    class_all: _Rate = field(default_factory=_Rate)


def _others_rate(state: _State, learner: object, concept: str) -> float:
    """The other learners' rate on the concept (the learner's own tries are the likelihood, so
    they stay out of the prior); on all concepts where they never tried this one."""
    for whole, mine in (
        (state.class_.get(concept), state.learner.get((learner, concept))),
        (state.class_all, state.learner.get((learner, ALL))),
    ):
        mine = mine or _Rate()
        if whole is not None and whole.exposure - mine.exposure > 1e-9:
            return (whole.right - mine.right) / (whole.exposure - mine.exposure)
    return NO_CLASS_RATE


def _concept_memory(state: _State, learner: object, concept: str, at: datetime) -> float:
    card = state.concepts.get((learner, concept))
    if card is None:
        return 1.0  # never practised: as fresh as the lesson just read
    return scheduling.card_retrievability(card, at) or 0.0


class Predictor:
    """Reads answers in order (every learner's, oldest first) and predicts each from those before."""

    def __init__(self) -> None:
        self._state = _State()

    def skill_and_memory(self, learner: object, template: str, at: datetime) -> tuple[float, float]:
        """The learner's skill on the template and its memory at `at`, from the answers read so far."""
        needs = _needs(template)
        return self._skill(learner, needs), self._memory(learner, needs, scheduling.as_utc(at))

    def _skill(self, learner: object, needs: tuple[str, ...]) -> float:
        state = self._state
        skill = sum(
            (PRIOR_STRENGTH * _others_rate(state, learner, concept) + mine.right)
            / (PRIOR_STRENGTH + mine.exposure)
            for concept in needs
            for mine in (state.learner.get((learner, concept), _Rate()),)
        ) / len(needs)
        return min(1.0, skill)

    def _memory(self, learner: object, needs: tuple[str, ...], at: datetime) -> float:
        return min(_concept_memory(self._state, learner, concept, at) for concept in needs)

    def read(self, answer: Answer) -> Prediction | None:
        """The answer's prediction (None for a template's first answer), then the answer counted."""
        state = self._state
        key = (answer.learner, answer.template)
        at = scheduling.as_utc(answer.at)
        card = state.templates.get(key)
        needs = _needs(answer.template)
        memory = self._memory(answer.learner, needs, at)
        found = None
        if card is not None:
            recall = scheduling.card_retrievability(card, at) or 0.0
            found = Prediction(answer.ref, recall, memory, self._skill(answer.learner, needs), answer.right)
        _count(state, answer, needs, memory, at)
        if answer.is_review and (card is None or scheduling.is_due(card.due, at)):
            state.templates[key] = _reviewed(card, answer.rating, at)
        return found


def _needs(template: str) -> tuple[str, ...]:
    # A template with no concepts declared (one added in the admin) stands for its own.
    return concepts.of_template(template) or (f"template/{template}",)


def predict(answers: Iterable[Answer], predictor: Predictor | None = None) -> list[Prediction]:
    """A prediction for each answer to a template the learner answered before (every learner's
    answers, oldest first), each read from the rows before it only; `predictor`, when given,
    holds them all after."""
    predictor = predictor or Predictor()
    return [found for answer in answers if (found := predictor.read(answer)) is not None]


def _reviewed(card: fsrs.Card | None, rating: int, at: datetime) -> fsrs.Card:
    return scheduling.SCHEDULER.review_card(card or scheduling.new_card(0, at), fsrs.Rating(rating),
                                            review_datetime=at)[0]  # fmt: skip


def _count(state: _State, answer: Answer, needs: tuple[str, ...], memory: float, at: datetime) -> None:
    """The answer's first try, counted for its learner and the class on each of its concepts at
    the memory its template had (its weakest concept's, the memory a prediction multiplies by),
    and reviewed on each concept's schedule."""
    right = float(answer.right)
    for concept in needs:
        for rate in (
            state.learner.setdefault((answer.learner, concept), _Rate()),
            state.class_.setdefault(concept, _Rate()),
            state.learner.setdefault((answer.learner, ALL), _Rate()),
            state.class_all,
        ):
            rate.right += right
            rate.exposure += memory
        state.concepts[(answer.learner, concept)] = _reviewed(
            state.concepts.get((answer.learner, concept)), RIGHT_RATING if answer.right else WRONG_RATING, at
        )
