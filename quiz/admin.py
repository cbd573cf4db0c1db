"""Students' records in the admin: read-only for everyone, names only with consent.

Instructors hold view permission on these models (migration 0005) and nothing
else here; superusers see the same read-only pages. What students wrote and how
they rated it is their record, so no one edits it by hand.

Who a row belongs to stays out of reach: the account and the anonymous id are
neither shown nor accepted in a lookup (`?user=3`, `?anonymous_id__startswith=a`,
`?showing__user__username=sam` are refused with a 400), so no one can single out one
student's rows or probe an id one character at a time. The learner column names a
student only if they chose to share their name, for superusers too.

The one thing here instructors edit is no student's record: a mistake they name from the
class's answers (ClassMistake, found on /instructor/), which practice offers from then on.
"""

from typing import Any

from django.contrib import admin
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest

from .models import CardState, ClassMistake, LayerOpening, Review, Showing
from .shared_names import shared_name

# What the Instructors group may view here (migration 0005 grants it, accounts.instructors
# gives it back after a flush): the student's profile, their consent flag, stays out.
INSTRUCTORS_VIEW = ["review", "showing", "cardstate", "layeropening"]
# What the Instructors group may add, change, delete and view here (migration 0014).
INSTRUCTORS_EDIT = ["classmistake"]
# The columns that say whose a row is, under every name a lookup may use.
LEARNER_FIELDS = frozenset({"user", "user_id", "anonymous_id"})


def names_a_learner(lookup: str) -> bool:
    """Whether a lookup path goes through whose a row is, anywhere along it."""
    return not LEARNER_FIELDS.isdisjoint(lookup.split(LOOKUP_SEP))


class ReadOnlyAdmin(admin.ModelAdmin):
    exclude: tuple[str, ...] = ("user", "anonymous_id")
    list_select_related = ("user__learner_profile",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if names_a_learner(lookup):
            return False
        return super().lookup_allowed(lookup, value, request)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = [field.name for field in self.model._meta.fields if field.name not in self.exclude]
        return [*fields, "learner"] if "learner" in self.list_display else fields

    @admin.display(description="learner")
    def learner(self, row: Any) -> str:
        return shared_name(row.user)


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    list_display = ("card", "rating", "reviewed_at", "learner")
    list_filter = ("rating", "card__lesson")
    date_hierarchy = "reviewed_at"
    list_select_related = ("card__lesson", "user__learner_profile")


@admin.register(Showing)
class ShowingAdmin(ReadOnlyAdmin):
    list_display = ("card", "shown_at", "answer", "learner")
    list_filter = ("card__lesson",)
    search_fields = ("answer",)
    date_hierarchy = "shown_at"
    list_select_related = ("card__lesson", "user__learner_profile")


@admin.register(CardState)
class CardStateAdmin(ReadOnlyAdmin):
    list_display = ("card", "last_rating", "due", "review_count", "learner")
    list_filter = ("last_rating", "card__lesson")
    list_select_related = ("card__lesson", "user__learner_profile")


@admin.register(LayerOpening)
class LayerOpeningAdmin(ReadOnlyAdmin):
    exclude = ()
    list_display = ("layer", "showing", "opened_at")
    list_filter = ("layer",)
    list_select_related = ("showing__card__lesson",)


@admin.register(ClassMistake)
class ClassMistakeAdmin(admin.ModelAdmin):
    """Name a mistake the class makes: /instructor/'s "Name it" opens the add form with the
    template and the group's formula filled in (``?template=ID&formula=…``, Django's initial data)."""

    list_display = ("slug", "template", "formula", "created_at")
    list_filter = ("template__lesson",)
    search_fields = ("slug", "says", "template__slug")
    list_select_related = ("template__lesson",)
    fields = ("template", "slug", "says", "formula")
