"""Rows that belong to one learner: whom a row is for, the reads that see only one learner's
rows, and the constraints every such table carries.

A learner is an account or an anonymous learner's random id (quiz.learners), and a row holds
exactly one of the two: its ``user`` or, without one, its ``anonymous_id``. Every read of
quiz's rows goes through ``for_learner`` or one of the reads here, so nobody sees another's
answers or ratings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from django.db import models

from serving.prepared import PreparedQuery


class Owner(Protocol):
    """Whom rows belong to: a quiz.learners.Learner, or a row that already belongs to one."""

    @property
    def known(self) -> bool: ...

    def owner_filter(self) -> models.Q: ...

    def owner_fields(self) -> dict[str, Any]: ...


def owner_filter_of(user_id: int | None, anonymous_id: str) -> models.Q:
    """The rows of a row's learner, from that row's two columns."""
    if user_id is not None:
        return models.Q(user_id=user_id)
    return models.Q(user__isnull=True, anonymous_id=anonymous_id)


class OwnedByALearner:
    """What a row with a learner's two columns (``user_id``, ``anonymous_id``) says of its owner:
    a Showing, a PracticeAttempt, or a RowOwner naming one."""

    user_id: int | None
    anonymous_id: str

    @property
    def known(self) -> bool:
        return True

    def owner_filter(self) -> models.Q:
        return owner_filter_of(self.user_id, self.anonymous_id)

    def owner_fields(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "anonymous_id": self.anonymous_id}


@dataclass(frozen=True)
class RowOwner(OwnedByALearner):
    """A learner named as a row names them: an account's id, or no account and an anonymous id."""

    user_id: int | None
    anonymous_id: str = ""


class LearnerQuerySet(models.QuerySet):
    def for_learner(self, learner: Owner) -> models.QuerySet:
        """Only this learner's rows: their account's, or their anonymous id's."""
        return self.filter(learner.owner_filter()) if learner.known else self.none()

    def learner_count(self) -> int:
        return self.aggregate(n=distinct_learners())["n"]


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
            return build(RowOwner(user_id=user), **values)

        def of_anonymous(anonymous_id: str, **values: Any) -> models.QuerySet[RowModel]:
            return build(RowOwner(user_id=None, anonymous_id=anonymous_id), **values)

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


def distinct_learners(prefix: str = "") -> models.Expression:
    """How many different learners: accounts plus anonymous learners."""
    return models.Count(f"{prefix}user", distinct=True) + models.Count(
        f"{prefix}anonymous_id", distinct=True, filter=models.Q(**{f"{prefix}user__isnull": True})
    )


def has_a_learner(name: str) -> models.CheckConstraint:
    """A row has an account and no anonymous id, or no account and an anonymous id."""
    return models.CheckConstraint(
        condition=models.Q(user__isnull=False, anonymous_id="")
        | models.Q(user__isnull=True) & ~models.Q(anonymous_id=""),
        name=name,
    )


def once_per_learner(
    fields: list[str], per_account: str, per_anonymous: str
) -> list[models.UniqueConstraint]:
    """``fields`` unique for each account and, apart, for each anonymous learner (a row has one
    of the two: has_a_learner)."""
    return [
        models.UniqueConstraint(
            fields=[*fields, "user"], condition=models.Q(user__isnull=False), name=per_account
        ),
        models.UniqueConstraint(
            fields=[*fields, "anonymous_id"], condition=models.Q(user__isnull=True), name=per_anonymous
        ),
    ]
