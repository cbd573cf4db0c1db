"""The words a calculator describes its chart in, and the measurements drawn beside its model.

A chart is described once, as a plotly figure: a dict of ``data`` traces and a ``layout``, built
here without importing plotly. That one description is what both renderers take: the page's
static/js/plots.js hands it to plotly in the browser, and felab_sim/charts/svgchart.py draws it
as SVG on the server (docs/architecture.md, "Where things live"). Colours of text and grid are
left to the page, which themes them light or dark. Pure Python, no Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BLUE, ORANGE, GREEN, RED, GREY, PURPLE = "#3b7dd8", "#e07b1a", "#2e9e5b", "#d64541", "#8a8f98", "#8e5bd0"

Figure = dict  # a plotly figure: {"data": [trace, ...], "layout": {...}}


@dataclass(frozen=True)
class Measured:
    """A number the course published from a real run, with the model's value beside it."""

    what: str
    measured: float
    unit: str
    where: str
    model: float | None = None
    x: float | None = None  # where the chart draws it


@dataclass(frozen=True)
class Series:
    """A run measured elsewhere (e.g. against the practice server), drawn over a chart's model curve.

    ``curve`` names the model curve it measures, if the chart has several (the prefix-cache
    chart: ``cold``, ``shared-first``, ``variable-first``): its points take that curve's colour.
    """

    label: str
    x: Sequence[float]
    y: Sequence[float]
    curve: str = ""


def layout(x_title: str, y_title: str, **extra) -> dict:
    described = {
        "height": 380,
        "margin": {"l": 60, "r": 24, "t": 24, "b": 52},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0, "font": {"size": 11}},
        "hovermode": "closest",
        "font": {"size": 12},
    }
    described.update(extra)
    return described


def line(name: str, x: Sequence[float], y: Sequence[float], colour: str, **extra) -> dict:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": list(x),
        "y": list(y),
        "line": {"color": colour, "width": 2.5},
        **extra,
    }


def dashed(name: str, x: Sequence[float], y: Sequence[float], colour: str, width: float, dash: str) -> dict:
    return line(name, x, y, colour, line={"color": colour, "width": width, "dash": dash})


def points(
    name: str, x: Sequence[float], y: Sequence[float], colour: str, symbol: str = "diamond-open"
) -> dict:
    marker = {"color": colour, "size": 12, "symbol": symbol, "line": {"width": 2, "color": colour}}
    return {"type": "scatter", "mode": "markers", "name": name, "x": list(x), "y": list(y), "marker": marker}


def bars(name: str, labels: Sequence[str], values: Sequence[float], colours: Sequence[str]) -> dict:
    return {
        "type": "bar",
        "x": list(labels),
        "y": list(values),
        "marker": {"color": list(colours)},
        "name": name,
    }


def these_settings(x: float, y: float) -> dict:
    """The point the page's own settings give, on every chart."""
    return points("these settings", [x], [y], GREY, "circle")


def measured_runs(series: Sequence[Series], colours: dict[str, str] | None = None) -> list[dict]:
    """Runs measured elsewhere, each in its curve's colour (purple where it names none)."""
    return [
        points(f"measured: {s.label}", s.x, s.y, (colours or {}).get(s.curve, PURPLE), "x-thin-open")
        for s in series
    ]


def evenly(high: float, steps: int = 60, low: float = 0.0) -> list[float]:
    """``steps + 1`` evenly spaced values from ``low`` to ``high``: a curve's x axis."""
    return [low + (high - low) * i / steps for i in range(steps + 1)]
