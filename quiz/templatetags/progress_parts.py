"""/progress/'s parts that name the learner: ``per_visitor`` parts of quiz/progress.html,
rendered on every request with the learner's own values."""

from __future__ import annotations

from django import template
from django.template.defaulttags import CsrfTokenNode
from django.template.loader import get_template
from django.utils.safestring import SafeString

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
