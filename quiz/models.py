"""What students do with cards: show the answer, rate themselves, come back when due.

Every row here belongs to exactly one learner (quiz.learners: an account, or an
anonymous visitor), and every read goes through `for_learner`, so nobody sees
another's answers or ratings.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from django.conf import settings
from django.db import IntegrityError, models, transaction

from accounts.instructors import is_instructor
from felab_sim.engine import answers
from lessons.models import Card
from serving.prepared import PreparedQuery

from . import clock, scheduling

# A rating may be changed for this long after it was first given.
CHANGE_WINDOW = timedelta(minutes=1)
ANSWER_MAX_LENGTH = 4000


class Rating(models.IntegerChoices):
    """The four self-assessments, in plain words; values follow FSRS (Again..Easy)."""

    MISSED_IT = 1, "Missed it"
    HARD = 2, "Hard"
    GOT_IT = 3, "Got it"
    EASY = 4, "Easy"


# Each rating's words by value: the card page prints one on every request, and a dict lookup is
# a fraction of get_rating_display()'s work.
RATING_LABELS: dict[int, str] = dict(Rating.choices)


class Layer(models.TextChoices):
    """Parts of the answer a student opens on purpose, beyond the reveal itself."""

    DEEPER = "deeper", "Go deeper"


def run_starter_shown_to(owner: Any, viewer: Any) -> str:
    """A simulator run's starter as another signed-in user may see them: to an instructor, as
    on /instructor/; to anyone else, not at all. felab_sim asks through runs.show_starters_by."""
    return shared_name(owner) if is_instructor(viewer) else ""


def shared_name(user: Any) -> str:
    """A learner as an instructor may see them: a name only with the student's consent."""
    if user is None:
        return "anonymous"
    try:
        shares = user.learner_profile.share_name
    except LearnerProfile.DoesNotExist:
        shares = False
    if shares:
        return user.get_full_name() or user.get_username()
    return "a student (name not shared)"


class Owner(Protocol):
    """Whom rows belong to: a quiz.learners.Learner, or a row that already belongs to one."""

    @property
    def known(self) -> bool: ...

    def owner_filter(self) -> models.Q: ...

    def owner_fields(self) -> dict[str, Any]: ...


class LearnerQuerySet(models.QuerySet):
    def for_learner(self, learner: Owner) -> models.QuerySet:
        """Only this learner's rows: their account's, or their anonymous id's."""
        return self.filter(learner.owner_filter()) if learner.known else self.none()

    def learner_count(self) -> int:
        return self.aggregate(n=_distinct_learners())["n"]


RowModel = TypeVar("RowModel", bound=models.Model)


class LearnerRead(Generic[RowModel]):
    """A learner's rows: ``build(learner, **values)`` makes the queryset, none for an unknown learner."""

    def __init__(self, build: Callable[..., models.QuerySet[RowModel]]) -> None:
        self._build = build

    def run(self, learner: Owner, **values: Any) -> list[RowModel]:
        return list(self._build(learner, **values)) if learner.known else []


class LearnerQuery(Generic[RowModel]):
    """A learner's read that is a large share of a hot page, its SQL built once per process
    (serving/prepared.py).

    An account's rows and an anonymous learner's are different SQL (``user_id = %s`` against
    ``user_id IS NULL AND anonymous_id = %s``), so each kind has its own prepared query.
    ``build(owner, **values)`` makes the queryset for an owner standing in for the learner.
    """

    def __init__(
        self, model: type[RowModel], build: Callable[..., models.QuerySet[RowModel]], **stand_ins: int | str
    ) -> None:
        def of_account(user: int, **values: Any) -> models.QuerySet[RowModel]:
            return build(Showing(user_id=user), **values)

        def of_anonymous(anonymous_id: str, **values: Any) -> models.QuerySet[RowModel]:
            return build(Showing(user_id=None, anonymous_id=anonymous_id), **values)

        self._account = PreparedQuery(model, of_account, user=-7_340_219, **stand_ins)
        self._anonymous = PreparedQuery(
            model, of_anonymous, anonymous_id="felab-stand-in-anonymous-learner", **stand_ins
        )

    def run(self, learner: Owner, **values: Any) -> list[RowModel]:
        if not learner.known:
            return []
        fields = learner.owner_fields()
        # A Learner names its account ("user"), a row its account's id ("user_id").
        user = fields["user"].pk if fields.get("user") is not None else fields.get("user_id")
        if user is not None:
            return self._account.run(user=user, **values)
        return self._anonymous.run(anonymous_id=fields["anonymous_id"], **values)


