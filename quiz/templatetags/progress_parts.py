"""/progress/'s parts that are the learner's own: ``per_visitor`` parts of quiz/progress.html,
rendered on every request."""

from __future__ import annotations

from django import template
from django.template.defaulttags import CsrfTokenNode
from django.template.loader import get_template
from django.utils import timezone
from django.utils.safestring import SafeString

from pagecache.templatetags.content_fragments import kept_part

from ..lesson_runs import ProgressRun
from ..selectors import LessonProgress

register = template.Library()


@register.simple_tag(takes_context=True)
def progress_learner_line(context: template.Context) -> SafeString:
    """Who is studying: "Signed in as …", or how to keep the progress of a browser's session."""
    user = context["learner"].user
    values = {"signed_in": user is not None, "username": user.get_username() if user is not None else ""}
    return SafeString(get_template("quiz/progress_learner_line.html").render(values))


@register.simple_tag(takes_context=True)
def progress_account(context: template.Context) -> SafeString:
    """The Your data section (the sharing form, the export) and, signed in, the Your account links."""
    user = context["learner"].user
    values = {"signed_in": user is not None, "sharing_form": context.get("sharing_form")}
    if user is not None:
        values |= {
            "has_email": bool(user.email),
            "email": user.email,
            "token_input": CsrfTokenNode().render(context),
        }
    return SafeString(get_template("quiz/progress_account.html").render(values))


@register.simple_tag(takes_context=True)
def progress_run(context: template.Context, run: ProgressRun) -> SafeString:
    """A run of lessons on /progress/. Lessons the learner rated nothing in read the same for every
    such learner: kept by their ids, and built from those lessons alone with no schedule at all,
    so nothing of the learner's can reach what is kept. A lesson they rated is rendered anew."""
    part = get_template("quiz/progress_run.html")
    if any(progress.states for progress in run.lessons):
        return SafeString(part.render({"run": run}))
    lessons = tuple(progress.lesson for progress in run.lessons)

    def build() -> str:
        untouched = ProgressRun(tuple(LessonProgress(lesson, {}, timezone.now()) for lesson in lessons))
        return part.render({"run": untouched})

    return SafeString(
        kept_part(context, ("progress-untouched", tuple(lesson.id for lesson in lessons)), build)
    )
