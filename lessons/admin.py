import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.forms.formsets import all_valid
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils.decorators import method_decorator
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_POST

from felab_sim.engine import calculators
from felab_sim.engine.core.numbers import format_with_unit

from . import models as lesson_models
from . import number_checks
from .markdown import normalise_line_ends
from .models import Card, CardNumber, CardTerm, Course, GlossaryTerm, Lesson
from .views import render_preview


class TextAreaField(forms.CharField):
    """A text area's value with \n line breaks, as the model saves it: a browser sends \r\n,
    and without this every text area of a saved form counts as changed (in the admin's
    history, and for an inline card, a needless save)."""

    def to_python(self, value: Any) -> str:
        return normalise_line_ends(super().to_python(value))


class PlainNewlines:
    formfield_overrides = {models.TextField: {"form_class": TextAreaField}}


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
class CourseAdmin(PlainNewlines, admin.ModelAdmin):
    list_display = ("title", "slug", "order")
    search_fields = ("title", "slug")
    prepopulated_fields = {"slug": ("title",)}
    inlines = [LessonInline]


class CardInline(PlainNewlines, admin.TabularInline):
    model = Card
    fields = ("step", "title", "question", "published")
    extra = 0
    show_change_link = True


@admin.register(Lesson)
class LessonAdmin(PlainNewlines, PublishingActions, admin.ModelAdmin):
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


class CardNumberInline(admin.TabularInline):
    model = CardNumber
    fields = ("order", "label", "live", "stated", "tolerance", "note")
    extra = 0
    verbose_name_plural = "Computed live panel: numbers the card states, beside the model's"


class ChecksField(forms.JSONField):
    """The card's checks one to a line, so an instructor reads and edits them as a list."""

    def prepare_value(self, value: Any) -> str:
        if not isinstance(value, list) or not value:
            return super().prepare_value(value)
        lines = ",\n".join(
            "  "
            + json.dumps(
                number_checks.in_written_order(entry) if isinstance(entry, dict) else entry,
                ensure_ascii=False,
            )
            for entry in value
        )
        return f"[\n{lines}\n]"


@admin.register(Card)
class CardAdmin(PlainNewlines, PublishingActions, admin.ModelAdmin):
    list_display = ("label", "lesson", "scenario", "published", "updated_at")
    list_filter = ("lesson__course", "lesson", "published", "scenario")
    actions = ["publish", "make_draft"]
    search_fields = ("title", "question", "plain_words", "picture_it", "real_numbers", "more_detail")
    list_select_related = ("lesson__course", "scenario")
    inlines = [CardTermInline, CardNumberInline]
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

    def get_urls(self) -> list[URLPattern]:
        # Before the model's own URLs: their "<object_id>/" catch-all would take it otherwise.
        preview = self.admin_site.admin_view(self.preview_view)  # staff only, CSRF-checked
        return [
            path("add/preview/", preview, name="lessons_card_preview_new"),
            path("<path:object_id>/preview/", preview, name="lessons_card_preview"),
            *super().get_urls(),
        ]

    @method_decorator(require_POST)
    def preview_view(self, request: HttpRequest, object_id: str | None = None) -> HttpResponse:
        """The change (or add) form's data, unsaved, shown as the card page students will see (the
        form's Preview button posts here, in a new tab). Nothing is written: the form and its
        inlines are validated as Save would, then only their instances are rendered."""
        change = object_id is not None
        card = self.get_object(request, unquote(object_id)) if change else None
        if change and card is None:
            raise Http404("No such card.")
        if not (self.has_change_permission(request, card) if change else self.has_add_permission(request)):
            raise PermissionDenied
        form = self.get_form(request, card, change=change)(request.POST, request.FILES, instance=card)
        form_valid = form.is_valid()
        card = form.instance
        formsets, _ = self._create_formsets(request, card, change=change)
        if not (all_valid(formsets) and form_valid):
            context = {**self.admin_site.each_context(request), "opts": self.opts,
                       "errors": _labelled_errors([form, *(f for formset in formsets for f in formset.forms)])
                       + [("", error) for formset in formsets for error in formset.non_form_errors()],
                       "title": f"Cannot preview step {card.step or '?'} · {card.title or 'untitled'}"}  # fmt: skip
            return TemplateResponse(request, "admin/lessons/card/preview_errors.html", context)
        card.render()
        rows = {formset.model: _kept_rows(formset) for formset in formsets}
        card.panel_numbers = rows.get(CardNumber, [])
        card.terms_in_order = [row.term for row in rows.get(CardTerm, [])]
        return render_preview(request, card)

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
class GlossaryTermAdmin(PlainNewlines, admin.ModelAdmin):
    list_display = ("term", "definition")
    search_fields = ("term", "definition", "example")


