"""The learner's own work on lessons' pages, asked of the app that keeps it.

The card page shows the learner's typed answer, study state and rating buttons; the home page
shows each course's map of their progress. That work belongs to quiz, which stands above
lessons: quiz hands its functions in at start-up (provide(), from QuizConfig.ready) and these
tags call them, so lessons' templates load only lessons' own libraries and lessons imports
nothing of quiz.
"""

import json
from collections.abc import Callable, Iterable
from typing import Any

from django import template
from django.core.exceptions import ImproperlyConfigured
from django.template.defaulttags import CsrfTokenNode
from django.template.loader import get_template
from django.utils.html import escape
from django.utils.safestring import SafeString

from lessons.models import Card, Course
from pagecache.templatetags.content_fragments import kept_part
from serving.templatetags.fixed_urls import fixed_url

register = template.Library()

PROVIDED = ("card_study", "answer_typed_before", "rating_buttons", "course_maps", "home_run")
_provided: dict[str, Callable[..., Any]] = {}


def provide(**functions: Callable[..., Any]) -> None:
    """Install the learner app's functions, by the names in PROVIDED: ``card_study(context,
    card)``, ``answer_typed_before(context, card)``, ``rating_buttons(previews)`` and
    ``course_maps(context, courses)`` and ``home_run(context, run, course_map)``."""
    if unknown := set(functions) - set(PROVIDED):
        raise TypeError(f"no learner-work tag is named {', '.join(sorted(unknown))}")
    _provided.update(functions)


def _provider(name: str) -> Callable[..., Any]:
    try:
        return _provided[name]
    except KeyError:
        raise ImproperlyConfigured(f"no installed app provides the learner's {name} (quiz does)") from None


@register.simple_tag(takes_context=True)
def card_study(context: template.Context, card: Card) -> Any:
    """The requesting learner's typed answer, showing, review and rating previews for ``card``."""
    return _provider("card_study")(context, card)


@register.simple_tag(takes_context=True)
def opened_layer_vals(context: template.Context, card: Card, layer: str) -> SafeString:
    """The JSON htmx posts when the learner opens a layer of ``card``: the layer, their showing
    of the card and the page's CSRF token. Built here, not in the template: it is rendered on
    every card page with its answer shown, and the template's version cost about 120 calls."""
    showing = _provider("card_study")(context, card).showing
    vals = {
        "layer": layer,
        "showing": str(showing.pk) if showing else "",
        "csrfmiddlewaretoken": str(context["csrf_token"]),
    }
    # Within hx-vals='…': a layer's name, digits and the token's letters and digits hold no quote.
    return SafeString(json.dumps(vals))


@register.simple_tag(takes_context=True)
def rating_form_fields(context: template.Context, card: Card) -> SafeString:
    """The rating form's fields: the page's CSRF token, the learner's showing of ``card`` and the
    four buttons. One tag, not template lines, for the same reason as opened_layer_vals."""
    study = _provider("card_study")(context, card)
    showing = str(study.showing.pk) if study.showing else ""
    return SafeString(
        f"{CsrfTokenNode().render(context)}\n"
        f'          <input type="hidden" name="showing" id="rating-showing" value="{showing}">\n'
        f"          {_provider('rating_buttons')(study.previews)}"
    )


# What a card page says under its rating buttons once the learner has rated it this time.
_RATED = (
    '<p class="ack">You rated it <strong>{label}</strong> this time; another button within a minute changes it.</p>\n'
    "          {next}"
)
_NEXT_DUE = (
    '<p class="next-step-line"><a class="button button-primary next-step" href="{url}">Next due card →</a> '
    '<span class="key-hint-inline">or press <kbd>N</kbd></span></p>'
)


@register.simple_tag(takes_context=True)
def rating_result(context: template.Context, card: Card, review_mode: bool) -> SafeString:
    """The learner's rating of ``card`` this time, if any, and where to go next: the next due
    card in review, else the lesson's next step."""
    review = _provider("card_study")(context, card).review
    if review is None:
        return SafeString("")
    return SafeString(
        _RATED.format(label=escape(review.rating_label), next=where_next(context, card, review_mode))
    )


@register.simple_tag(takes_context=True)
def where_next(context: template.Context, card: Card, review_mode: bool) -> SafeString:
    """Once ``card`` is rated: the next due card in review, else the lesson's next step."""
    return (
        SafeString(_NEXT_DUE.format(url=fixed_url("review_next")))
        if review_mode
        else next_step(context, card)
    )


@register.simple_tag(takes_context=True)
def next_step(context: template.Context, card: Card) -> SafeString:
    """Where to go once ``card`` is rated (lessons/next_step.html): course content only, so kept
    per card and content version, though the parts that show it are the learner's."""

    def build() -> str:
        return get_template("lessons/next_step.html").render({"card": card})

    return SafeString(kept_part(context, ("next-step", card.pk), build))


@register.simple_tag(takes_context=True)
def answer_typed_before(context: template.Context, card: Card) -> str:
    """What the learner typed before showing the answer, put back in the box when they hide it
    (Hide answer comes back to ?answer=hidden); nothing on a first visit to the card."""
    # .get(), not the template's request.GET.answer: a missing key there is an exception that
    # the template engine catches and logs, on every first visit to a card.
    if context["request"].GET.get("answer") != "hidden":
        return ""
    return _provider("answer_typed_before")(context, card)


@register.simple_tag(takes_context=True)
def course_maps(context: template.Context, courses: Iterable[Course]) -> list[Any]:
    """Each course's map for the requesting learner."""
    return _provider("course_maps")(context, courses)


@register.simple_tag(takes_context=True)
def home_run(context: template.Context, run: Any, course_map: Any) -> SafeString:
    """A run of lessons on the home page's map, with the requesting learner's progress."""
    return _provider("home_run")(context, run, course_map)
