"""plotly figures of a sweep, built in Python and sent to the page as JSON.

Colours of text and grid are left to the page (static/js/plots.js applies the light or
dark theme), so the same JSON serves both schemes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from ..engine.sweep.course_run import COURSE_RUN_SETTINGS, published_for
from ..engine.sweep.metrics import LevelResult, SweepResult

BLUE, ORANGE, GREEN, RED, GREY = "#3b7dd8", "#e07b1a", "#2e9e5b", "#d64541", "#8a8f98"
# What each curve shows: (level key, colour, panel row, on the right-hand axis, legend name).
SERIES = (
    ("agg_tok_s", BLUE, 1, False, "total"),
    ("user_tok_s", ORANGE, 1, True, "per user"),
    ("ttft_p50_ms", GREEN, 2, False, "TTFT p50"),
    ("ttft_p95_ms", RED, 2, False, "TTFT p95"),
)


# plotly's default template also styles every other kind of trace and polar, ternary, 3-D and
# map axes: 6.5 kB of the 10.3 kB figure /sim/ sent on every request (now 4.6 kB). These charts draw
# only scatter traces on 2-D axes, which no dropped key touches, so they draw the same.
TEMPLATE_LAYOUT_KEPT = (
    "autotypenumbers",
    "colorway",
    "font",
    "hovermode",
    "hoverlabel",
    "paper_bgcolor",
    "plot_bgcolor",
    "xaxis",
    "yaxis",
    "shapedefaults",
    "annotationdefaults",
    "title",
)


@cache
def scatter_template() -> go.layout.Template:
    """plotly's default template cut to what a chart of scatter traces on 2-D axes reads."""
    full = pio.templates[pio.templates.default]
    layout = full.layout.to_plotly_json()
    return go.layout.Template(
        data={"scatter": full.data.scatter},
        layout={key: layout[key] for key in TEMPLATE_LAYOUT_KEPT if key in layout},
    )


def _axis_ticks(levels: Sequence[int]) -> dict[str, Any]:
    # A log-2 axis: equal steps for doublings, ticks at exactly the levels swept.
    return {
        "type": "log",
        "tickvals": list(levels),
        "ticktext": [str(level) for level in levels],
        "title": {"text": "concurrent users (C)"},
    }


def _knee(fig: go.Figure, result: SweepResult, rows: Sequence[int]) -> None:
    capacity = result.capacity
    if capacity is None:
        return
    if capacity == max(result.params.levels):
        # Every level swept meets the SLO: the knee is somewhere beyond the chart, not here.
        fig.add_annotation(
            x=1,
            y=0,
            xref="x domain",
            yref="y domain",
            text=f"every level within the SLO: capacity is at least {capacity}",
            showarrow=False,
            xanchor="right",
            yanchor="bottom",
            font={"size": 11},
        )
        return
    for row in rows:
        fig.add_vline(x=capacity, line={"dash": "dot", "color": GREY, "width": 1.5}, row=row, col=1)
    fig.add_annotation(
        x=math.log10(capacity),  # log x axis: placed in log10 units
        y=0,
        xref="x",
        yref="y domain",
        text=f"knee: capacity {capacity}",
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        font={"size": 11},
    )


def _points(levels: Sequence[LevelResult] | Sequence[dict[str, float]], key: str) -> tuple[list, list]:
    xs, ys = [], []
    for level in levels:
        row = level if isinstance(level, dict) else level.as_dict()
        xs.append(row["conc"])
        ys.append(row[key])
    return xs, ys


def sweep_figure(
    result: SweepResult,
    *,
    show_published: bool = True,
    measured: Sequence[tuple[str, Sequence[dict[str, float]]]] = (),
    compact: bool = False,
) -> str:
    """Throughput (total and per user) over TTFT (p50, p95, SLO line), against concurrency.

    ``measured`` adds runs measured over HTTP: (label, rows with the JSON level keys).
    Returns the figure as plotly JSON, ready for the page.
    """
    levels = [level.conc for level in result.levels]
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12,
        subplot_titles=("Throughput (tok/s)", "Time to first token (ms)"),
        specs=[[{"secondary_y": True}], [{}]],
    )
    for key, colour, row, secondary, short in SERIES:
        x, y = _points(result.levels, key)
        fig.add_trace(
            go.Scatter(
                x=x, y=y, name=f"{short} (model)", mode="lines+markers", line={"width": 2.5, "color": colour}
            ),
            row=row,
            col=1,
            secondary_y=secondary if row == 1 else None,
        )
    slo = result.params.slo_ms
    fig.add_hline(y=slo, line={"dash": "dash", "color": RED, "width": 1}, row=2, col=1)
    fig.add_annotation(
        x=0,
        xref="x domain",
        y=math.log10(slo),  # annotations on a log axis are placed in log10 units
        text=f"SLO {slo:g} ms",
        showarrow=False,
        xanchor="left",
        yanchor="bottom",
        font={"color": RED, "size": 11},
        row=2,
        col=1,
    )

    published = published_for(result.params) if show_published else []
    overlays = [(f"course's run, {COURSE_RUN_SETTINGS}", published)] if published else []
    overlays += list(measured)
    symbols = ["diamond-open", "x-thin-open", "star-open", "square-open"]
    for index, (label, rows) in enumerate(overlays):
        symbol = symbols[index % len(symbols)]
        marker = {"symbol": symbol, "size": 11, "line": {"width": 2}}
        for key, colour, row, secondary, short in SERIES:
            x, y = _points(rows, key)
            fig.add_trace(
                go.Scatter(
                    x=x, y=y, name=f"{short} ({label})", mode="markers", marker={**marker, "color": colour}
                ),
                row=row,
                col=1,
                secondary_y=secondary if row == 1 else None,
            )

    _knee(fig, result, rows=(1, 2))
    fig.update_xaxes(**_axis_ticks(levels), row=2, col=1)
    fig.update_xaxes(type="log", tickvals=levels, ticktext=[str(level) for level in levels], row=1, col=1)
    fig.update_yaxes(title_text="total tok/s", rangemode="tozero", row=1, col=1, secondary_y=False)
    fig.update_yaxes(
        title_text="per-user tok/s",
        rangemode="tozero",
        row=1,
        col=1,
        secondary_y=True,
        showgrid=False,
        tickmode="auto",
        nticks=6,
    )
    fig.update_yaxes(title_text="ms (log)", type="log", dtick=1, row=2, col=1)
    fig.update_layout(
        height=420 if compact else 560,
        margin={"l": 56, "r": 56, "t": 40, "b": 48},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0, "font": {"size": 11}},
        hovermode="x unified",
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        font={"size": 12},
        template=scatter_template(),
    )
    return fig.to_json()
