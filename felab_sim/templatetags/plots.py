import json
from functools import lru_cache

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from felab_sim.charts import svgchart

register = template.Library()

# The same escapes as Django's json_script: nothing in the JSON can close the script element.
_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


@register.simple_tag
def figure_island(element_id: str, figure_json: str) -> SafeString:
    """A plotly figure already serialized (and cached) as JSON, as a data island for plots.js."""
    return format_html(
        '<script id="{}" type="application/json">{}</script>',
        element_id,
        mark_safe(figure_json.translate(_ESCAPES)),
    )


@register.simple_tag
def chart(element_id: str, figure_json: str | dict, label: str) -> SafeString:
    """A chart drawn on the server as SVG (seen at once, without JavaScript), with its plotly
    JSON beside it for the interactive version that static/js/plots.js loads on demand."""
    if not isinstance(figure_json, str):
        figure_json = json.dumps(figure_json)
    return _chart_html(element_id, figure_json, label)


@lru_cache(maxsize=256)
def _chart_html(element_id: str, figure_json: str, label: str) -> SafeString:
    # Figures are cached as JSON by their parameters (/progress/'s forecast by its counts,
    # quiz.charts), so the same string comes back for the same chart: drawing its SVG and
    # escaping its JSON and label once per process is enough.
    return format_html(
        '{}<div class="plot" data-figure="{}" role="img" aria-label="{}">{}</div>'
        '<p class="chart-explore" hidden><button type="button" data-explore="{}">'
        "Explore this chart: values on hover, zoom</button></p>",
        figure_island(element_id, figure_json),
        element_id,
        label,
        mark_safe(svgchart.render(json.loads(figure_json), element_id)),  # svgchart escapes its texts
        element_id,
    )