def _distinct_learners(prefix: str = "") -> models.Expression:
    """How many different learners: accounts plus anonymous learners."""
    return models.Count(f"{prefix}user", distinct=True) + models.Count(
        f"{prefix}anonymous_id", distinct=True, filter=models.Q(**{f"{prefix}user__isnull": True})
    )


def _has_a_learner(name: str) -> models.CheckConstraint:
    return models.CheckConstraint(
        condition=models.Q(user__isnull=False, anonymous_id="")
        | models.Q(user__isnull=True) & ~models.Q(anonymous_id=""),
        name=name,
    )


def _once_per_learner(
    fields: list[str], per_account: str, per_anonymous: str
) -> list[models.UniqueConstraint]:
    """``fields`` unique for each account and, apart, for each anonymous learner (a row has one
    of the two: _has_a_learner)."""
    return [
        models.UniqueConstraint(
            fields=[*fields, "user"], condition=models.Q(user__isnull=False), name=per_account
        ),
        models.UniqueConstraint(
            fields=[*fields, "anonymous_id"], condition=models.Q(user__isnull=True), name=per_anonymous
        ),
    ]


def _card_key(card: Card) -> str:
    return "/".join(str(part) for part in card.natural_key())


class ShowingQuerySet(LearnerQuerySet):
    def current_for(self, learner: Owner, card: Card | int, now: datetime) -> Showing | None:
        """The showing a rating would belong to: the latest, while it is still open for rating."""
        found = _LATEST_SHOWING.run(learner, card=card if isinstance(card, int) else card.pk)
        latest = found[0] if found else None
        if latest is None or not latest.open_for_rating(now):
            return None
        return latest

    def last_answer(self, learner: Owner, card: Card | int) -> str:
        """What the learner typed before the card's answer was last shown ("" if never)."""
        latest = self.for_learner(learner).filter(card=card).order_by("-shown_at", "-id").first()
        return latest.answer if latest else ""

    def revealed_by(self) -> dict[int, int]:
        """Per card id, how many learners revealed its answer."""
        rows = self.values("card_id").annotate(n=_distinct_learners()).order_by()
        return {row["card_id"]: row["n"] for row in rows}

    def latest_answers(self, limit: int) -> ShowingQuerySet:
        return (
            self.exclude(answer="")
            .select_related("card__lesson__course", "user__learner_profile")
            .order_by("-shown_at", "-id")[:limit]
        )


