"""Mixed practice sets: /practice/set/ starts or resumes one, /practice/set/N/ lists set N and,
once every problem is finished, summarises it per lesson, and /practice/set/N/P/ is its P-th
problem.

A set's problem is answered exactly as on its own practice page: the same page, form, Hint,
retries, Show me and rating, through quiz.practice_views (which grades and records it), with the
set's place and a "Next in set" link added. The draw (template and seed) comes from the stored
set, never from the form, so a resent form or a second tab answers the same draw and the
practice page's own rules count it once (quiz.practice_tries).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.instructors import is_instructor
from felab_sim.engine.problems.drill_specs import DrillError
from felab_sim.engine.problems.drills import draw_problem

from . import clock, practice_sets, practice_views
from .learners import Learner
from .models import PracticeSet
from .practice_sets import item_url, set_url, whole_number
from .write_limits import study_write_limited


@require_http_methods(["GET", "POST"])
@study_write_limited
def practice_set(request: HttpRequest) -> HttpResponse:
    """GET: the learner's unfinished set to resume (or a new one to start), or what to do first
    when nothing is started. POST: start set ``number`` (the number the page offered), then go
    to its first problem; a form sent twice finds the set its first send made."""
    now = clock.now()
    if request.method == "POST":
        learner = Learner.of(request)
        number = whole_number(request.POST.get("number"))
        offered = practice_sets.next_number(learner)
        if number is None or number > offered:
            number = offered
        practice_set_ = practice_sets.start(learner, number, now) if learner.known else None
        if practice_set_ is not None:
            progress = practice_sets.progress_of(learner, practice_set_)
            if progress.next_open is None:  # a form resent after its set was finished: its summary
                return redirect(set_url(practice_set_.number))
            return redirect(item_url(practice_set_.number, progress.next_open.position))
    learner = Learner.of(request)
    latest = practice_sets.latest(learner)
    progress = practice_sets.progress_of(learner, latest) if latest is not None else None
    candidates = practice_sets.candidates(learner, now)
    lessons = len({candidate.lesson_id for candidate in candidates})
    context = {
        "progress": progress if progress is not None and not progress.finished else None,
        "finished_set": progress if progress is not None and progress.finished else None,
        "can_start": len(candidates) >= 2,
        "started_anything": bool(practice_sets.started_lessons(learner)),
        "templates": len(candidates),
        "lessons": lessons,
        "set_size": practice_sets.SET_SIZE,
        "next_number": practice_sets.next_number(learner),
        "recent": list(practice_sets.recent_sets(learner)),
    }
    return render(request, "quiz/practice_set_start.html", context)


def _set_or_404(learner: Learner, number: int) -> PracticeSet:
    found = PracticeSet.objects.for_learner(learner).filter(number=number).first()
    if found is None:
        raise Http404("No such practice set of yours.")
    return found


def practice_set_overview(request: HttpRequest, number: int) -> HttpResponse:
    """Set N's problems with how each went; when all are finished, the summary per lesson."""
    learner = Learner.of(request)
    progress = practice_sets.progress_of(learner, _set_or_404(learner, number))
    context: dict[str, Any] = {
        "progress": progress,
        "number": number,
        "items": [(item, item_url(number, item.position)) for item in progress.items],
        "next_item_url": item_url(number, progress.next_open.position) if progress.next_open else "",
        "next_number": practice_sets.next_number(learner),
        "summary": practice_sets.summary(learner, progress, clock.now()) if progress.finished else [],
    }
    return render(request, "quiz/practice_set.html", context)


@require_http_methods(["GET", "POST"])
@study_write_limited
def practice_set_item(request: HttpRequest, number: int, position: int) -> HttpResponse:
    """Problem P of set N, on the practice page's own rules (quiz.practice_views): GET shows it as
    the learner left it (open, with the last try's verdict, or finished with every step); POST
    answers it, takes a hint or shows it."""
    learner = Learner.of(request)
    progress = practice_sets.progress_of(learner, _set_or_404(learner, number))
    here = progress.item_at(position)
    if here is None:
        raise Http404("This practice set has no such problem.")
    template = here.template
    if template.is_draft and not is_instructor(request.user):
        raise Http404("This problem has been withdrawn from practice.")
    try:
        # The template's reading is kept per content version, as its own page keeps it.
        problem = draw_problem(practice_views._spec(request, template), here.item.seed)
    except DrillError as error:
        raise Http404(f"This problem cannot be drawn: {error.message}") from error
    extra = _set_context(progress, here)
    if request.method == "POST":
        return practice_views._post(request, template, problem, extra)
    attempt = here.attempt
    hints = practice_views._hints(request, template, problem, attempt)
    feedback = practice_views._last_try(problem, attempt) if attempt is not None else None
    counted = attempt is not None and attempt.finished and attempt.open_for_rating(clock.now())
    return practice_views._page(
        request,
        template,
        problem,
        attempt=attempt,
        hints=hints,
        feedback=feedback,
        counted=counted,
        extra=extra,
    )


def _set_context(progress: practice_sets.SetProgress, here: practice_sets.SetItem) -> dict[str, Any]:
    number = progress.practice_set.number
    later = [item for item in progress.items if item.position > here.position]
    return {
        "form_action": item_url(number, here.position),
        "in_set": {
            "number": number,
            "position": here.position,
            "size": progress.size,
            "place": f"{number}/{here.position}",
            "overview_url": set_url(number),
            "next_url": item_url(number, later[0].position) if later else set_url(number),
            "is_last": not later,
        },
    }
