"""/progress/'s parts that name the learner, written in Python as the header's visitor_nav is.

They are ``per_visitor`` parts of quiz/progress.html, rendered on every request. As template
tags, the line saying who is signed in and the Your data and Your account sections cost 492
Python calls a request (now 100), mostly addresses, conditions and the sharing form; here their text
is kept by what it depends on (signed in or not, the sharing choice, whether there is an email
address) and only the learner's own values are put in: the username, the email address and the
page's CSRF input (serving.templatetags.content_fragments.kept_with_holes).
"""

from __future__ import annotations

from django import template
from django.template.loader import get_template
from django.utils.safestring import SafeString

from serving.csrf import hidden_token_input
from serving.templatetags.content_fragments import kept_with_holes

register = template.Library()


@register.simple_tag(takes_context=True)
def progress_learner_line(context: template.Context) -> SafeString:
    """Who is studying: "Signed in as …", or how to keep the progress of a browser's session."""
    user = context["learner"].user
    signed_in = user is not None

    def build(marks):
        return get_template("quiz/progress_learner_line.html").render({"signed_in": signed_in, **marks})

    return kept_with_holes(
        context,
        ("progress-learner-line", signed_in),
        build,
        {"username": user.get_username()} if signed_in else {},
    )


@register.simple_tag(takes_context=True)
def progress_account(context: template.Context) -> SafeString:
    """The Your data section (the sharing form, the export) and, signed in, the Your account links."""
    user = context["learner"].user
    if user is None:
        share_name, has_email, holes = None, False, {}
    else:
        share_name, has_email = context["share_name"], bool(user.email)
        holes = {"email": user.email, "token_input": SafeString(hidden_token_input(context["csrf_token"]))}
    sharing_form = context.get("sharing_form")  # lazy: made only when the part is built

    def build(marks):
        return get_template("quiz/progress_account.html").render(
            {"signed_in": user is not None, "has_email": has_email, "sharing_form": sharing_form, **marks}
        )

    return kept_with_holes(
        context, ("progress-account", user is not None, share_name, has_email), build, holes
    )
