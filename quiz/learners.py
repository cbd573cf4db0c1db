"""Who is studying: an account, or an anonymous visitor known by a random id in their session.

The one place that reads a learner from a request, starts an anonymous learner, and
hands an anonymous learner's work to their account when they log in (Django's user_logged_in
signal; a new account's profile comes from accounts' account_created). Every row in
quiz.models belongs to exactly one learner, and every read goes through
`for_learner`, so nobody sees another's answers or ratings.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.db import models, transaction
from django.dispatch import receiver
from django.http import HttpRequest

from accounts.signals import account_created

from .models import (
    CardState,
    HintsBeforeAnswer,
    LearnerProfile,
    PracticeAttempt,
    PracticeSet,
    PracticeState,
    Rating,
    Review,
    Showing,
)

# The anonymous learner's id lives in the session's data. It is a random id of its own,
# never the session key: rows and the admin may show it without handing anyone a
# session cookie. Django cycles the session key at log in; the data survives that.
LEARNER_SESSION_FIELD = "quiz_learner"


def new_anonymous_id() -> str:
    """A fresh, unguessable id for an anonymous learner (32 hex digits)."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class Learner:
    """An account, or an anonymous learner's id; possibly nobody yet."""

    user: Any = None
    anonymous_id: str = ""

    @classmethod
    def of(cls, request: HttpRequest) -> Learner:
        """The requesting learner, without creating anything (safe for GET)."""
        if request.user.is_authenticated:
            return cls(user=request.user)
        return cls(anonymous_id=request.session.get(LEARNER_SESSION_FIELD, ""))

    @classmethod
    def of_or_start(cls, request: HttpRequest) -> Learner:
        """The requesting learner, giving an anonymous visitor an id to record against."""
        learner = cls.of(request)
        if learner.known:
            return learner
        learner = cls(anonymous_id=new_anonymous_id())
        request.session[LEARNER_SESSION_FIELD] = learner.anonymous_id
        return learner

    @property
    def known(self) -> bool:
        return self.user is not None or bool(self.anonymous_id)

    @property
    def is_anonymous(self) -> bool:
        return self.user is None

    def owner_filter(self) -> models.Q:
        """This learner's rows: their account's, or their anonymous id's."""
        if self.user is not None:
            return models.Q(user=self.user)
        return models.Q(user__isnull=True, anonymous_id=self.anonymous_id)

    def owner_fields(self) -> dict[str, Any]:
        """The columns that say a row is this learner's."""
        if self.user is not None:
            return {"user": self.user, "anonymous_id": ""}
        return {"user": None, "anonymous_id": self.anonymous_id}

    @transaction.atomic
    def merge_into(self, user: Any) -> int:
        """Hand this anonymous learner's showings and reviews to an account; return the reviews moved.

        Rows are moved, not copied, so nothing is lost or counted twice; the
        account's schedule for each touched card is then replayed from the joined history.
        """
        if not self.is_anonymous or not self.anonymous_id:
            return 0
        card_ids = set(Showing.objects.for_learner(self).values_list("card_id", flat=True))
        Showing.objects.for_learner(self).update(user=user, anonymous_id="")
        moved = Review.objects.for_learner(self).update(user=user, anonymous_id="")
        CardState.objects.for_learner(self).delete()
        account = Learner(user=user)
        for card_id in sorted(card_ids):
            CardState.rebuild(account, card_id)
        self._merge_practice_into(account)
        return moved

    def _merge_practice_into(self, account: Learner) -> None:
        """Practice attempts join the account too; a draw both answered keeps the account's."""
        mine = PracticeAttempt.objects.for_learner(self)
        template_ids = set(mine.values_list("template_id", flat=True))
        answered = PracticeAttempt.objects.for_learner(account).values_list("template_id", "seed")
        for template_id, seed in answered:
            mine.filter(template_id=template_id, seed=seed).delete()
        joining = list(mine.values_list("pk", flat=True))
        mine.update(user=account.user, anonymous_id="")
        _count_the_accounts_hints(account.user, joining)
        PracticeState.objects.for_learner(self).delete()
        for template_id in sorted(template_ids):
            PracticeState.rebuild(account, template_id)
        self._merge_practice_sets_into(account)

    def _merge_practice_sets_into(self, account: Learner) -> None:
        """The session's practice sets join the account's, numbered after them, in their order."""
        after = PracticeSet.objects.for_learner(account).aggregate(n=models.Max("number"))["n"] or 0
        for offset, practice_set in enumerate(
            PracticeSet.objects.for_learner(self).order_by("number"), start=1
        ):
            practice_set.user, practice_set.anonymous_id, practice_set.number = (
                account.user,
                "",
                after + offset,
            )
            practice_set.save(update_fields=["user", "anonymous_id", "number"])


def _count_the_accounts_hints(user: Any, joined: list[int]) -> None:
    """Hints the account took on a draw it then answered signed out, in a session that joins it
    now: the joined attempt counts them, and its rating is no better than Hard, as any attempt
    with a hint is."""
    for attempt in PracticeAttempt.objects.filter(pk__in=joined):
        hints = HintsBeforeAnswer.taken(user.pk, attempt.template_id, attempt.seed)
        if attempt.hints_used >= hints:
            continue
        attempt.first_hints = max(attempt.first_hints, hints)
        attempt.hints_used = hints
        if not attempt.shown_solution:
            attempt.proposed_rating = min(attempt.proposed_rating, Rating.HARD)
            attempt.rating = min(attempt.rating, Rating.HARD)
        attempt.save(update_fields=["first_hints", "hints_used", "proposed_rating", "rating"])


@receiver(user_logged_in, dispatch_uid="quiz_join_session_progress")
def join_session_progress(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """What the visitor studied before logging in becomes the account's.

    By now login() has cycled the session key; the anonymous learner's id was kept
    in the session's data, which survives the cycle.
    """
    session = getattr(request, "session", None)
    if session is None:
        return
    anonymous_id = session.pop(LEARNER_SESSION_FIELD, "")
    if anonymous_id:
        Learner(anonymous_id=anonymous_id).merge_into(user)


@receiver(account_created, dispatch_uid="quiz_profile_of_a_new_account")
def keep_sign_up_consent(sender: Any, user: Any, choices: dict[str, Any], **kwargs: Any) -> None:
    """The new account's profile, with the consent asked at sign-up to show their name."""
    LearnerProfile.objects.create(user=user, share_name=bool(choices.get("share_name")))
