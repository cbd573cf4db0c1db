"""What the quiz's pages read of the database, as the objects they show: a card's study state
(the learner's showings and the previews they replay), lessons' progress, what is due for
/review/ and /progress/, and the class's use of each card for instructors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.db import models
from django.utils.functional import cached_property

from lessons.models import Card, Lesson, PracticeTemplate

from . import clock, scheduling
from .learner_rows import LearnerQuery, LearnerRead, Owner
from .models import RATING_LABELS, CardState, Layer, LayerOpening, PracticeState, Rating, Review, Showing
from .rating_previews import Preview


@dataclass
class CardProgress:
    card: Card
    state: CardState | None
    now: datetime

    @property
    def rated(self) -> bool:
        return self.state is not None

    @property
    def last_rating_label(self) -> str:
        return RATING_LABELS[self.state.last_rating] if self.state else ""

    @property
    def is_due(self) -> bool:
        return self.state is not None and scheduling.is_due(self.state.due, self.now)

    @property
    def comes_back(self) -> str:
        return scheduling.humanize_interval(self.state.due - self.now) if self.state else ""


class LessonProgress:
    """One lesson, as far as one learner has gone through it.

    Held as the learner's schedules of the lesson's cards: the counts come from those alone, and
    the per-card list (``cards``) is built only where a page shows it. Home and /progress/ build
    one per lesson on every request, and most lessons of most learners have no schedule at all.
    """

    def __init__(self, lesson: Lesson, states: dict[int, CardState], now: datetime) -> None:
        self.lesson = lesson
        self.states = states  # card id -> the learner's schedule, for this lesson's rated cards
        self.now = now

    @classmethod
    def by_lesson(cls, learner: Owner, lessons: Iterable[Lesson], now: datetime) -> dict[int, LessonProgress]:
        """Per lesson id, how far the learner has gone.

        One query; the lessons must come from Course.objects.with_lessons_and_steps (listed_cards).
        """
        return cls.of_schedules(_CARD_SCHEDULES.run(learner), lessons, now)

    @classmethod
    def of_schedules(
        cls, states: Iterable[CardState], lessons: Iterable[Lesson], now: datetime
    ) -> dict[int, LessonProgress]:
        """by_lesson from the learner's card schedules already read (/progress/'s Schedules)."""
        by_card = {state.card_id: state for state in states}
        rated_ids = by_card.keys()
        # Lessons by id, not pk (a property that looks the key's field up): this runs per lesson
        # on every visit to home and /progress/.
        return {
            lesson.id: cls(
                lesson, {card_id: by_card[card_id] for card_id in rated_ids & lesson.listed_card_ids}, now
            )
            for lesson in lessons
        }

    @cached_property
    def cards(self) -> list[CardProgress]:
        states, now = self.states, self.now
        return [CardProgress(card, states.get(card.id), now) for card in self.lesson.listed_cards]

    @property
    def total(self) -> int:
        return len(self.lesson.listed_cards)

    @property
    def rated(self) -> int:
        return len(self.states)

    @property
    def percent(self) -> int:
        return round(100 * self.rated / self.total) if self.total else 0

    @property
    def good(self) -> int:
        """Cards whose last rating is Got it or Easy."""
        return sum(1 for state in self.states.values() if state.last_rating >= Rating.GOT_IT)

    @property
    def good_percent(self) -> int | None:
        return round(100 * self.good / self.rated) if self.rated else None

    @cached_property
    def due_count(self) -> int:
        now = self.now
        return sum(1 for state in self.states.values() if scheduling.is_due(state.due, now))


def _showings_of(owner: Owner, card: int) -> models.QuerySet[Showing]:
    """A learner's rated showings of a card and their latest, with their reviews, oldest first.

    Only the showings with a review, and the latest: a learner who pressed Show answer a
    thousand times (bench_http's POST does) would otherwise read all thousand on every page.
    """
    # Each branch is the learner's own (for_learner) and found through an index; the outer query
    # reads only the showings they name. Filtering the learner's showings of the card for "has a
    # review, or is the latest" instead read every one of them: 0.71 ms at 5,000 showings.
    rated = Review.objects.for_learner(owner).filter(card_id=card).values("showing_id")
    latest = Showing.objects.for_learner(owner).filter(card_id=card).order_by("-shown_at", "-id")
    return (
        Showing.objects.filter(models.Q(pk__in=rated) | models.Q(pk=models.Subquery(latest.values("pk")[:1])))
        .select_related("review")
        .order_by("shown_at", "id")
    )


# Every card page with its answer shown reads it, and the ORM takes far longer to build it than
# the database to answer it: built once per process (serving/prepared.py).
_CARD_SHOWINGS = LearnerQuery(Showing, _showings_of, card=-7_340_223)
# The learner's card schedules, three columns (home, /progress/, /review/): likewise.
_CARD_SCHEDULES = LearnerQuery(
    CardState,
    lambda owner: CardState.objects.for_learner(owner).only("card_id", "due", "last_rating").order_by(),
)
# The cards the learner has opened (home's map).
SEEN_CARDS = LearnerRead(
    lambda owner: Showing.objects.for_learner(owner).values_list("card_id", flat=True).order_by().distinct(),
)
# The learner's practice schedules, four columns (/review/, /progress/ and its mastery's recall): a few
# dozen at most.
_PRACTICE_SCHEDULES = LearnerRead(
    lambda owner: (
        PracticeState.objects.for_learner(owner)
        .only("template_id", "due", "last_rating", "fsrs_card")
        .order_by()
    )
)


@dataclass(frozen=True)
class CardStudy:
    """What a card page shows of one learner's work on it: their showing and the four previews."""

    showing: Showing | None = None
    previews: tuple[Preview, ...] = ()

    @classmethod
    def of(cls, learner: Owner, card: Card) -> CardStudy:
        """One query: the learner's rated showings of the card and the latest, with their reviews,
        oldest first.

        The latest showing is the one a rating belongs to while it is open (as
        Showing.objects.current_for says); the others' reviews are the history the previews
        replay. A review always belongs to its showing's learner, so these are the learner's
        reviews of the card.
        """
        now = clock.now()
        if not learner.known:
            return cls(None, tuple(Preview.for_history(card.pk, [], now)))
        showings = _CARD_SHOWINGS.run(learner, card=card.pk)
        latest = showings[-1] if showings else None
        showing = latest if latest is not None and latest.open_for_rating(now) else None
        # A rating being changed within the window: preview from before it.
        reviews = [
            review
            for review in (each.review_or_none for each in showings if each is not showing)
            if review is not None
        ]
        reviews.sort(key=lambda review: (review.reviewed_at, review.pk))
        history = [(review.rating, review.reviewed_at) for review in reviews]
        return cls(showing, tuple(Preview.for_history(card.pk, history, now)))

    @property
    def typed_answer(self) -> str:
        return self.showing.answer if self.showing else ""

    @property
    def review(self) -> Review | None:
        return self.showing.review_or_none if self.showing else None


@dataclass(frozen=True)
class CardOverview:
    """One card as the class has used it: latest ratings, reveals and opened layers."""

    card: Card
    counts: dict[int, int]
    revealed: int
    opened: dict[str, int]

    @classmethod
    def for_cards(cls, cards: Iterable[Card]) -> list[CardOverview]:
        counts = CardState.objects.rating_counts()
        revealed = Showing.objects.revealed_by()
        opened = LayerOpening.objects.opened_by()
        return [
            cls(
                card=card,
                counts=counts.get(card.pk, {}),
                revealed=revealed.get(card.pk, 0),
                opened={layer: opened.get((card.pk, layer), 0) for layer in Layer.values},
            )
            for card in cards
        ]

    @property
    def rated(self) -> int:
        return sum(self.counts.values())

    def ratings(self) -> list[tuple[int, str, int]]:
        return [(value, label, self.counts.get(value, 0)) for value, label in Rating.choices]

    def layers(self) -> list[tuple[str, int]]:
        return [(label, self.opened.get(value, 0)) for value, label in Layer.choices]


@dataclass(frozen=True)
class DueItem:
    """One thing /review/ lists: a card, or a practice template (answered with a new draw)."""

    kind: str  # "card" or "practice"
    label: str
    url: str
    lesson_number: int
    due: datetime
    last_rating_label: str

    @property
    def review_url(self) -> str:
        """Where reviewing it starts: a card in the card page's review flow, a template's new draw."""
        return f"{self.url}?review=1" if self.kind == "card" else self.url

    @classmethod
    def of_card(cls, state: CardState) -> DueItem:
        card = state.card
        # page_url and RATING_LABELS: the cards are kept per content version, /review/ is not.
        return cls("card", card.label, card.page_url, card.lesson.number, state.due,
                   RATING_LABELS[state.last_rating])  # fmt: skip

    @classmethod
    def of_practice(cls, state: PracticeState) -> DueItem:
        # No seed: the problem page draws a fresh one, so a review never repeats a problem.
        template = state.template
        return cls("practice", template.title, template.get_absolute_url(), template.lesson.number, state.due,
                   RATING_LABELS[state.last_rating])  # fmt: skip


S = TypeVar("S", CardState, PracticeState)


def _published(states: Iterable[S], subject: str, published: dict[int, Any]) -> tuple[S, ...]:
    """The schedules of published subjects, each given its subject, soonest first."""
    kept = []
    key = f"{subject}_id"
    for state in states:
        found = published.get(getattr(state, key))
        if found is not None:
            setattr(state, subject, found)
            kept.append(state)
    kept.sort(key=lambda state: (state.due, getattr(state, key)))
    return tuple(kept)


@dataclass(frozen=True)
class Schedules:
    """What is a learner's to review, for /review/ and /progress/ alike: their schedules of the
    published cards and of the published practice templates, each soonest first, and which of
    them are due (scheduling.is_due): /progress/ counts exactly what /review/ lists.

    Two queries of three columns each, the card schedules and the practice schedules, joined
    here to the published cards and templates kept per content version rather than by the
    database (the join and the content's columns cost more to build and read than the page's
    rendering; a card or template not among them is a draft, nobody's to review).
    """

    cards: tuple[CardState, ...]
    practice: tuple[PracticeState, ...]

    @classmethod
    def of(
        cls,
        learner: Owner,
        published_cards: dict[int, Card],
        published_templates: dict[int, PracticeTemplate],
    ) -> Schedules:
        return cls(
            _published(_CARD_SCHEDULES.run(learner), "card", published_cards),
            _published(_PRACTICE_SCHEDULES.run(learner), "template", published_templates),
        )

    @property
    def dues(self) -> list[datetime]:
        """When each card and practice problem is due."""
        return [state.due for state in self.cards] + [state.due for state in self.practice]

    def due(self, now: datetime) -> list[DueItem]:
        """The cards and practice templates due at `now`, the longest overdue first."""
        due = [DueItem.of_card(state) for state in self.cards if scheduling.is_due(state.due, now)]
        due += [DueItem.of_practice(state) for state in self.practice if scheduling.is_due(state.due, now)]
        due.sort(key=lambda item: item.due)  # stable: cards first on a tie
        return due

    def next_due(self, now: datetime) -> DueItem | None:
        """What comes back soonest after `now`."""
        card = next((state for state in self.cards if not scheduling.is_due(state.due, now)), None)
        practice = next((state for state in self.practice if not scheduling.is_due(state.due, now)), None)
        items = ([DueItem.of_card(card)] if card else []) + (
            [DueItem.of_practice(practice)] if practice else []
        )
        return min(items, key=lambda item: item.due, default=None)
