"""The instructor's chart, built with plotly's Python API and sent to the page as JSON."""

import json
import math
from typing import Any

import plotly.graph_objects as go

from .models import Rating
from .pages import CardOverview

# The rating buttons' colours in felab.css, so the chart reads like the card.
RATING_COLOURS = {
    Rating.MISSED_IT: "#b3261e",
    Rating.HARD: "#a35200",
    Rating.GOT_IT: "#1d7a46",
    Rating.EASY: "#1f5fbf",
}


def card_axis_label(overview: CardOverview) -> str:
    card = overview.card
    return f"L{card.lesson.number:02d} · {f'Step {card.number}' if card.number else 'Draft'}"


def ratings_figure(overviews: list[CardOverview]) -> dict[str, Any]:
    """One horizontal bar per card, stacked by each student's latest rating."""
    labels = [card_axis_label(overview) for overview in overviews]
    most = max((sum(overview.counts.values()) for overview in overviews), default=0)
    figure = go.Figure(
        layout=go.Layout(
            barmode="stack",
            template="none",
            height=140 + 44 * max(len(overviews), 1),
            margin={"l": 10, "r": 10, "t": 10, "b": 40},
            xaxis={
                "title": {"text": "students (latest rating)"},
                "rangemode": "tozero",
                "automargin": True,
                # Whole students: ticks one apart for a small class, about eight ticks for a big one.
                "dtick": max(1, math.ceil(most / 8)),
                "tickformat": "d",
            },
            yaxis={"autorange": "reversed", "automargin": True},
            # Stacked bars list their legend backwards by default; read it in rating order.
            legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom", "traceorder": "normal"},
            paper_bgcolor="rgba(0,0,0,0)",
            plot_bgcolor="rgba(0,0,0,0)",
        )
    )
    for value, label in Rating.choices:
        figure.add_trace(
            go.Bar(
                name=label,
                orientation="h",
                y=labels,
                x=[overview.counts.get(value, 0) for overview in overviews],
                marker={"color": RATING_COLOURS[Rating(value)]},
                hovertemplate=f"%{{y}}: %{{x}} {label}<extra></extra>",
            )
        )
    # Through JSON once, so the page gets plain lists and numbers only.
    return json.loads(figure.to_json())
