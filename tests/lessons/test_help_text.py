"""Django's admin prints help text unescaped: one literal tag in it once broke every form it was on."""

import re

import pytest
from django import forms
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import RequestFactory
from django.utils.safestring import SafeData

MARKUP = re.compile(r"<\s*/?\s*[A-Za-z!]")


def carries_raw_markup(help_text: object) -> bool:
    """Markup in a plain string; Django's own help text that it marks safe on purpose is fine."""
    text = str(help_text)
    return bool(MARKUP.search(text)) and not isinstance(text, SafeData)


def _project_form_classes() -> list[type[forms.BaseForm]]:
    found, pending = [], [forms.Form, forms.ModelForm]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.split(".")[0] in {"lessons", "quiz", "felab_sim", "config"}:
            found.append(cls)
    return found


def test_no_model_field_help_text_carries_markup():
    offenders = [
        f"{model._meta.label}.{field.name}: {field.help_text}"
        for model in apps.get_models()
        for field in model._meta.get_fields()
        if carries_raw_markup(getattr(field, "help_text", ""))
    ]
    assert offenders == []


def test_no_project_form_help_text_carries_markup():
    offenders = [
        f"{form_class.__qualname__}.{name}: {field.help_text}"
        for form_class in _project_form_classes()
        for name, field in form_class.base_fields.items()
        if carries_raw_markup(field.help_text)
    ]
    assert offenders == []


@pytest.mark.django_db
def test_no_admin_form_help_text_carries_markup():
    request = RequestFactory().get("/admin/")
    request.user = User(is_superuser=True, is_staff=True)
    offenders = []
    for model, model_admin in admin.site._registry.items():
        form_class = model_admin.get_form(request)
        offenders += [
            f"{model._meta.label}.{name}: {field.help_text}"
            for name, field in form_class.base_fields.items()
            if carries_raw_markup(field.help_text)
        ]
        for inline in model_admin.get_inline_instances(request):
            formset = inline.get_formset(request)
            offenders += [
                f"{inline.model._meta.label}.{name}: {field.help_text}"
                for name, field in formset.form.base_fields.items()
                if carries_raw_markup(field.help_text)
            ]
    assert offenders == []
