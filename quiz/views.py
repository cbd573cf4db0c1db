"""The student's side of the cards, their progress and reviews, and the instructor's view."""

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from django_htmx.http import push_url

from accounts.instructors import is_instructor
from felab_sim.engine.core.numbers import format_with_unit
from felab_sim.engine.problems import unnamed_mistakes
from felab_sim.engine.problems.unnamed_mistakes import Grouping, UnnamedGroup
from lessons.models import Card, Course, PracticeTemplate
from lessons.views import card_for_page, render_card
from pagecache.content_cache import kept
from pagecache.kept_pages import render_kept

from . import (
    charts,
    class_mistakes,
    clock,
    concept_stats,
    learner_export,
    practice_stats,
    recall_calibration,
    scheduling,
)
from .card_rating import Outcome, rate_showing
from .forms import SharingForm
from .learners import Learner
from .lesson_runs import ProgressRun
from .models import (
    STUDIED_BEFORE_COUNTED,
    ClassMistake,
    Layer,
    LayerOpening,
    LearnerProfile,
    PracticeAttempt,
    Rating,
    Showing,
)
from .progress_summary import FORECAST_DAYS, ProgressSummary
from .selectors import CardOverview, LessonProgress, Schedules
from .write_limits import study_write_limited

LATEST_ANSWERS = 20


def _card_or_404(request: HttpRequest, course_slug: str, lesson_slug: str, step: int) -> Card:
    return get_object_or_404(
        Card.objects.visible(drafts=is_instructor(request.user)).select_related("lesson__course"),
        lesson__course__slug=course_slug,
        lesson__slug=lesson_slug,
        step=step,
    )


def _showing_or_404(request: HttpRequest, learner: Learner, card: Card) -> Showing:
    # Only the learner's own showings: another student's id is simply not found.
    try:
        return Showing.for_rating(learner, card, request.POST.get("showing") or None)
    except (Showing.DoesNotExist, ValueError) as error:
        raise Http404("No such showing of this card.") from error


def _shown_url(card: Card, review_mode: bool) -> str:
    query = {"answer": "shown", **({"review": "1"} if review_mode else {})}
    return f"{card.get_absolute_url()}?{urlencode(query)}"


@require_POST
@study_write_limited
def show_answer(request: HttpRequest, course_slug: str, lesson_slug: str, step: int) -> HttpResponse:
    """Store what the student wrote, then show the answer."""
    card = card_for_page(request, course_slug, lesson_slug, step)
    Showing.record(Learner.of_or_start(request), card, request.POST.get("answer", ""))
    review_mode = request.POST.get("review") == "1"
    if not request.htmx:
        return redirect(_shown_url(card, review_mode))
    response = render_card(request, card, answer_shown=True, review_mode=review_mode)
    return push_url(response, _shown_url(card, review_mode))


@require_POST
@study_write_limited
def rate_card(request: HttpRequest, course_slug: str, lesson_slug: str, step: int) -> HttpResponse:
    card = card_for_page(request, course_slug, lesson_slug, step)  # kept per content version
    try:
        rating = Rating(int(request.POST.get("rating", "")))
    except ValueError:
        allowed = ", ".join(f"{value} ({label})" for value, label in Rating.choices)
        return HttpResponseBadRequest(f"rating must be one of {allowed}.", content_type="text/plain")
    showing = _showing_or_404(request, Learner.of_or_start(request), card)
    rated = rate_showing(showing, rating)
    review_mode = request.POST.get("review") == "1"
    comes_back = scheduling.humanize_interval(rated.state.due - clock.now()) if rated.state else ""
    if request.htmx:
        context = {
            "card": card,
            "rating": rating,
            "rated": rated,
            "outcome": rated.outcome.value,
            "comes_back": comes_back,
            "showing": showing,
            "review_mode": review_mode,
        }
        response = render(request, "quiz/rating_ack.html", context)
        patch_vary_headers(response, ["HX-Request"])
        return response
    if rated.outcome is Outcome.FINAL:
        messages.warning(
            request,
            f"Your rating is final for this time through the card: {rated.review.get_rating_display()}. "
            "Show the answer again to rate the card again.",
        )
    else:
        verb = "Saved" if rated.outcome is Outcome.SAVED else "Changed to"
        messages.success(request, f"{verb}: {rating.label}. This card comes back {comes_back}.")
    if review_mode:
        return redirect("review_next")
    return redirect(f"{card.get_absolute_url()}?answer=shown#how-did-you-do")


@require_POST
@study_write_limited
def open_layer(request: HttpRequest, course_slug: str, lesson_slug: str, step: int) -> HttpResponse:
    """Note that a learner opened an optional part of the answer (sent by htmx; nothing to show)."""
    card = _card_or_404(request, course_slug, lesson_slug, step)
    layer = request.POST.get("layer", "")
    if layer not in Layer.values:
        return HttpResponseBadRequest(
            f"layer must be one of {', '.join(Layer.values)}.", content_type="text/plain"
        )
    LayerOpening.record(_showing_or_404(request, Learner.of_or_start(request), card), Layer(layer))
    return HttpResponse(status=204)


