"""The admin of practice templates: saved only when valid (the model's clean says why), with
Published, and a preview of the first problems its draws make."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.utils.html import format_html, format_html_join

from felab_sim.engine.calculators import CALCULATORS

from .admin import PlainNewlines, PublishingActions
from .models import PracticeTemplate

PREVIEW_SEEDS = (1, 2, 3)


class IndentedJSONField(forms.JSONField):
    """JSON shown indented, one draw a line block, so an instructor can edit it in the box."""

    def prepare_value(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        return json.dumps(value, indent=2, ensure_ascii=False)


@admin.register(PracticeTemplate)
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
        ("Help and solution", {"fields": ("hint", "solution")}),
        ("Preview", {"fields": ("preview",)}),
    )

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name in ("draws", "fixed", "change"):
            kwargs["form_class"] = IndentedJSONField
            kwargs["widget"] = forms.Textarea(attrs={"rows": 8, "cols": 80})
        if db_field.name == "calculator":
            kwargs["widget"] = forms.Select(choices=[(n, f"{n}: {c.title}") for n, c in CALCULATORS.items()])
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    @admin.display(description="Problems it draws (as saved)")
    def preview(self, template: PracticeTemplate) -> str:
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
    from felab_sim.engine.numbers import format_figure

    return format_figure(problem.answer, problem.unit)