class Showing(models.Model):
    """One time a learner revealed a card's answer, and what they wrote before it."""

    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="showings")
    # Indexed by Meta.indexes, with the card and the time: see there.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="showings",
        db_index=False,
    )
    # An anonymous learner's random id (quiz.learners), never their session key: knowing
    # it opens nobody's session, and the admin refuses lookups on it.
    anonymous_id = models.CharField(max_length=40, blank=True)
    answer = models.TextField("typed answer", blank=True, max_length=ANSWER_MAX_LENGTH)
    shown_at = models.DateTimeField(default=clock.now, db_index=True)

    objects = ShowingQuerySet.as_manager()

    class Meta:
        ordering = ["-shown_at"]
        constraints = [_has_a_learner("showing_has_one_learner")]
        # A learner's latest showing of a card (every card page with its answer shown, every Show
        # answer and rating) is found in the index, however often they pressed Show answer: with
        # the learner's column alone, 5,000 showings doubled a Show answer POST's time (the
        # database read them all and sorted). Each also serves lookups by the learner alone.
        indexes = [
            models.Index(fields=["user", "card", "shown_at", "id"], name="showing_account_card_time"),
            models.Index(
                fields=["anonymous_id", "card", "shown_at", "id"], name="showing_anonymous_card_time"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.card.label} shown {self.shown_at:%Y-%m-%d %H:%M}"

    @classmethod
    def record(cls, learner: Owner, card: Card, answer: str = "") -> Showing:
        # NUL cannot be stored in a PostgreSQL text field, and no one types it on purpose.
        answer = answer.replace("\x00", "").strip()[:ANSWER_MAX_LENGTH]
        return cls.objects.create(
            card=card,
            answer=answer,
            shown_at=clock.now(),
            **learner.owner_fields(),
        )

    @classmethod
    def for_rating(cls, learner: Owner, card: Card, showing_id: str | None) -> Showing:
        """The showing a rating or an opened layer belongs to.

        The page names it when it knows it; a page reached by a plain link that
        showed the answer gets the learner's open showing, or a new one.
        """
        if showing_id:
            # Digits that fit a bigint, or no such showing (PostgreSQL would refuse larger ones).
            if not (showing_id.isascii() and showing_id.isdigit()) or len(showing_id) > 18:
                raise cls.DoesNotExist
            found = _NAMED_SHOWING.run(learner, card=card.pk, showing=int(showing_id))
            if not found:
                raise cls.DoesNotExist
            return found[0]
        now = clock.now()
        return cls.objects.current_for(learner, card, now) or cls.record(learner, card)

    @property
    def known(self) -> bool:
        return True

    def owner_filter(self) -> models.Q:
        """This showing's learner's rows (a Showing always has one)."""
        if self.user_id is not None:
            return models.Q(user_id=self.user_id)
        return models.Q(user__isnull=True, anonymous_id=self.anonymous_id)

    def owner_fields(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "anonymous_id": self.anonymous_id}

    @property
    def review_or_none(self) -> Review | None:
        try:
            return self.review
        except Review.DoesNotExist:
            return None

    def open_for_rating(self, now: datetime) -> bool:
        review = self.review_or_none
        return review is None or now - review.reviewed_at < CHANGE_WINDOW

    def shared_name(self) -> str:
        return shared_name(self.user)

    def as_export(self) -> dict[str, Any]:
        review = self.review_or_none
        return {
            "card": _card_key(self.card),
            "card_title": self.card.label,
            "shown_at": self.shown_at.isoformat(),
            "answer": self.answer,
            "layers_opened": [opening.layer for opening in self.openings.all()],
            "rating": (
                {
                    "value": review.rating,
                    "label": review.get_rating_display(),
                    "reviewed_at": review.reviewed_at.isoformat(),
                }
                if review
                else None
            ),
        }


class Outcome(enum.Enum):
    SAVED = "saved"
    CHANGED = "changed"
    FINAL = "final"


@dataclass(frozen=True)
class Rated:
    review: Review
    outcome: Outcome
    state: CardState | None


class ReviewQuerySet(LearnerQuerySet):
    def history(self, card: Card | int) -> list[tuple[int, datetime]]:
        """(rating, when) of this card's reviews, oldest first, as fsrs replays them."""
        return list(self.filter(card=card).order_by("reviewed_at", "id").values_list("rating", "reviewed_at"))


class Review(models.Model):
    """One self-assessment of a card, given for one showing of its answer."""

    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="reviews")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="reviews"
    )
    anonymous_id = models.CharField(max_length=40, blank=True, db_index=True)
    # One rating per showing: a change within the window replaces it, never adds one.
    showing = models.OneToOneField(Showing, on_delete=models.CASCADE, related_name="review")
    rating = models.PositiveSmallIntegerField(choices=Rating.choices)
    reviewed_at = models.DateTimeField(default=clock.now, db_index=True)

    objects = ReviewQuerySet.as_manager()

    class Meta:
        ordering = ["-reviewed_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False) | ~models.Q(anonymous_id=""),
                name="review_has_a_learner",
            ),
            models.CheckConstraint(
                condition=models.Q(rating__gte=1, rating__lte=4), name="review_rating_1_to_4"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.card.label}: {self.get_rating_display()}"

    @property
    def rating_label(self) -> str:
        """get_rating_display(), looked up directly."""
        return RATING_LABELS[self.rating]

    @classmethod
    def rate(cls, showing: Showing, rating: Rating) -> Rated:
        """Record a rating for a showing, or change it within the window; then reschedule the card.

        The showing comes with its review (Showing.for_rating), so a rating that changes nothing
        (the same button again, or one past the window) writes nothing: 1 query where a write
        costs 9 (bench/bench_http.py's rate POST sends the same rating over and over).
        """
        now = clock.now()
        loaded = showing.review_or_none
        if loaded is not None:
            if now - loaded.reviewed_at >= CHANGE_WINDOW:  # reviewed_at never changes
                return Rated(loaded, Outcome.FINAL, None)
            if loaded.rating == rating:
                states = _CARD_STATE.run(showing, card=showing.card_id)
                return Rated(loaded, Outcome.CHANGED, states[0] if states else None)
        with transaction.atomic():
            review = None
            if loaded is None:
                try:
                    with transaction.atomic():  # a savepoint: another request may have rated it first
                        review = cls.objects.create(
                            showing=showing,
                            card_id=showing.card_id,
                            rating=rating,
                            reviewed_at=now,
                            **showing.owner_fields(),
                        )
                    outcome = Outcome.SAVED
                except IntegrityError:
                    review = None
            if review is None:
                review = cls.objects.select_for_update().get(showing=showing)
                if now - review.reviewed_at >= CHANGE_WINDOW:
                    return Rated(review, Outcome.FINAL, None)
                outcome = Outcome.CHANGED
                if review.rating != rating:
                    review.rating = rating
                    review.save(update_fields=["rating"])
            state = CardState.rebuild(showing, showing.card_id)
        return Rated(review, outcome, state)


