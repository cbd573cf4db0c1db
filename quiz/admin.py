"""Students' records in the admin: read-only for everyone, names only with consent.

Instructors hold view permission on these models (migration 0005) and nothing
else here; superusers see the same read-only pages. What students wrote and how
they rated it is their record, so no one edits it by hand.
"""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import CardState, LayerOpening, Review, Showing, shared_name


def _learner_label(request: HttpRequest, row: Any) -> str:
    if row.user_id is None:
        return "anonymous"
    if request.user.is_superuser:
        return row.user.get_username()
    # Instructors see names on the same terms as on /instructor/.
    return shared_name(row.user)


class ReadOnlyAdmin(admin.ModelAdmin):
    # Raw user and session columns stay off the page; the learner column follows consent.
    exclude = ("user", "session_key")
    list_select_related = ("user__learner_profile",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_list_display(self, request: HttpRequest) -> Any:
        def learner(row: Any) -> str:
            return _learner_label(request, row)

        learner.short_description = "learner"  # type: ignore[attr-defined]
        return (*self.list_display, learner)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [field.name for field in self.model._meta.fields if field.name not in self.exclude]


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    list_display = ("card", "rating", "reviewed_at")
    list_filter = ("rating", "card__lesson")
    date_hierarchy = "reviewed_at"
    list_select_related = ("card__lesson", "user__learner_profile")


@admin.register(Showing)
class ShowingAdmin(ReadOnlyAdmin):
    list_display = ("card", "shown_at", "answer")
    list_filter = ("card__lesson",)
    search_fields = ("answer",)
    date_hierarchy = "shown_at"
    list_select_related = ("card__lesson", "user__learner_profile")


@admin.register(CardState)
class CardStateAdmin(ReadOnlyAdmin):
    list_display = ("card", "last_rating", "due", "review_count")
    list_filter = ("last_rating", "card__lesson")
    list_select_related = ("card__lesson", "user__learner_profile")


@admin.register(LayerOpening)
class LayerOpeningAdmin(ReadOnlyAdmin):
    exclude = ()
    list_display = ("layer", "showing", "opened_at")
    list_filter = ("layer",)
    list_select_related = ("showing__card__lesson",)

    def get_list_display(self, request: HttpRequest) -> Any:
        return self.list_display
