from __future__ import annotations

from django.conf import settings
from django.db import models
from django.http import HttpRequest
from django.utils import timezone

from lessons.models import Card


class Rating(models.IntegerChoices):
    """The four self-assessments, in plain words; values follow FSRS (Again..Easy)."""

    MISSED_IT = 1, "Missed it"
    HARD = 2, "Hard"
    GOT_IT = 3, "Got it"
    EASY = 4, "Easy"


def learner_session_key(request: HttpRequest) -> str:
    """The session key that identifies an anonymous learner, creating the session if needed."""
    if not request.session.session_key:
        request.session.save()
    return request.session.session_key or ""


class ReviewQuerySet(models.QuerySet["Review"]):
    def for_learner(self, request: HttpRequest) -> ReviewQuerySet:
        """Only the requesting learner's reviews: their account's, or their session's."""
        if request.user.is_authenticated:
            return self.filter(user=request.user)
        key = request.session.session_key
        return self.filter(user__isnull=True, session_key=key) if key else self.none()


class Review(models.Model):
    """One self-assessment of a card: who, which card, how it went, when."""

    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="reviews")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="reviews"
    )
    session_key = models.CharField(max_length=40, blank=True, db_index=True)
    rating = models.PositiveSmallIntegerField(choices=Rating.choices)
    reviewed_at = models.DateTimeField(default=timezone.now, db_index=True)

    objects = ReviewQuerySet.as_manager()

    class Meta:
        ordering = ["-reviewed_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False) | ~models.Q(session_key=""),
                name="review_has_a_learner",
            ),
            models.CheckConstraint(
                condition=models.Q(rating__gte=1, rating__lte=4), name="review_rating_1_to_4"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.card.label}: {self.get_rating_display()}"

    @classmethod
    def record(cls, request: HttpRequest, card: Card, rating: Rating) -> Review:
        if request.user.is_authenticated:
            return cls.objects.create(card=card, user=request.user, rating=rating)
        return cls.objects.create(card=card, session_key=learner_session_key(request), rating=rating)
