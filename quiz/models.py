"""What students do with cards and practice problems, as rows: an answer shown (Showing), rated
(Review) and its optional parts opened (LayerOpening); each card's and practice template's
schedule (CardState, PracticeState); the answers to a drawn problem (PracticeAttempt); a
student's choices (LearnerProfile).

Every row here belongs to exactly one learner (quiz.learners: an account, or an anonymous
visitor), and every read goes through `for_learner` (quiz.learner_rows), so nobody sees
another's answers or ratings. What is done with the rows lives beside them: rating a card
(card_rating.py), a drawn problem's tries (practice_tries.py), FSRS (scheduling.py), what pages
read (selectors.py), the learner's export (learner_export.py).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any, ClassVar, Self

from django.conf import settings
from django.db import IntegrityError, models, transaction

from lessons.models import Card

from . import clock, scheduling
from .class_mistake_checks import refuse_unless_offered
from .learner_rows import (
    LearnerQuery,
    LearnerQuerySet,
    LearnerRead,
    OwnedByALearner,
    Owner,
    distinct_learners,
    has_a_learner,
    once_per_learner,
)
from .shared_names import shared_name

# A rating may be changed for this long after it was first given.
CHANGE_WINDOW = timedelta(minutes=1)
# An anonymous learner's rows join the class's statistics (/instructor/) once the times the
# server recorded for their own showings, or for their own practice answers, span this long.
# Anyone can mint a CSRF cookie and token pair and POST without loading a page: thirty such
# visitors put thirty "Missed it" votes on a card. A visitor who studies for minutes counts;
# one that posts and leaves does not. An account counts at once.
STUDIED_BEFORE_COUNTED = timedelta(minutes=3)
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


def _anonymous_learners_who_studied(model: type[models.Model], recorded_at: str) -> models.QuerySet:
    """The anonymous ids whose own rows of ``model`` were recorded at times spanning at least
    STUDIED_BEFORE_COUNTED (the server's clock, never a form's)."""
    return (
        model.objects.filter(user__isnull=True)
        .order_by()
        .values("anonymous_id")
        .annotate(first=models.Min(recorded_at), last=models.Max(recorded_at))
        .filter(last__gte=models.F("first") + STUDIED_BEFORE_COUNTED)
        .values("anonymous_id")
    )


def in_class_statistics(prefix: str = "") -> models.Q:
    """The rows (through ``prefix``, e.g. "showing__") of learners the class's statistics count:
    every account, and the anonymous learners who studied for STUDIED_BEFORE_COUNTED."""
    anonymous_id_in = f"{prefix}anonymous_id__in"
    return (
        models.Q(**{f"{prefix}user__isnull": False})
        | models.Q(**{anonymous_id_in: _anonymous_learners_who_studied(Showing, "shown_at")})
        | models.Q(**{anonymous_id_in: _anonymous_learners_who_studied(PracticeAttempt, "answered_at")})
    )


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
        """Per card id, how many learners counted in the class revealed its answer."""
        rows = self.filter(in_class_statistics()).values("card_id").annotate(n=distinct_learners()).order_by()
        return {row["card_id"]: row["n"] for row in rows}

    def latest_answers(self, limit: int) -> ShowingQuerySet:
        """What learners counted in the class typed last."""
        return (
            self.filter(in_class_statistics())
            .exclude(answer="")
            .select_related("card__lesson__course", "user__learner_profile")
            .order_by("-shown_at", "-id")[:limit]
        )


class Showing(OwnedByALearner, models.Model):
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
        constraints = [has_a_learner("showing_has_one_learner")]
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
        fields = scheduling.schedule_after(subject_id, history)
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
        """Per card id, how many learners counted in the class have each value as their latest rating."""
        counts: dict[int, dict[int, int]] = defaultdict(dict)
        rows = (
            self.filter(in_class_statistics())
            .values("card_id", "last_rating")
            .annotate(n=models.Count("id"))
            .order_by()
        )
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
            *once_per_learner(["card"], "one_schedule_per_account", "one_schedule_per_anonymous_learner"),
            has_a_learner("schedule_has_one_learner"),
        ]

    def __str__(self) -> str:
        return f"{self.card.label} due {self.due:%Y-%m-%d %H:%M}"

    @classmethod
    def history(cls, learner: Owner, subject_id: int) -> list[tuple[int, datetime]]:
        return Review.objects.for_learner(learner).history(subject_id)


class LayerOpeningQuerySet(models.QuerySet):
    def opened_by(self) -> dict[tuple[int, str], int]:
        """Per (card id, layer), how many learners counted in the class opened it."""
        rows = (
            self.filter(in_class_statistics("showing__"))
            .values("showing__card_id", "layer")
            .annotate(n=distinct_learners("showing__"))
            .order_by()
        )
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
    def in_class_statistics(self) -> PracticeAttemptQuerySet:
        """The attempts of learners the class's statistics count (in_class_statistics)."""
        return self.filter(in_class_statistics())

    def history(self, template_id: int) -> list[tuple[int, datetime]]:
        """(rating, when) of the learner's reviews of one template (attempts begun while it was
        new or due, and due as the schedule replays them), oldest first, for fsrs."""
        rows = self.filter(template_id=template_id, is_review=True).order_by("answered_at", "id")
        return scheduling.due_ones(template_id, list(rows.values_list("rating", "answered_at")))

    def latest_for(self, template_id: int) -> PracticeAttempt | None:
        return self.filter(template_id=template_id).order_by("-answered_at", "-id").first()


