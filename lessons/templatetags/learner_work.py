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
from django.utils.safestring import SafeString, mark_safe

from lessons.models import Card, Course
from serving.csrf import hidden_token_input

register = template.Library()

PROVIDED = ("card_study", "answer_typed_before", "rating_buttons", "course_maps")
_provided: dict[str, Callable[..., Any]] = {}


def provide(**functions: Callable[..., Any]) -> None:
    """Install the learner app's functions, by the names in PROVIDED: ``card_study(context,
    card)``, ``answer_typed_before(context, card)``, ``rating_buttons(previews)`` and
    ``course_maps(context, courses)``."""
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
    return mark_safe(json.dumps(vals))


@register.simple_tag(takes_context=True)
def rating_form_fields(context: template.Context, card: Card) -> SafeString:
    """The rating form's fields: the page's CSRF token, the learner's showing of ``card`` and the
    four buttons. One tag, not template lines, for the same reason as opened_layer_vals."""
    study = _provider("card_study")(context, card)
    showing = str(study.showing.pk) if study.showing else ""
    return mark_safe(
        f"{hidden_token_input(context['csrf_token'])}\n"
        f'          <input type="hidden" name="showing" id="rating-showing" value="{showing}">\n'
        f"          {_provider('rating_buttons')(study.previews)}"
    )


@register.simple_tag(takes_context=True)
def answer_typed_before(context: template.Context, card: Card) -> str:
    """What the learner typed before showing the answer, put back in the box when they hide it."""
    return _provider("answer_typed_before")(context, card)


@register.simple_tag(takes_context=True)
def course_maps(context: template.Context, courses: Iterable[Course]) -> list[Any]:
    """Each course's map for the requesting learner."""
    return _provider("course_maps")(context, courses)