class ScheduleState(models.Model):
    """Where one learner stands with one thing they review: FSRS's memory of it and when it is
    due. Derived from the learner's ratings of it (`rebuild` replays them), kept as rows so that
    "what is due" and progress are single queries. A card (CardState) and a practice template
    (PracticeState) are scheduled alike; each subclass adds its subject's foreign key, named by
    `subject`, its learner's account key and its uniqueness, and says where its ratings are.
    """

    # The subclass's foreign key to what is scheduled ("card", "template").
    subject: ClassVar[str]

    anonymous_id = models.CharField(max_length=40, blank=True)
    fsrs_card = models.JSONField("FSRS card", default=dict)
    due = models.DateTimeField(db_index=True)
    last_rating = models.PositiveSmallIntegerField(choices=Rating.choices)
    last_reviewed_at = models.DateTimeField()
    review_count = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True
        ordering = ["due"]

    @classmethod
    def history(cls, learner: Owner, subject_id: int) -> list[tuple[int, datetime]]:
        """(rating, when) of the learner's ratings of the subject, oldest first."""
        raise NotImplementedError

    @classmethod
    def rebuild(cls, learner: Owner, subject_id: int) -> Self | None:
        """Replay the learner's ratings of the subject through FSRS and store the result; no
        ratings left (a change of heart cannot do that, a deleted subject can): no row."""
        history = cls.history(learner, subject_id)
        key = {f"{cls.subject}_id": subject_id}
        mine = cls.objects.for_learner(learner).filter(**key)
        if not history:
            mine.delete()
            return None
        fsrs_card = scheduling.replay(subject_id, history, start=history[0][1])
        fields = {
            "fsrs_card": fsrs_card.to_dict(),
            "due": fsrs_card.due,
            "last_rating": history[-1][0],
            "last_reviewed_at": history[-1][1],
            "review_count": len(history),
        }
        # Read, then one UPDATE, in the caller's transaction: update_or_create would add a
        # savepoint around them (two more statements on every rating). The savepoint is kept for
        # the first rating of a subject, whose INSERT another request may make first.
        with transaction.atomic(savepoint=False):
            state = mine.select_for_update().first()
            if state is None:
                try:
                    with transaction.atomic():
                        return cls.objects.create(**key, **learner.owner_fields(), **fields)
                except IntegrityError:
                    state = mine.select_for_update().get()
            for name, value in fields.items():
                setattr(state, name, value)
            state.save(update_fields=list(fields))
        return state