class PracticeAttempt(OwnedByALearner, models.Model):
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
    # Set at the first try: FSRS schedules what is due, so an attempt at a template that was not
    # due then is practice and its rating leaves the schedule alone.
    is_review = models.BooleanField(
        default=True, help_text="The template was new or due at the first try, so FSRS counts its rating."
    )
    # Many seeds draw the same problem; mastery counts each problem once per learner.
    repeats_a_problem = models.BooleanField(
        default=False, help_text="An earlier attempt of this learner's had the same template and answer."
    )

    objects = PracticeAttemptQuerySet.as_manager()

    class Meta:
        ordering = ["-answered_at"]
        constraints = [
            has_a_learner("practice_attempt_has_one_learner"),
            # A problem counts once: answering the same draw again, after its solution, would
            # feed the schedule an answer read off the page.
            *once_per_learner(
                ["template", "seed"],
                "practice_problem_counted_once_per_account",
                "practice_problem_counted_once_per_anonymous_learner",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.template.slug} seed {self.seed}: {self.verdict}"

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

    def open_for_rating(self, now: datetime) -> bool:
        """Within the change window, and not after Show me: a solution read off the page is a
        miss whatever the learner says of it."""
        return not self.shown_solution and now - self.answered_at < CHANGE_WINDOW

    @property
    def error_ratio(self) -> float:
        """How many times off, 1.0 when exact (never below 1)."""
        if self.ratio <= 0:
            return float("inf")
        return max(self.ratio, 1 / self.ratio)

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


class HintsBeforeAnswer(models.Model):
    """Steps an account took by Hint on a draw it has not answered yet. An anonymous learner's are
    kept in its session, the only place its id lives; an account may be signed in on several
    devices or sign out and in again, so its hints are kept here, where each of its sessions
    reads them, and the first answer is graded with them."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    template = models.ForeignKey("lessons.PracticeTemplate", on_delete=models.CASCADE, related_name="+")
    seed = models.PositiveIntegerField()
    hints = models.PositiveSmallIntegerField()
    taken_at = models.DateTimeField(default=clock.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "template", "seed"], name="hints_before_answer_once_per_draw"
            )
        ]

    def __str__(self) -> str:
        return f"{self.hints} hints on seed {self.seed}"

    @classmethod
    def taken(cls, user_id: int, template_id: int, seed: int) -> int:
        row = cls.objects.filter(user_id=user_id, template_id=template_id, seed=seed).only("hints").first()
        return row.hints if row is not None else 0

    @classmethod
    def record(cls, user_id: int, template_id: int, seed: int, hints: int) -> None:
        """Never fewer than recorded: of two presses at once, the larger count stays."""
        with transaction.atomic():
            row, created = cls.objects.select_for_update().get_or_create(
                user_id=user_id, template_id=template_id, seed=seed, defaults={"hints": hints}
            )
            if not created and hints > row.hints:
                row.hints = hints
                row.save(update_fields=["hints"])


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
            *once_per_learner(
                ["template"],
                "one_practice_schedule_per_account",
                "one_practice_schedule_per_anonymous_learner",
            ),
            has_a_learner("practice_schedule_has_one_learner"),
        ]

    def __str__(self) -> str:
        return f"{self.template.slug} due {self.due:%Y-%m-%d %H:%M}"

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


class PracticeSetQuerySet(LearnerQuerySet):
    def latest_first(self) -> PracticeSetQuerySet:
        return self.order_by("-number")


class PracticeSet(OwnedByALearner, models.Model):
    """A mixed practice set: problems drawn by the server across the lessons the learner has
    started (quiz.practice_sets), stored with their order so a reload, the back button, a second
    tab or a resent form finds the same set. Each item is one draw (template and seed), answered
    on its own practice page's rules, so its PracticeAttempt (one per learner and draw) says how
    it went: a set holds no answers of its own."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="practice_sets",
    )
    anonymous_id = models.CharField(max_length=40, blank=True, db_index=True)
    # 1, 2, 3… per learner: the address (/practice/set/N/) and what makes "start a new set" count
    # once. The start form names the number it would make; a second submit finds it made.
    number = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=clock.now)

    objects = PracticeSetQuerySet.as_manager()

    class Meta:
        constraints = [
            has_a_learner("practice_set_has_one_learner"),
            *once_per_learner(["number"], "practice_set_number_once_per_account",
                              "practice_set_number_once_per_anonymous_learner"),
        ]  # fmt: skip

    def __str__(self) -> str:
        return f"practice set {self.number}"


