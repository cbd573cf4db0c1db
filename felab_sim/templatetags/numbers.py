"""The site's number-formatting rule (felab_sim/engine/core/numbers.py) as a template filter.

{% load numbers %}
{{ level.ttft_p95_ms|number }}        -> 41.4
{{ level.ttft_p95_ms|number:"ms" }}   -> 41.4 ms
"""

from django import template

from felab_sim.engine.core.numbers import MISSING, format_with_unit

register = template.Library()


@register.filter
def number(value: object, unit: str = "") -> str:
    """A number printed by the site's one rule; anything that is not a number prints as a dash."""
    if value is None or value == "":
        return MISSING
    if isinstance(value, int | float):
        return format_with_unit(value, unit)
    try:
        return format_with_unit(float(str(value)), unit)
    except ValueError:
        return MISSING