def progress(request: HttpRequest) -> HttpResponse:
    learner = Learner.of(request)
    courses = _published_courses(request)
    lessons = [lesson for course in courses for lesson in course.listed_lessons]
    now = clock.now()
    schedules = Schedules.of(learner, _published_cards(request), _published_templates(request))
    by_lesson = LessonProgress.of_schedules(schedules.cards, lessons, now)
    share_name, sharing_form = None, None
    if learner.user is not None:
        profile = LearnerProfile.of(learner.user)
        share_name = profile.share_name
        sharing_form = SharingForm(instance=profile)
    summary = ProgressSummary.of(by_lesson.values(), schedules, now)
    all_templates = kept(request, ("all-templates",), practice_stats.templates_by_id)
    practice = practice_stats.practice_of(learner, all_templates, schedules.practice, now)
    due_templates = {state.template_id for state in schedules.practice if scheduling.is_due(state.due, now)}
    concepts = concept_stats.concepts_of(learner, all_templates, due_templates) if practice else []
    forecast_figure = charts.due_forecast_json(summary) if summary.scheduled else None
    calibration_figure = charts.calibration_figure(practice) if practice else None
    runs_by_course = [
        (course, ProgressRun.runs_of(by_lesson[lesson.id] for lesson in course.listed_lessons))
        for course in courses
    ]
    learners_progress = {
        "courses": runs_by_course,
        "learner": learner,
        "share_name": share_name,
        "sharing_form": sharing_form,
        "summary": summary,
        "forecast_figure": forecast_figure,
        "forecast_days": FORECAST_DAYS,
        "practice": practice,
        "concepts": concepts,
        "mastery_window": practice_stats.MASTERY_WINDOW,
        "calibration_figure": calibration_figure,
        # Whether the page draws a chart, and so needs plotly's script (quiz/progress.html's head).
        "charted": bool(forecast_figure or calibration_figure),
        "calibration_window": practice_stats.CALIBRATION_WINDOW,
    }
    # The page around the learner's progress is the same for everyone: kept, the rest rendered into it.
    return render_kept(request, "quiz/progress.html", dict, ("progress",), learners_progress)


@require_POST
@login_required
@study_write_limited
def sharing(request: HttpRequest) -> HttpResponse:
    profile, _ = LearnerProfile.objects.get_or_create(user=request.user)
    form = SharingForm(request.POST, instance=profile)
    if form.is_valid():
        form.save()
        shared = "shown to" if profile.share_name else "hidden from"
        messages.success(request, f"Saved: your name is {shared} instructors next to your typed answers.")
    return redirect("progress")


# More digits than any export has pages; int() never reads a long string.
_EXPORT_PAGE_DIGITS = 9


@never_cache
def export(request: HttpRequest) -> HttpResponse:
    """One page of the learner's export (quiz/learner_export.py), naming the next page, if any."""
    text = request.GET.get("page", "1")
    if not (text.isascii() and text.isdigit() and len(text) <= _EXPORT_PAGE_DIGITS and int(text) >= 1):
        message = f"page must be a whole number from 1; this link has {text[:20]!r}."
        return JsonResponse({"error": {"param": "page", "message": message}}, status=400)
    page = int(text)
    data, more = learner_export.export_data(Learner.of(request), page)
    data["next"] = f"{request.path}?{urlencode({'page': page + 1})}" if more else None
    response = JsonResponse(data, json_dumps_params={"indent": 2})
    name = "felab-progress.json" if page == 1 else f"felab-progress-page-{page}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _published_courses(request: HttpRequest) -> list[Course]:
    """The courses with their published lessons and cards as every student sees them, kept per
    content version; each card has its lesson and course (prefetched), so its page address
    costs no query."""
    return kept(request, ("courses", False), lambda: list(Course.objects.with_lessons_and_steps()))


def _published_cards(request: HttpRequest) -> dict[int, Card]:
    return kept(
        request,
        ("published-cards",),
        lambda: {
            card.pk: card
            for course in _published_courses(request)
            for lesson in course.listed_lessons
            for card in lesson.listed_cards
        },
    )


def _published_templates(request: HttpRequest) -> dict[int, PracticeTemplate]:
    """The published practice templates by id, each with its lesson, kept per content version."""
    return kept(
        request,
        ("published-templates",),
        lambda: {
            template.pk: template
            for lesson in practice_stats.published_by_lesson()
            for template in lesson.templates
        },
    )