class CardStateQuerySet(LearnerQuerySet):
    def of_showing(self, showing: Showing) -> CardStateQuerySet:
        """The schedule of the showing's card for the showing's learner."""
        return self.for_learner(showing).filter(card_id=showing.card_id)

    def rating_counts(self) -> dict[int, dict[int, int]]:
        """Per card id, how many learners' latest rating is each value."""
        counts: dict[int, dict[int, int]] = defaultdict(dict)
        rows = self.values("card_id", "last_rating").annotate(n=models.Count("id")).order_by()
        for row in rows:
            counts[row["card_id"]][row["last_rating"]] = row["n"]
        return counts


class CardState(ScheduleState):
    """Where one learner stands with one card (ScheduleState), from their reviews of it."""

    subject = "card"

    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="states")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="card_states"
    )

    objects = CardStateQuerySet.as_manager()

    class Meta(ScheduleState.Meta):
        verbose_name = "schedule"
        verbose_name_plural = "schedules"
        constraints = [
            *_once_per_learner(["card"], "one_schedule_per_account", "one_schedule_per_anonymous_learner"),
            _has_a_learner("schedule_has_one_learner"),
        ]

    def __str__(self) -> str:
        return f"{self.card.label} due {self.due:%Y-%m-%d %H:%M}"

    @classmethod
    def history(cls, learner: Owner, subject_id: int) -> list[tuple[int, datetime]]:
        return Review.objects.for_learner(learner).history(subject_id)

    def as_export(self) -> dict[str, Any]:
        return {
            "card": _card_key(self.card),
            "card_title": self.card.label,
            "due": self.due.isoformat(),
            "last_rating": self.last_rating,
            "last_rating_label": self.get_last_rating_display(),
            "last_reviewed_at": self.last_reviewed_at.isoformat(),
            "reviews": self.review_count,
            "fsrs": self.fsrs_card,
        }


class LayerOpeningQuerySet(models.QuerySet):
    def opened_by(self) -> dict[tuple[int, str], int]:
        """Per (card id, layer), how many learners opened it."""
        rows = self.values("showing__card_id", "layer").annotate(n=_distinct_learners("showing__")).order_by()
        return {(row["showing__card_id"], row["layer"]): row["n"] for row in rows}


class LayerOpening(models.Model):
    """A learner opened an optional part of the answer during a showing."""

    showing = models.ForeignKey(Showing, on_delete=models.CASCADE, related_name="openings")
    layer = models.CharField(max_length=20, choices=Layer.choices)
    opened_at = models.DateTimeField(default=clock.now)

    objects = LayerOpeningQuerySet.as_manager()

    class Meta:
        ordering = ["-opened_at"]
        constraints = [
            models.UniqueConstraint(fields=["showing", "layer"], name="layer_opened_once_per_showing")
        ]

    def __str__(self) -> str:
        return f"{self.get_layer_display()} on {self.showing}"

    @classmethod
    def record(cls, showing: Showing, layer: Layer) -> LayerOpening:
        opening, _ = cls.objects.get_or_create(
            showing=showing, layer=layer, defaults={"opened_at": clock.now()}
        )
        return opening


