import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from .models import Card, CardFigure, CardTerm, Course, GlossaryTerm, Lesson


class PublishingActions:
    """Publish or hide many lessons or cards at once from a list."""

    @admin.action(description="Publish: students see the selected")
    def publish(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = queryset.update(published=True)
        messages.success(request, f"Published {count}.")

    @admin.action(description="Make draft: hide the selected from students")
    def make_draft(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = queryset.update(published=False)
        messages.success(request, f"{count} now drafts, hidden from students.")


class LessonInline(admin.TabularInline):
    model = Lesson
    fields = ("number", "title", "slug", "order", "published")
    prepopulated_fields = {"slug": ("title",)}
    extra = 0
    show_change_link = True


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "order")
    search_fields = ("title", "slug")
    prepopulated_fields = {"slug": ("title",)}
    inlines = [LessonInline]


class CardInline(admin.TabularInline):
    model = Card
    fields = ("step", "title", "question", "published")
    extra = 0
    show_change_link = True


@admin.register(Lesson)
class LessonAdmin(PublishingActions, admin.ModelAdmin):
    list_display = ("__str__", "course", "number", "order", "minutes", "published", "card_count")
    list_filter = ("course", "published")
    actions = ["publish", "make_draft"]
    search_fields = ("title", "slug", "cards__title", "cards__question")
    prepopulated_fields = {"slug": ("title",)}
    inlines = [CardInline]

    @admin.display(description="cards")
    def card_count(self, lesson: Lesson) -> int:
        return lesson.cards.count()


class CardTermInline(admin.TabularInline):
    model = CardTerm
    fields = ("order", "term")
    autocomplete_fields = ("term",)
    extra = 1


class CardFigureInline(admin.TabularInline):
    model = CardFigure
    fields = ("order", "label", "figure", "stated", "tolerance", "note")
    extra = 0
    verbose_name_plural = "Computed live panel: figures the card states, beside the model's"


class ChecksField(forms.JSONField):
    """The card's checks one to a line, so an instructor reads and edits them as a list."""

    def prepare_value(self, value: Any) -> str:
        if not isinstance(value, list) or not value:
            return super().prepare_value(value)
        lines = ",\n".join("  " + json.dumps(entry, ensure_ascii=False) for entry in value)
        return f"[\n{lines}\n]"


@admin.register(Card)
class CardAdmin(PublishingActions, admin.ModelAdmin):
    list_display = ("label", "lesson", "scenario", "published", "updated_at")
    list_filter = ("lesson__course", "lesson", "published", "scenario")
    actions = ["publish", "make_draft"]
    search_fields = ("title", "question", "plain_words", "picture_it", "real_numbers", "more_detail")
    list_select_related = ("lesson__course", "scenario")
    inlines = [CardTermInline, CardFigureInline]
    fieldsets = (
        (None, {"fields": ("lesson", "step", "title", "published", "question")}),
        ("The answer", {"fields": ("plain_words", "picture_it", "real_numbers_source", "real_numbers")}),
        ("Go deeper: the engineer version", {"fields": ("kit_question", "kit_answer", "more_detail")}),
        ("Computed live", {"fields": ("scenario",)}),
        ("Numbers the text works out", {"fields": ("number_checks", "numbers_to_check")}),
    )
    readonly_fields = ("numbers_to_check",)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "number_checks":
            kwargs["form_class"] = ChecksField
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    # view_on_site uses Card.get_absolute_url: the "View on site" link.

    @admin.display(description="Not checked yet")
    def numbers_to_check(self, card: Card) -> str:
        if card.pk is None:
            return "Listed once the card is saved."
        warnings = card.unchecked_numbers()
        if not warnings:
            return "Every number the text works out is live or checked."
        return format_html(
            '<ul class="unchecked-numbers">{}</ul>',
            format_html_join("", "<li>{}</li>", ((w,) for w in warnings)),
        )

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        # After the inlines: a number stated in the Computed live panel counts as live.
        if warnings := form.instance.unchecked_numbers():
            messages.warning(
                request,
                f"{len(warnings)} number{'s' if len(warnings) != 1 else ''} in this card's text "
                f"{'are' if len(warnings) != 1 else 'is'} worked out but not checked (saved anyway): "
                + "; ".join(warnings),
            )


@admin.register(GlossaryTerm)
class GlossaryTermAdmin(admin.ModelAdmin):
    list_display = ("term", "definition")
    search_fields = ("term", "definition", "example")
