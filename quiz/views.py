"""The student's side of the cards, their progress and reviews, and the instructor's view."""

from collections.abc import Callable
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
from django.utils.cache import patch_vary_headers
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from django_htmx.http import push_url

from accounts.instructors import is_instructor
from lessons.models import Card, Course, PracticeTemplate
from lessons.views import card_for_page, render_card
from pagecache.content_cache import kept
from pagecache.kept_pages import render_kept

from . import charts, clock, learner_export, practice_stats, scheduling
from .card_rating import Outcome, rate_showing
from .forms import SharingForm
from .learners import Learner
from .lesson_runs import ProgressRun
from .models import (
    Layer,
    LayerOpening,
    LearnerProfile,
    PracticeAttempt,
    Rating,
    Showing,
)
from .progress_summary import FORECAST_DAYS, ProgressSummary
from .selectors import CardOverview, LessonProgress, Schedules

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
    schedules = Schedules.of(learner, _published_cards(request))
    by_lesson = LessonProgress.of_schedules(schedules.cards, lessons, now)
    share_name, sharing_form = None, None
    if learner.user is not None:
        profile = LearnerProfile.of(learner.user)
        share_name = profile.share_name
        sharing_form = SharingForm(instance=profile)
    summary = ProgressSummary.of(by_lesson.values(), schedules, now)
    practice = practice_stats.practice_of(learner)
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
def sharing(request: HttpRequest) -> HttpResponse:
    profile, _ = LearnerProfile.objects.get_or_create(user=request.user)
    form = SharingForm(request.POST, instance=profile)
    if form.is_valid():
        form.save()
        shared = "shown to" if profile.share_name else "hidden from"
        messages.success(request, f"Saved: your name is {shared} instructors next to your typed answers.")
    return redirect("progress")


@never_cache
def export(request: HttpRequest) -> HttpResponse:
    response = JsonResponse(learner_export.export_data(Learner.of(request)), json_dumps_params={"indent": 2})
    response["Content-Disposition"] = 'attachment; filename="felab-progress.json"'
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


def review(request: HttpRequest) -> HttpResponse:
    """Due cards and due practice templates in one list, the longest overdue first."""
    learner = Learner.of(request)
    now = clock.now()
    schedules = Schedules.of(learner, _published_cards(request))
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
    due = Schedules.of(Learner.of(request), _published_cards(request)).due(clock.now())
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


@instructor_required
def instructor(request: HttpRequest) -> HttpResponse:
    cards = Card.objects.select_related("lesson__course").order_by(
        "lesson__course__order", "lesson__course__title", "lesson__order", "lesson__number", "step"
    )
    overviews = CardOverview.for_cards(cards)
    context = {
        "overviews": overviews,
        "figure": charts.ratings_figure(overviews),
        "answers": Showing.objects.latest_answers(LATEST_ANSWERS),
        "layers": [label for _, label in Layer.choices],
        "ratings": Rating.choices,
        "practice": practice_stats.template_overviews(
            PracticeTemplate.objects.select_related("lesson__course").order_by(
                "lesson__course__order", "lesson__order", "lesson__number", "order", "slug"
            ),
            PracticeAttempt.objects.values_list("template_id", "ratio", "verdict"),
            PracticeAttempt.objects.all(),
        ),
    }
    return render(request, "quiz/instructor.html", context)
