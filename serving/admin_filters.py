"""Admin changelist filters the database cannot apply are a 400 naming the parameter.

Django's admin turns a filter it cannot build (an unknown field, a date that is no date) into
its "?e=1" page, but a filter that builds and then fails in the database was a 500: a NUL
character (PostgreSQL refuses it in any text), a regular expression that does not compile
(``?answer__iregex=[``), a year beyond any date, a JSON lookup SQLite lacks. This runs before
every changelist, ours and Django's own (users, groups), so no ModelAdmin has to remember it.
The learner rule of quiz/admin.py (``lookup_allowed``) still applies after it.
"""

from collections.abc import Callable
from typing import Any

from django.contrib.admin.options import ModelAdmin
from django.contrib.admin.utils import prepare_lookup_value
from django.contrib.admin.views.main import ERROR_FLAG, IGNORED_PARAMS, PAGE_VAR
from django.db import DatabaseError, transaction
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

# Regular expressions run in the database's own engine, whose syntax and cost differ from
# Python's; the admin never builds such a filter, so only a hand-typed URL would use one.
REGEX_LOOKUPS = frozenset({"regex", "iregex"})
# What a filter that builds may still raise when the database runs it.
_RUN_ERRORS = (DatabaseError, ValueError, TypeError, OverflowError, ArithmeticError)


def refusal(request: HttpRequest, model_admin: ModelAdmin) -> tuple[str, str] | None:
    """The first parameter the changelist cannot use and why, or None when all are usable."""
    for key, values in request.GET.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            return key, "holds a NUL character (%00), which no stored text can contain"
        if not REGEX_LOOKUPS.isdisjoint(key.split(LOOKUP_SEP)):
            return key, "is a regular-expression lookup, which the admin does not take"
    user = getattr(request, "user", None)
    if user is None or not user.is_active or not user.is_staff:
        return None  # the admin sends this visitor to log in; no query is run for them
    for key, values in request.GET.lists():
        if key in IGNORED_PARAMS or key in (PAGE_VAR, ERROR_FLAG):
            continue
        if _fails_in_the_database(model_admin, request, key, values):
            return key, "cannot be applied by the database to this value"
    return None


def _fails_in_the_database(
    model_admin: ModelAdmin, request: HttpRequest, key: str, values: list[str]
) -> bool:
    try:
        queryset = model_admin.get_queryset(request)
        filtered = [queryset.filter(**{key: prepare_lookup_value(key, value)}) for value in values]
    except Exception:  # a filter that does not build is the admin's "?e=1" case
        return False
    for query in filtered:
        try:
            with transaction.atomic():  # a failed statement must not end an outer transaction
                query.exists()
        except _RUN_ERRORS:
            return True
    return False


class AdminFilterGuard:
    """Middleware: refuse a changelist request whose filters the database cannot apply."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., Any], view_args: Any, view_kwargs: Any
    ) -> HttpResponse | None:
        # ModelAdmin.get_urls marks each of its views with the ModelAdmin it serves.
        model_admin = getattr(view_func, "model_admin", None)
        match = request.resolver_match
        if model_admin is None or match is None or not (match.url_name or "").endswith("_changelist"):
            return None
        refused = refusal(request, model_admin)
        if refused is None:
            return None
        key, reason = refused
        shown = key.replace("\x00", "%00")[:80]
        return render(request, "400.html", {"reason": f"The filter '{shown}' {reason}."}, status=400)
