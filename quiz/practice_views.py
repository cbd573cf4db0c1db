"""Practice problems: a drawn problem's page, its answer checked, the learner's rating of it.

GET ``/practice/SLUG/?seed=N`` shows the problem seed N draws (no seed: a redirect to a fresh
one, so the address always carries the draw). POST to the same address
with ``answer`` checks it (felab_sim.engine.problems.answers), records the learner's try at
that draw (quiz.practice_tries, which schedules the template with FSRS) and shows the
verdict and the worked solution; htmx swaps the problem in place, a plain form does the same
page without JavaScript. An answer that cannot be read is explained and not counted.
``/practice/`` lists every published template by lesson with the learner's record on it.

The address is ``/practice/SLUG/``, not under its lesson: a template's slug is unique across
the site (a database constraint), so a shared link stays the same when a template moves to
another lesson or a lesson's slug changes. The first cut's ``/learn/COURSE/LESSON/practice/SLUG/``
redirects there permanently, keeping the query (301 for GET; 308 for POST, which keeps the body).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_http_methods, require_POST

from accounts.instructors import is_instructor
from felab_sim.engine.problems import answers
from felab_sim.engine.problems.drill_problems import Problem
from felab_sim.engine.problems.drill_specs import DrillError, DrillSpec
from felab_sim.engine.problems.drills import DrawnQuestion, draw_problem, draw_question
from felab_sim.engine.problems.mistakes import NamedMistake
from lessons.models import PracticeTemplate
from lessons.simulator import simulator
from pagecache.content_cache import kept
from pagecache.kept_pages import render_kept

from . import clock, practice_sets, practice_stats, practice_tries, scheduling
from .learners import Learner
from .models import MAX_TRIES, HintsBeforeAnswer, PracticeAttempt, PracticeState, Rating
from .write_limits import study_write_limited

MAX_SEED = 2**31 - 1
# How long after the page was drawn an answer's time is believed (a stale tab is not "quick").
MAX_SECONDS = 24 * 3600
# The time a problem's page was drawn travels in its form signed with the template and seed, so
# an answer's speed (and an Easy it may propose) is the server's own measure.
_SHOWN_SIGNER = signing.Signer(salt="quiz.practice.shown")
# Hints taken before a draw's first answer, which has no attempt yet to hold them, are kept in
# the session (per draw; at most this many draws, the latest) and, for an account, in
# HintsBeforeAnswer, which its other sessions read too.
HINTS_SESSION_KEY = "practice_hints"
MAX_DRAWS_WITH_HINTS = 50


def _template_or_404(request: HttpRequest, template_slug: str) -> PracticeTemplate:
    """The template as every visitor sees it, fetched once per content version in each process."""
    drafts = is_instructor(request.user)
    return kept(
        request,
        ("practice-template", drafts, template_slug),
        lambda: get_object_or_404(
            PracticeTemplate.objects.visible(drafts=drafts).select_related("lesson__course"),
            slug=template_slug,
        ),
    )


def _spec(request: HttpRequest, template: PracticeTemplate) -> DrillSpec:
    """The template's engine reading, built once per content version in each process: reading the
    fields (every draw's presets) cost more than drawing from them (bench/bench_drill.py).
    A draft that cannot be read raises DrillError each time; nothing is kept for it."""
    return kept(request, ("practice-spec", is_instructor(request.user), template.slug), template.spec)


def _seed(text: str | None) -> int | None:
    """The seed in the address, or None when it is not a whole number in range."""
    text = None if text is None else text.strip()
    # ASCII digits only (str.isdigit() takes "²", which int() refuses), and no more than the
    # largest seed has past its leading zeros, so int() never reads a number past its digit limit.
    if not text or not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(MAX_SEED)):
        return None
    seed = int(digits)
    return seed if seed <= MAX_SEED else None


def fresh_seed(not_this: int | None = None) -> int:
    while (seed := secrets.randbelow(1_000_000) + 1) == not_this:
        pass
    return seed


def practice_index(request: HttpRequest) -> HttpResponse:
    """Every published template by lesson, with the learner's attempts, share right and what is due.

    The list is the same for everyone: kept per content version, page and all (pagecache/kept_pages.py);
    each template's and lesson's record is a per-visitor part filled from this learner's records,
    read per request in two queries (none for a visitor who never answered)."""
    records = practice_stats.learner_records(Learner.of(request), clock.now())
    return render_kept(
        request,
        "quiz/practice_index.html",
        lambda: {
            "lessons": practice_stats.published_by_lesson(),
            "mastery_window": practice_stats.MASTERY_WINDOW,
        },
        ("practice-index",),
        {"records": records},
    )


@dataclass(frozen=True)
class Feedback:
    """What the page says after an answer."""

    checked: answers.Checked
    read: answers.ReadAnswer
    attempt: PracticeAttempt
    counted: bool
    mistake: NamedMistake | None = None


@require_http_methods(["GET", "POST"])
@study_write_limited
def practice_problem(request: HttpRequest, template_slug: str) -> HttpResponse:
    template = _template_or_404(request, template_slug)
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
        # Until it is answered a problem's page needs its question only: the calculator's ground
        # is checked, its outputs are not computed (drills.draw_question).
        spec = _spec(request, template)
        drawn = draw_question(spec, seed) if request.method == "GET" else draw_problem(spec, seed)
    except DrillError as error:
        # Only an instructor's draft can get here: a published template was checked on save.
        return _page(request, template, None, status=400, error=f"This template cannot draw: {error.message}")
    if isinstance(drawn, Problem):
        return _post(request, template, drawn)
    return _new_draw_page(request, template, spec, drawn)


def _new_draw_page(
    request: HttpRequest, template: PracticeTemplate, spec: DrillSpec, drawn: DrawnQuestion
) -> HttpResponse:
    """A problem not yet answered: the page is the same for every draw of a template but for the
    seed, the question and the form's hidden fields, so it is kept once per template and content
    version (pagecache/kept_pages.py) and only those are filled in (bench/bench_drill.py)."""
    # Text already: the template would localize the numbers on every request.
    draw = {
        "seed": str(drawn.seed),
        "question": drawn.question,
        "shown_at": shown_token(template.pk, drawn.seed),
    }
    context = {"template": template, "lesson": template.lesson, "has_problem": True,
               "unit": spec.answer_unit, "error": "", "typed": "", "feedback": None,
               "tolerance_text": answers.tolerance_text(spec.tolerance),
               "close_text": answers.tolerance_text(answers.close_band(spec.tolerance)), "hints": 0, "steps_shown": [],
               "open": True, "tries_left": MAX_TRIES, "attempt": None, "more_hints": True, "tries": 0}  # fmt: skip
    key = ("practice", template.pk, is_instructor(request.user))
    return render_kept(request, "quiz/practice.html", lambda: context, key, {"draw": draw})


def hint_limit(problem: Problem) -> int:
    """How many steps Hint may reveal: those before the first that gives the answer away (one
    printing a number graded right: often the last, sometimes one before a closing remark, or an
    earlier one whose rounded figure is within the tolerance), and never the last. The answer is
    Show me's."""
    return max(min(problem.steps_before_the_answer, len(problem.steps) - 1), 0)


def _draw_key(template: PracticeTemplate, seed: int) -> str:
    return f"{template.pk}:{seed}"


def _hints(
    request: HttpRequest, template: PracticeTemplate, problem: Problem, attempt: PracticeAttempt | None
) -> int:
    """Steps revealed so far, from the server's record: the attempt's, or before any answer
    the session's."""
    if attempt is not None:
        hints = attempt.hints_used
    else:
        hints = request.session.get(HINTS_SESSION_KEY, {}).get(_draw_key(template, problem.seed), 0)
        if request.user.is_authenticated:
            hints = max(hints, HintsBeforeAnswer.taken(request.user.pk, template.pk, problem.seed))
    return max(0, min(int(hints), hint_limit(problem)))


def _number(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 6 else None


def _take_hint(request: HttpRequest, template: PracticeTemplate, problem: Problem,
               attempt: PracticeAttempt | None, hints: int) -> int:  # fmt: skip
    """One more step, recorded. The form says how many steps its page showed: a press from a
    page that showed fewer than are recorded (a double click, a resent form) reveals no more."""
    shown = _number(request.POST.get("hints"))
    if shown is not None and shown < hints:
        return hints
    hints = min(hints + 1, hint_limit(problem))
    if attempt is not None:
        attempt.record_hints(hints)
    else:
        taken = request.session.get(HINTS_SESSION_KEY, {})
        key = _draw_key(template, problem.seed)
        taken.pop(key, None)
        taken[key] = hints
        request.session[HINTS_SESSION_KEY] = dict(list(taken.items())[-MAX_DRAWS_WITH_HINTS:])
        if request.user.is_authenticated:
            HintsBeforeAnswer.record(request.user.pk, template.pk, problem.seed, hints)
    return hints


def _last_try(problem: Problem, attempt: PracticeAttempt) -> Feedback | None:
    """The verdict of an open attempt's last try, with its named mistake, for the page after a
    hint: the hint adds a step, it does not take the learner's verdict away."""
    if attempt.tries == 0:
        return None
    try:
        read = problem.read_typed(attempt.typed)
    except answers.AnswerError:
        return None
    graded = problem.grade(read.value)
    return Feedback(graded.checked, read, attempt, True, graded.mistake)


def _post(
    request: HttpRequest, template: PracticeTemplate, problem: Problem, extra: dict[str, Any] | None = None
) -> HttpResponse:
    """An answer (a try), a Hint (the next step) or Show me (every step, rated Missed it).
    ``extra`` is more for the page: a practice set's place and its next problem
    (quiz.practice_set_views), which answers its items through here."""
    action = request.POST.get("action", "answer")
    learner = Learner.of(request)
    attempt = (
        PracticeAttempt.objects.for_learner(learner).filter(template=template, seed=problem.seed).first()
        if learner.known
        else None
    )
    hints = _hints(request, template, problem, attempt)
    if action == "hint":
        hints = _take_hint(request, template, problem, attempt, hints)
        feedback = _last_try(problem, attempt) if attempt is not None and not attempt.finished else None
        return _page(request, template, problem, attempt=attempt, hints=hints, feedback=feedback, extra=extra)
    if action == "show":
        attempt = practice_tries.show_solution(
            Learner.of_or_start(request), template.pk, problem.seed, problem.answer, hints
        )
        return _page(request, template, problem, attempt=attempt, hints=hints, counted=True, extra=extra)
    typed = request.POST.get("answer", "")
    try:
        read = problem.read_typed(typed)
    except answers.AnswerError as error:
        return _page(request, template, problem, error=str(error), typed=typed, attempt=attempt, hints=hints,
                     extra=extra)  # fmt: skip
    graded = problem.grade(read.value)
    mistake = graded.mistake.slug if graded.mistake else ""
    attempt, counted = practice_tries.record_try(
        Learner.of_or_start(request), template.pk, problem.seed, read.typed, read.value, problem.answer,
        graded.checked, seconds_since_shown(request.POST.get("shown_at"), template.pk, problem.seed),
        mistake=mistake, hints=hints, tries_seen=_number(request.POST.get("tries")),
    )  # fmt: skip
    feedback = Feedback(graded.checked, read, attempt, counted, graded.mistake)
    return _page(request, template, problem, feedback=feedback, typed="", attempt=attempt, hints=hints,
                 counted=counted, extra=extra)  # fmt: skip


def shown_token(template_id: int, seed: int) -> str:
    """The form's record of when this draw's page was drawn, signed with the draw."""
    return _SHOWN_SIGNER.sign(f"{template_id}.{seed}.{int(clock.now().timestamp())}")


def seconds_since_shown(token: str | None, template_id: int, seed: int) -> float | None:
    """Seconds since the server drew this draw's page, from the form's signed token; None when
    it is missing, altered, from another draw or older than MAX_SECONDS (never "quick")."""
    try:
        drawn_for, drawn_at = _SHOWN_SIGNER.unsign(token or "").rsplit(".", 1)
        seconds = clock.now().timestamp() - int(drawn_at)
    except (signing.BadSignature, ValueError):
        return None
    if drawn_for != f"{template_id}.{seed}":
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
    attempt: PracticeAttempt | None = None,
    hints: int = 0,
    counted: bool = False,
    extra: dict[str, Any] | None = None,
) -> HttpResponse:
    # Open: the draw still takes answers (no attempt yet, or one neither right, out of tries
    # nor shown). Finished: every step is on the page.
    finished = attempt is not None and attempt.finished
    context = {
        "template": template,
        "lesson": template.lesson,
        "problem": problem,
        "has_problem": problem is not None,
        "error": error,
        "typed": typed,
        "feedback": feedback,
        "ratings": Rating.choices,
        "tolerance_text": answers.tolerance_text(template.tolerance),
        "close_text": answers.tolerance_text(answers.close_band(template.tolerance)),
        "attempt": attempt,
        "open": not finished,
        "finished": finished,
        "counted": counted,
        "hints": hints,
        "tries_left": attempt.tries_left if attempt is not None else MAX_TRIES,
        "tries": attempt.tries if attempt is not None else 0,
        # After Show me the rating is fixed: the box says so and offers no buttons.
        "rating_open": attempt is not None and not attempt.shown_solution,
    }
    if problem is not None:
        steps = problem.steps
        context["unit"] = problem.unit
        context["draw"] = {"seed": problem.seed, "question": problem.question,
                           "shown_at": shown_token(template.pk, problem.seed)}  # fmt: skip
        context["steps_shown"] = steps if finished else steps[:hints]
        context["more_hints"] = not finished and hints < hint_limit(problem)
        result = problem.result
        output = result.outputs[template.output]
        context.update(
            {
                "another_url": f"{template.get_absolute_url()}?seed={fresh_seed(problem.seed)}",
                "calculator_url": f"{simulator().calculator_page_url(result)}#output-{template.output}",
                "calculator_title": problem.spec.calc.title,
                "answer_text": problem.answer_text,
                "output_text": output.text(),
                "output_label": output.label,
                "before_text": problem.before.outputs[template.output].text(),
                "after_text": problem.after.outputs[template.output].text() if problem.after else "",
            }
        )
    context.update(extra or {})
    response = render(request, "quiz/practice.html", context, status=status)
    return response


@require_POST
@study_write_limited
def rate_practice(request: HttpRequest, template_slug: str) -> HttpResponse:
    """The learner's own rating instead of the proposed one, within the cards' change window."""
    template = _template_or_404(request, template_slug)
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
    changed = practice_tries.change_rating(attempt, rating)
    stored = Rating(attempt.rating).label
    if changed:
        state = PracticeState.objects.for_learner(learner).filter(template=template).first()
        comes_back = scheduling.humanize_interval(state.due - clock.now()) if state else ""
        words = f"Stored: {stored}. This problem comes back {comes_back}, with new numbers."
    elif attempt.shown_solution:
        words = f"That rating is final: after Show me, {stored} stays stored."
    else:
        words = f"That rating is final now: {stored} stays stored (a rating changes only within a minute)."
    context = {
        "template": template,
        "attempt": attempt,
        "changed": changed,
        "rated_words": words,
        "open_for_rating": changed,  # within the window another press changes it again
        "ratings": Rating.choices,
        "another_url": f"{template.get_absolute_url()}?seed={fresh_seed(attempt.seed)}",
        # Rated from a practice set's problem: the confirmation page goes on in the set.
        "in_set": practice_sets.next_in_set(learner, request.POST.get("set_place")),
    }
    # htmx swaps the rating section in place; a plain form gets the whole confirmation page.
    name = "quiz/practice_rating.html" if request.htmx else "quiz/practice_rated.html"
    response = render(request, name, context)
    patch_vary_headers(response, ["HX-Request"])
    return response


@require_http_methods(["GET", "HEAD", "POST"])
def moved_practice(
    request: HttpRequest, course_slug: str, lesson_slug: str, template_slug: str, to: str
) -> HttpResponse:
    """The first cut's address under its lesson: permanently at /practice/SLUG/ now, found by
    slug alone (a template that moved lessons still is), with the query kept. A POST keeps
    its method and form (308), so a page open in a tab since before still answers."""
    target = reverse(to, args=[template_slug])
    if query := request.META.get("QUERY_STRING", ""):
        target = f"{target}?{query}"
    return HttpResponsePermanentRedirect(target, preserve_request=request.method == "POST")
