"""The instructor's and the progress page's charts, built with plotly's Python API and sent to
the page as JSON (drawn there as SVG on the server, felab_sim/charts/svgchart.py)."""

import functools
import json
import math
from typing import Any

import plotly.graph_objects as go

from .models import Rating
from .practice_stats import CALIBRATION_WINDOW, LessonPractice
from .progress_summary import ProgressSummary
from .selectors import CardOverview

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


DUE_NOW_COLOUR = "#a35200"
COMING_COLOUR = "#1f5fbf"


def due_forecast_json(summary: ProgressSummary) -> str:
    """Reviews (cards and practice problems) due per day over the next days, those due now first, as Anki's statistics show:
    the plotly figure as JSON, the same string for the same counts (the chart tag keeps its HTML
    by it)."""
    return _due_forecast_json(tuple(summary.forecast_days))


# Building a plotly figure costs more than the rest of /progress/; the figure depends on the
# counts alone, which few learners differ in, so each process remembers the latest ones.
@functools.lru_cache(maxsize=256)
def _due_forecast_json(days: tuple[tuple[str, int], ...]) -> str:
    labels = [label for label, _ in days]
    most = max((count for _, count in days), default=0)
    figure = go.Figure(
        layout=go.Layout(
            barmode="stack",
            template="none",
            height=240,
            margin={"l": 40, "r": 10, "t": 10, "b": 50},
            xaxis={"title": {"text": "days from now"}, "type": "category", "automargin": True},
            yaxis={
                "title": {"text": "cards and problems due"},
                "rangemode": "tozero",
                "dtick": max(1, math.ceil(most / 5)),
                "tickformat": "d",
                "automargin": True,
            },
            showlegend=False,
            paper_bgcolor="rgba(0,0,0,0)",
            plot_bgcolor="rgba(0,0,0,0)",
        )
    )
    # Two traces so the bar of what is due now stands out; each day has one of them non-zero.
    figure.add_trace(
        go.Bar(
            name="Due now",
            x=labels,
            y=[count if label == "now" else 0 for label, count in days],
            marker={"color": DUE_NOW_COLOUR},
            hovertemplate="%{y} to review now<extra></extra>",
        )
    )
    figure.add_trace(
        go.Bar(
            name="Coming due",
            x=labels,
            y=[0 if label == "now" else count for label, count in days],
            marker={"color": COMING_COLOUR},
            hovertemplate="%{y} due in %{x} days<extra></extra>",
        )
    )
    return figure.to_json()


# Tick marks on the calibration chart's log axis, as error ratios ("1×" is exact).
CALIBRATION_TICKS = (1, 1.5, 2, 3, 5, 10, 20, 50, 100, 1000)
EXACT_COLOUR = "#1d7a46"


def calibration_figure(practice: list[LessonPractice]) -> dict[str, Any]:
    """One line per lesson: the median error ratio of each run of attempts against the attempts
    so far, on a log axis with 1× (exact) marked, so sharper estimates read as a line falling
    toward it. Built as plotly JSON by hand: a figure object costs more than the whole page."""
    finite = [ratio for lesson in practice for ratio in lesson.calibration if math.isfinite(ratio)]
    highest = max(finite, default=2.0)
    # An answer of 0 is infinitely off: no point for that run; the table says "∞".
    traces = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": f"Lesson {lesson.lesson_number:02d}",
            "x": [window.last for window in lesson.windows],
            "y": [window.median if math.isfinite(window.median) else None for window in lesson.windows],
            "hovertemplate": f"Lesson {lesson.lesson_number:02d}, to attempt %{{x}}: %{{y:.2f}}× off<extra></extra>",
        }
        for lesson in practice
    ]
    most_attempts = max((lesson.attempts for lesson in practice), default=CALIBRATION_WINDOW)
    ticks = [tick for tick in CALIBRATION_TICKS if tick <= highest * 1.5] or [1]
    return {
        "data": traces,
        "layout": {
            "height": 260,
            "margin": {"l": 50, "r": 10, "t": 10, "b": 50},
            "xaxis": {
                "title": {"text": f"attempts in the lesson (median of each {CALIBRATION_WINDOW})"},
                "range": [0, most_attempts + 1],
                "dtick": CALIBRATION_WINDOW,
                "tickformat": "d",
            },
            "yaxis": {
                "title": {"text": "times off (1× exact)"},
                "type": "log",
                "range": [math.log10(0.9), math.log10(max(highest, 1.2) * 1.25)],
                "tickvals": ticks,
                "ticktext": [f"{tick}×" for tick in ticks],
            },
            "shapes": [
                {
                    "type": "line",
                    "xref": "paper",
                    "x0": 0,
                    "x1": 1,
                    "yref": "y",
                    "y0": 1,
                    "y1": 1,
                    "line": {"color": EXACT_COLOUR, "dash": "dash", "width": 1},
                }
            ],
            "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
            "paper_bgcolor": "rgba(0,0,0,0)",
            "plot_bgcolor": "rgba(0,0,0,0)",
        },
    }
