"""Practice problems: a drawn problem's page, its answer checked, the learner's rating of it.

GET ``/learn/COURSE/LESSON/practice/SLUG/?seed=N`` shows the problem seed N draws (no seed: a
redirect to a fresh one, so the address always carries the draw). POST to the same address
with ``answer`` checks it (felab_sim.engine.answers), records the learner's first answer to
that draw (quiz.models.PracticeAttempt, which schedules the template with FSRS) and shows the
verdict and the worked solution; htmx swaps the problem in place, a plain form does the same
page without JavaScript. An answer that cannot be read is explained and not counted.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.instructors import is_instructor
from felab_sim.engine import answers
from felab_sim.engine.drills import DrillError, Problem
from felab_sim.engine.numbers import format_with_unit
from lessons.models import PracticeTemplate
from lessons.simulator import simulator

from .learners import Learner
from .models import PracticeAttempt, Rating

MAX_SEED = 2**31 - 1
# How long after the page was drawn an answer's time is believed (a stale tab is not "quick").
MAX_SECONDS = 24 * 3600


def _template_or_404(
    request: HttpRequest, course_slug: str, lesson_slug: str, template_slug: str
) -> PracticeTemplate:
    templates = PracticeTemplate.objects.visible(drafts=is_instructor(request.user))
    return get_object_or_404(
        templates.select_related("lesson__course"),
        lesson__course__slug=course_slug,
        lesson__slug=lesson_slug,
        slug=template_slug,
    )


def _seed(text: str | None) -> int | None:
    """The seed in the address, or None when it is not a whole number in range."""
    if text is None or not text.strip().isdigit():
        return None
    seed = int(text.strip())
    return seed if seed <= MAX_SEED else None


def fresh_seed(not_this: int | None = None) -> int:
    while (seed := secrets.randbelow(1_000_000) + 1) == not_this:
        pass
    return seed


@dataclass(frozen=True)
class Feedback:
    """What the page says after an answer."""

    checked: answers.Checked
    read: answers.ReadAnswer
    attempt: PracticeAttempt
    counted: bool

    @property
    def rating_label(self) -> str:
        return Rating(self.attempt.rating).label


@require_http_methods(["GET", "POST"])
def practice_problem(
    request: HttpRequest, course_slug: str, lesson_slug: str, template_slug: str
) -> HttpResponse:
    template = _template_or_404(request, course_slug, lesson_slug, template_slug)
    raw_seed = request.POST.get("seed") if request.method == "POST" else request.GET.get("seed")
    if raw_seed is None and request.method == "GET":
        return redirect(f"{template.get_absolute_url()}?seed={fresh_seed()}")
    seed = _seed(raw_seed)
    if seed is None:
        message = (
            f"The seed must be a whole number from 0 to {MAX_SEED:,}; this link has {str(raw_seed)[:20]!r}."
        )
        return _page(request, template, None, status=400, error=message)
    try:
        problem = template.problem(seed)
    except DrillError as error:
        # Only an instructor's draft can get here: a published template was checked on save.
        return _page(request, template, None, status=400, error=f"This template cannot draw: {error.message}")
    if request.method == "GET":
        return _page(request, template, problem)
    return _answer(request, template, problem)


def _answer(request: HttpRequest, template: PracticeTemplate, problem: Problem) -> HttpResponse:
    typed = request.POST.get("answer", "")
    try:
        read = answers.read_answer(typed, problem.unit)
    except answers.AnswerError as error:
        return _page(request, template, problem, error=str(error), typed=typed)
    checked = answers.check(read.value, problem.answer, template.tolerance)
    attempt, counted = PracticeAttempt.record(
        Learner.of_or_start(request), template.pk, problem.seed, read.typed, read.value, problem.answer,
        checked, _seconds(request.POST.get("shown_at")),
    )  # fmt: skip
    feedback = Feedback(checked, read, attempt, counted)
    return _page(request, template, problem, feedback=feedback, typed=typed)


def _seconds(shown_at: str | None) -> float | None:
    """Seconds since the page was drawn, from the form's hidden time; None if unreadable."""
    try:
        seconds = time.time() - float(shown_at or "")
    except ValueError:
        return None
    return seconds if 0 <= seconds <= MAX_SECONDS else None


def _page(
    request: HttpRequest,
    template: PracticeTemplate,
    problem: Problem | None,
    *,
    status: int = 200,
    error: str = "",
    typed: str = "",
    feedback: Feedback | None = None,
) -> HttpResponse:
    context = {
        "template": template,
        "lesson": template.lesson,
        "problem": problem,
        "error": error,
        "typed": typed,
        "feedback": feedback,
        "shown_at": int(time.time()),
        "ratings": Rating.choices,
    }
    if problem is not None:
        result = problem.result
        output = result.outputs[template.output]
        context.update(
            {
                "another_url": f"{template.get_absolute_url()}?seed={fresh_seed(problem.seed)}",
                "calculator_url": f"{simulator().calculator_page_url(result)}#output-{template.output}",
                "calculator_title": template.spec().calc.title,
                "answer_text": format_with_unit(problem.answer, problem.unit),
                "output_text": output.text(),
                "output_label": output.label,
                "before_text": problem.before.outputs[template.output].text(),
                "after_text": problem.after.outputs[template.output].text() if problem.after else "",
                "solution": problem.solution,
            }
        )
    return render(request, "quiz/practice.html", context, status=status)


@require_POST
def rate_practice(
    request: HttpRequest, course_slug: str, lesson_slug: str, template_slug: str
) -> HttpResponse:
    """The learner's own rating instead of the proposed one, within the cards' change window."""
    template = _template_or_404(request, course_slug, lesson_slug, template_slug)
    learner = Learner.of(request)
    try:
        rating = Rating(int(request.POST.get("rating", "")))
        attempt_id = int(request.POST.get("attempt", ""))
    except ValueError:
        return HttpResponse(
            "rating must be 1 to 4 and attempt a number.", status=400, content_type="text/plain"
        )
    attempt = PracticeAttempt.objects.for_learner(learner).filter(template=template, pk=attempt_id).first()
    if attempt is None:
        raise Http404("No such attempt of yours.")
    changed = attempt.change_rating(rating)
    words = f"Rating: {rating.label}." if changed else "That rating is final now."
    another = f"{template.get_absolute_url()}?seed={fresh_seed(attempt.seed)}"
    context = {"words": words, "another_url": another, "template": template, "attempt": attempt}
    return render(request, "quiz/practice_rated.html", context)