class PracticeSetItem(models.Model):
    """One problem of a practice set, at its place in the order."""

    practice_set = models.ForeignKey(PracticeSet, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField(help_text="1 for the first problem.")
    template = models.ForeignKey("lessons.PracticeTemplate", on_delete=models.CASCADE, related_name="+")
    seed = models.PositiveIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(
                fields=["practice_set", "position"], name="practice_set_item_once_per_place"
            )
        ]

    def __str__(self) -> str:
        return f"{self.practice_set} #{self.position}: {self.template_id} seed {self.seed}"


class ClassMistake(models.Model):
    """A mistake an instructor named from the class's answers: a slug, the sentence students read,
    and a formula over the draw's numbers. Offered like a template's own named mistakes, with the
    same check that it is told apart from the right answer and from every other mistake
    (felab_sim.engine.problems.mistakes); /instructor/ finds the groups worth naming."""

    template = models.ForeignKey(
        "lessons.PracticeTemplate", on_delete=models.CASCADE, related_name="class_mistakes"
    )
    slug = models.SlugField(
        max_length=60,
        help_text="Lower-case words joined by hyphens, e.g. doubled-twice; recorded on each answer that makes it.",
    )
    says = models.TextField(
        max_length=400,
        help_text="The one sentence students read: what the answer is and what to check. "
        "{name} and {out.KEY} print the draw's numbers.",
    )
    formula = models.CharField(
        max_length=200,
        help_text="This mistake's answer from the draw, in the answer's unit: e.g. answer * 2, answer / 1.073741824, "
        "answer / context_tokens. Names: answer, each input, out_KEY for each output (after_… after the change); "
        "numbers, + - * / ** and brackets only.",
    )
    created_at = models.DateTimeField(default=clock.now)

    class Meta:
        ordering = ["template", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["template", "slug"], name="class_mistake_slug_once_per_template")
        ]

    def __str__(self) -> str:
        return f"{self.slug} ({self.template.slug if self.template_id else '?'})"

    def as_mistake(self) -> Any:  # -> felab_sim.engine.problems.mistakes.Mistake
        from felab_sim.engine.problems.formulas import parse_formula
        from felab_sim.engine.problems.mistakes import Mistake

        return Mistake(slug=self.slug, says=self.says.strip(), formula=parse_formula(self.formula))

    def clean(self) -> None:
        refuse_unless_offered(self)