def _labelled_errors(forms_: list[forms.BaseForm]) -> list[tuple[str, str]]:
    """Each form's errors as (field label, message); the label is empty for the form's own."""
    return [
        (str(form[name].label) if name in form.fields else "", error)
        for form in forms_
        for name, errors in form.errors.items()
        for error in errors
    ]


def _kept_rows(formset: forms.BaseModelFormSet) -> list[Any]:
    """An inline's rows as Save would leave them, unsaved: without deleted or blank new rows, by order."""
    deleted = set(map(id, formset.deleted_forms))
    rows = [
        form.instance
        for form in formset.forms
        if id(form) not in deleted and (form.instance.pk is not None or form.has_changed())
    ]
    return sorted(rows, key=lambda row: row.order)


# Practice templates: saved only when valid (the model's clean says why), with
# Published, and a preview of the first problems its draws make.
PREVIEW_SEEDS = (1, 2, 3)


class IndentedJSONField(forms.JSONField):
    """JSON shown indented, one draw a line block, so an instructor can edit it in the box."""

    def prepare_value(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        return json.dumps(value, indent=2, ensure_ascii=False)


@admin.register(lesson_models.PracticeTemplate)
class PracticeTemplateAdmin(PlainNewlines, PublishingActions, admin.ModelAdmin):
    list_display = ("slug", "title", "lesson", "calculator", "output", "published")
    list_filter = ("lesson__course", "lesson", "calculator", "published")
    search_fields = ("slug", "title", "question")
    actions = ("publish", "make_draft")
    readonly_fields = ("preview",)
    fieldsets = (
        (None, {"fields": ("lesson", "slug", "title", "order", "published")}),
        ("The question", {"fields": ("question", "calculator", "output", "asks", "unit", "tolerance")}),
        ("How inputs are drawn", {"fields": ("draws", "fixed", "change")}),
        ("Help and solution", {"fields": ("hint", "solution", "mistakes")}),
        ("Preview", {"fields": ("preview",)}),
    )

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name in ("draws", "fixed", "change", "mistakes"):
            kwargs["form_class"] = IndentedJSONField
            kwargs["widget"] = forms.Textarea(attrs={"rows": 8, "cols": 80})
        if db_field.name == "calculator":
            kwargs["widget"] = forms.Select(
                choices=[(n, f"{n}: {c.title}") for n, c in calculators.CALCULATORS.items()]
            )
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    @admin.display(description="Problems it draws (as saved)")
    def preview(self, template: lesson_models.PracticeTemplate) -> str:
        if template.pk is None:
            return "Save the template to preview the problems it draws."
        if problems := template.problems():
            return format_html("Cannot draw: {}", problems[0].message)
        rows = []
        for seed in PREVIEW_SEEDS:
            problem = template.problem(seed)
            url = f"{template.get_absolute_url()}?seed={seed}"
            rows.append((url, seed, problem.question, _answer_text(problem)))
        return format_html(
            "<ol class='practice-preview'>{}</ol>",
            format_html_join("", "<li><a href='{}'>seed {}</a>: {} <strong>Answer: {}</strong></li>", rows),
        )


def _answer_text(problem: Any) -> str:
    return format_with_unit(problem.answer, problem.unit)