def review(request: HttpRequest) -> HttpResponse:
    """Due cards and due practice templates in one list, the longest overdue first."""
    learner = Learner.of(request)
    now = clock.now()
    schedules = Schedules.of(learner, _published_cards(request), _published_templates(request))
    due = schedules.due(now)
    upcoming = None if due else schedules.next_due(now)
    learners_list = {
        "due": due,
        "cards_due": sum(item.kind == "card" for item in due),
        "practice_due": sum(item.kind == "practice" for item in due),
        "upcoming": upcoming,
        "upcoming_in": scheduling.humanize_interval(upcoming.due - now) if upcoming else "",
    }
    # The page around the list is the same for everyone: kept, the list rendered into it.
    return render_kept(request, "quiz/review.html", dict, ("review",), learners_list)


def review_next(request: HttpRequest) -> HttpResponse:
    """The longest overdue card (in the card page's flow) or practice template (a new draw), or
    the review page when nothing is due."""
    due = Schedules.of(Learner.of(request), _published_cards(request), _published_templates(request)).due(
        clock.now()
    )
    return redirect(due[0].review_url if due else "review")


def instructor_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Instructors and superusers only: anonymous visitors log in, students get 403."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_instructor(request.user):
            raise PermissionDenied("Only instructors may see the class's results.")
        return view(request, *args, **kwargs)

    return wrapped


# Groups on /instructor/: at most this many per template, each of at least this many answers.
UNNAMED_SHOWN = 3
UNNAMED_AT_LEAST = 2


@dataclass(frozen=True)
class UnnamedRow:
    """A template's unnamed groups as /instructor/ shows them, each with its admin link."""

    template: PracticeTemplate
    grouping: Grouping
    groups: list[tuple[UnnamedGroup, str, list[str]]]  # (group, "Name it" link, examples as text)


def unnamed_rows(templates: list[PracticeTemplate], named: dict[int, list[ClassMistake]]) -> list[UnnamedRow]:
    """The templates whose wrong first tries hold an unnamed group worth naming."""
    by_slug = {t.slug: t for t in templates}
    add_url = reverse("admin:quiz_classmistake_add")
    rows = []
    for grouping in class_mistakes.unnamed_groupings(templates, named=named):
        groups = [g for g in grouping.groups if g.count >= UNNAMED_AT_LEAST][:UNNAMED_SHOWN]
        if not groups:
            continue
        template = by_slug[grouping.template]
        unit = "" if grouping.unit == "×" else grouping.unit
        shown = []
        for group in groups:
            query = {"template": template.pk, "slug": group.key.replace("_", "-")[:60]}
            if group.formula:
                query["formula"] = group.formula
            examples = [
                f"{format_with_unit(e.given, unit)} for {format_with_unit(e.right, unit)}"
                for e in group.examples
            ]
            shown.append((group, f"{add_url}?{urlencode(query)}", examples))
        rows.append(UnnamedRow(template, grouping, shown))
    return rows


@instructor_required
def instructor(request: HttpRequest) -> HttpResponse:
    cards = Card.objects.select_related("lesson__course").order_by(
        "lesson__course__order", "lesson__course__title", "lesson__order", "lesson__number", "step"
    )
    overviews = CardOverview.for_cards(cards)
    templates = list(
        PracticeTemplate.objects.select_related("lesson__course").order_by(
            "lesson__course__order", "lesson__order", "lesson__number", "order", "slug"
        )
    )
    named = class_mistakes.named_by_template()
    context = {
        "unnamed": unnamed_rows(templates, named),
        "unnamed_limit": unnamed_mistakes.PAGE_TRIES,
        "unnamed_shown": UNNAMED_SHOWN,
        "unnamed_at_least": UNNAMED_AT_LEAST,
        "overviews": overviews,
        "figure": charts.ratings_figure(overviews),
        "answers": Showing.objects.latest_answers(LATEST_ANSWERS),
        "studied_minutes": round(STUDIED_BEFORE_COUNTED.total_seconds() / 60),
        "layers": [label for _, label in Layer.choices],
        "ratings": Rating.choices,
        "practice": practice_stats.template_overviews(
            templates,
            PracticeAttempt.objects.in_class_statistics().values_list("template_id", "ratio", "verdict"),
            PracticeAttempt.objects.in_class_statistics(),
            named,
        ),
    }
    predictions = recall_calibration.chances(
        recall_calibration.class_predictions(PracticeAttempt.objects.in_class_statistics())
    )
    context["recall"] = {
        "count": len(predictions),
        "shown_from": recall_calibration.SHOWN_FROM,
        "few_to_read": recall_calibration.FEW_TO_READ,
        "shown": len(predictions) >= recall_calibration.SHOWN_FROM,
        "bins": recall_calibration.bins(predictions),
        "log_loss": recall_calibration.log_loss(predictions),
        "auc": recall_calibration.auc(predictions),
    }
    return render(request, "quiz/instructor.html", context)