class LearnerProfile(models.Model):
    """A student's choices about their account."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="learner_profile"
    )
    share_name = models.BooleanField(
        "show my name to instructors next to my typed answers",
        default=False,
        help_text="Off: instructors see your answers without your name.",
    )

    def __str__(self) -> str:
        return f"profile of {self.user}"

    @classmethod
    def of(cls, user: Any) -> LearnerProfile:
        """The account's profile, or an unsaved one with the defaults (accounts made before
        profiles existed have none)."""
        found = cls.objects.filter(user_id=user.pk).order_by("pk").first()
        return found if found is not None else cls(user=user)


# Practice problems (issue 22): a learner's numeric answers to problems drawn from a lesson's
# PracticeTemplate, each fed to FSRS like a card's rating (one schedule per template).


class Verdict(models.TextChoices):
    RIGHT = "right", "right"
    CLOSE = "close", "close (within 3× the tolerance)"
    OFF = "off", "off"


# A draw may be answered this many times before its solution is shown.
MAX_TRIES = 3


class PracticeAttemptQuerySet(LearnerQuerySet):
    def history(self, template_id: int) -> list[tuple[int, datetime]]:
        """(rating, when) of the learner's attempts at one template, oldest first, for fsrs."""
        rows = self.filter(template_id=template_id).order_by("answered_at", "id")
        return list(rows.values_list("rating", "answered_at"))

    def latest_for(self, template_id: int) -> PracticeAttempt | None:
        return self.filter(template_id=template_id).order_by("-answered_at", "-id").first()


