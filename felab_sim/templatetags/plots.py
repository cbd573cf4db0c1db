from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

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