class PracticeAttempt(models.Model):
    """One answer to one drawn problem: what was typed, how far off it was, the rating it gave."""

    template = models.ForeignKey(
        "lessons.PracticeTemplate", on_delete=models.CASCADE, related_name="attempts"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="practice_attempts",
    )
    anonymous_id = models.CharField(max_length=40, blank=True, db_index=True)
    seed = models.PositiveIntegerField()
    typed = models.CharField(max_length=80)
    value = models.FloatField(help_text="The answer in the template's unit.")
    expected = models.FloatField(help_text="The calculator's answer.")
    ratio = models.FloatField(help_text="value ÷ expected")
    verdict = models.CharField(max_length=10, choices=Verdict.choices)
    seconds = models.FloatField(null=True, blank=True, help_text="From the problem shown to answered.")
    proposed_rating = models.PositiveSmallIntegerField(choices=Rating.choices)
    rating = models.PositiveSmallIntegerField(choices=Rating.choices)
    answered_at = models.DateTimeField(default=clock.now, db_index=True)
    mistake = models.CharField(
        max_length=60, blank=True, help_text="The named mistake the last try matched (its slug), if any."
    )
    tries = models.PositiveSmallIntegerField(default=1, help_text="Answers given to this draw (at most 3).")
    hints_used = models.PositiveSmallIntegerField(default=0, help_text="Steps revealed by Hint.")
    shown_solution = models.BooleanField(default=False, help_text="The learner pressed Show me.")
    first_verdict = models.CharField(
        max_length=10, choices=Verdict.choices, blank=True, help_text="The first try's verdict."
    )
    first_mistake = models.CharField(max_length=60, blank=True, help_text="The first try's named mistake.")
    first_ratio = models.FloatField(null=True, blank=True, help_text="The first try's value ÷ expected.")
    first_hints = models.PositiveSmallIntegerField(default=0, help_text="Hints taken before the first try.")

    objects = PracticeAttemptQuerySet.as_manager()

    class Meta:
        ordering = ["-answered_at"]
        constraints = [
            _has_a_learner("practice_attempt_has_one_learner"),
            # A problem counts once: answering the same draw again, after its solution, would
            # feed the schedule an answer read off the page.
            *_once_per_learner(
                ["template", "seed"],
                "practice_problem_counted_once_per_account",
                "practice_problem_counted_once_per_anonymous_learner",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.template.slug} seed {self.seed}: {self.verdict}"

    @classmethod
    def record(
        cls, learner: Owner, template_id: int, seed: int, typed: str, value: float, expected: float,
        checked: answers.Checked, seconds: float | None, *, mistake: str = "", hints: int = 0,
    ) -> tuple[PracticeAttempt, bool]:  # fmt: skip
        """One try at this draw, rated and scheduled: the first creates the attempt, a later one
        (while the draw is open: not right, under MAX_TRIES, no Show me) updates it; (the attempt,
        False) when the draw is finished and this answer is not counted."""
        mine = cls.objects.for_learner(learner)
        earlier = mine.filter(template_id=template_id, seed=seed).first()
        if earlier is not None and earlier.finished:
            return earlier, False
        latest = mine.exclude(pk=earlier.pk if earlier else None).latest_for(template_id)
        previous_right = latest is not None and latest.verdict == Verdict.RIGHT
        with transaction.atomic():
            if earlier is None:
                attempt = cls(
                    template_id=template_id, seed=seed, tries=0, first_verdict=checked.verdict,
                    first_mistake=mistake, first_hints=hints, first_ratio=checked.ratio,
                    **learner.owner_fields(),
                )  # fmt: skip
            else:
                attempt = earlier
            attempt.typed, attempt.value, attempt.expected = typed[:80], value, expected
            attempt.ratio, attempt.verdict, attempt.mistake = checked.ratio, checked.verdict, mistake
            attempt.seconds, attempt.tries = seconds, attempt.tries + 1
            attempt.hints_used = max(attempt.hints_used, hints)
            attempt.answered_at = clock.now()
            attempt.proposed_rating = attempt.rating = attempt.propose(previous_right)
            attempt.save()
            PracticeState.rebuild(learner, template_id)
        return attempt, True

    @classmethod
    def show_me(
        cls, learner: Owner, template_id: int, seed: int, expected: float, hints: int
    ) -> PracticeAttempt:
        """ "Show me": the steps revealed, the draw finished and rated Missed it."""
        mine = cls.objects.for_learner(learner)
        attempt = mine.filter(template_id=template_id, seed=seed).first()
        if attempt is not None and attempt.finished:
            return attempt
        with transaction.atomic():
            if attempt is None:
                attempt = cls(
                    template_id=template_id, seed=seed, tries=0, typed="", value=0.0, expected=expected,
                    ratio=0.0, verdict=Verdict.OFF, first_hints=hints, **learner.owner_fields(),
                )  # fmt: skip
            attempt.shown_solution = True
            attempt.hints_used = max(attempt.hints_used, hints)
            attempt.answered_at = clock.now()
            attempt.proposed_rating = attempt.rating = Rating.MISSED_IT
            attempt.save()
            PracticeState.rebuild(learner, template_id)
        return attempt

    def propose(self, previous_right: bool) -> int:
        """The rating its tries propose: Show me → Missed it; right at the first try without hints
        as answers.proposed_rating says (Got it, Easy when quick after a right one); right after a
        hint or another try no better than Hard; close Hard; off Missed it."""
        if self.shown_solution:
            return Rating.MISSED_IT
        rating = answers.proposed_rating(self.verdict, previous_right, self.seconds)
        if self.tries > 1 or self.hints_used:
            rating = min(rating, Rating.HARD)
        return rating

    def record_hints(self, hints: int) -> None:
        """A hint taken while the draw is open, so a later try is rated with it."""
        if not self.finished and hints > self.hints_used:
            self.hints_used = hints
            self.save(update_fields=["hints_used"])

    @property
    def finished(self) -> bool:
        """Right, out of tries, or shown: the solution is on the page and the draw counts no more."""
        return self.verdict == Verdict.RIGHT or self.tries >= MAX_TRIES or self.shown_solution

    @property
    def tries_left(self) -> int:
        return 0 if self.finished else MAX_TRIES - self.tries

    @property
    def known(self) -> bool:
        return True

    def owner_filter(self) -> models.Q:
        if self.user_id is not None:
            return models.Q(user_id=self.user_id)
        return models.Q(user__isnull=True, anonymous_id=self.anonymous_id)

    def owner_fields(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "anonymous_id": self.anonymous_id}

    def open_for_rating(self, now: datetime) -> bool:
        return now - self.answered_at < CHANGE_WINDOW

    @property
    def error_ratio(self) -> float:
        """How many times off, 1.0 when exact (never below 1)."""
        if self.ratio <= 0:
            return float("inf")
        return max(self.ratio, 1 / self.ratio)

    def as_export(self) -> dict[str, Any]:
        return {
            "template": self.template.slug,
            "template_title": self.template.title,
            "seed": self.seed,
            "typed": self.typed,
            "value": self.value,
            "expected": self.expected,
            "ratio": self.ratio,
            "verdict": self.verdict,
            "seconds": self.seconds,
            "proposed_rating": {"value": self.proposed_rating, "label": self.get_proposed_rating_display()},
            "rating": {"value": self.rating, "label": self.get_rating_display()},
            "tries": self.tries,
            "hints_used": self.hints_used,
            "shown_solution": self.shown_solution,
            "mistake": self.mistake,
            "first_try": {
                "verdict": self.first_verdict,
                "mistake": self.first_mistake,
                "ratio": self.first_ratio,
                "hints": self.first_hints,
            },
            "answered_at": self.answered_at.isoformat(),
        }

    @property
    def first_error_ratio(self) -> float | None:
        """How many times off the first try was (calibration reads first tries: a retry after
        the verdict is not the learner's own estimate); None after Show me without an answer."""
        ratio = self.first_ratio if self.first_ratio is not None else self.ratio
        if self.tries == 0:
            return None
        return float("inf") if ratio <= 0 else max(ratio, 1 / ratio)

    @property
    def right_first_time(self) -> bool:
        return (self.first_verdict or self.verdict) == Verdict.RIGHT

    def change_rating(self, rating: Rating) -> bool:
        """The student's own rating instead of the proposed one, within the window; False after."""
        if not self.open_for_rating(clock.now()):
            return False
        with transaction.atomic():
            if self.rating != rating:
                self.rating = rating
                self.save(update_fields=["rating"])
            PracticeState.rebuild(self, self.template_id)
        return True


class PracticeStateQuerySet(LearnerQuerySet):
    def of_published_templates(self) -> PracticeStateQuerySet:
        """A template made a draft is nobody's to practise until it is published again."""
        return self.filter(template__published=True, template__lesson__published=True)

    def due(self, now: datetime) -> PracticeStateQuerySet:
        """Templates due at `now` (scheduling.is_due, in SQL), the longest overdue first: the
        practice index's marks; /review/ and /progress/ read quiz.selectors.Schedules."""
        return self.of_published_templates().filter(due__lte=now).order_by("due", "template_id")


class PracticeState(ScheduleState):
    """Where one learner stands with one template (ScheduleState), from their attempts at it."""

    subject = "template"

    template = models.ForeignKey("lessons.PracticeTemplate", on_delete=models.CASCADE, related_name="states")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="practice_states",
    )

    objects = PracticeStateQuerySet.as_manager()

    class Meta(ScheduleState.Meta):
        verbose_name = "practice schedule"
        constraints = [
            *_once_per_learner(
                ["template"],
                "one_practice_schedule_per_account",
                "one_practice_schedule_per_anonymous_learner",
            ),
            _has_a_learner("practice_schedule_has_one_learner"),
        ]

    def __str__(self) -> str:
        return f"{self.template.slug} due {self.due:%Y-%m-%d %H:%M}"

    def as_export(self) -> dict[str, Any]:
        return {
            "template": self.template.slug,
            "template_title": self.template.title,
            "due": self.due.isoformat(),
            "last_rating": self.last_rating,
            "last_rating_label": self.get_last_rating_display(),
            "last_reviewed_at": self.last_reviewed_at.isoformat(),
            "reviews": self.review_count,
            "fsrs": self.fsrs_card,
        }

    @classmethod
    def history(cls, learner: Owner, subject_id: int) -> list[tuple[int, datetime]]:
        return PracticeAttempt.objects.for_learner(learner).history(subject_id)


# The show and rate POSTs' read: building it through the ORM took longer than the rest of the
# request's work (bench_http's rate POST, cProfile).
_LATEST_SHOWING = LearnerQuery(
    Showing,
    lambda owner, card: (
        Showing.objects.for_learner(owner)
        .filter(card_id=card)
        .select_related("review")
        .order_by("-shown_at", "-id")[:1]
    ),
    card=-7_340_223,
)
_NAMED_SHOWING = LearnerRead(
    lambda owner, card, showing: (
        Showing.objects.for_learner(owner).filter(card_id=card, pk=showing).select_related("review")
    ),
)
_CARD_STATE = LearnerRead(
    lambda owner, card: CardState.objects.of_showing(Showing(card_id=card, **owner.owner_fields())),
)
