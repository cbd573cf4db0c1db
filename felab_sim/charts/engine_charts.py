"""The /sim/engine/ page's charts, as plotly JSON in engine/core/chart.py's words.

Each is drawn on the server as SVG (svgchart.py) and, when a student reaches for it, by plotly in
the browser. Pure Python, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..engine.core.chart import PURPLE, RED, layout, line, points
from ..engine.serving.planner import Plan
from ..engine.serving.run_results import RequestResult, Sample
from ..engine.serving.serving_runs import FIT

BLUE, ORANGE, GREEN, GREY = "#1f77b4", "#ff7f0e", "#2ca02c", "#7f7f7f"
# Enough points for a smooth curve at desktop width; the run may hold thousands of samples.
MAX_POINTS = 300


def _dump(figure: dict) -> str:
    return json.dumps(figure, separators=(",", ":"))


def _thinned(samples: Sequence[Sample]) -> list[Sample]:
    step = max(1, -(-len(samples) // MAX_POINTS))
    return list(samples[::step])


def measured_kv_recorded(measured: Mapping[str, Sequence[float]]) -> bool:
    """Whether a measured run logged its KV use: the RTX PRO 6000 runs' column is 0 throughout
    while requests run, which is a metric not recorded, not an empty pool."""
    return any(value > 0 for value in measured["kv_pct"])


def _measured_traces(measured: Mapping[str, Sequence[float]]) -> list[dict]:
    """The measured run's per-second curves as markers over felab's lines, in the same colours."""
    t = list(measured["t"])
    traces = [
        line(
            f"measured {name}",
            t,
            list(measured[name]),
            colour,
            mode="markers",
            marker={"size": 4, "color": colour},
        )
        for name, colour in (("running", BLUE), ("waiting", ORANGE))
    ]
    if measured_kv_recorded(measured):
        traces.append(
            line(
                "measured KV (%)",
                t,
                list(measured["kv_pct"]),
                GREEN,
                mode="markers",
                yaxis="y2",
                marker={"size": 4, "color": GREEN, "symbol": "triangle-up"},
            )
        )
    return traces


def timeseries_figure(
    samples: Sequence[Sample], measured: Mapping[str, Sequence[float]] | None = None
) -> str:
    """Running and waiting requests (left axis) and KV blocks in use (right axis, %) over time;
    with ``measured`` (a real run's per-second "t", "running", "waiting", "kv_pct"), its curves
    drawn over the model's."""
    shown = _thinned(samples)
    t = [round(s.t, 2) for s in shown]
    figure = {
        "data": [
            line("running", t, [s.running for s in shown], BLUE),
            line("waiting", t, [s.waiting for s in shown], ORANGE),
            line(
                "KV in use (%)",
                t,
                [s.kv_pct for s in shown],
                GREEN,
                yaxis="y2",
                line={"color": GREEN, "width": 2, "dash": "dot"},
            ),
            *(_measured_traces(measured) if measured else []),
        ],
        "layout": layout(
            "time (s)",
            "requests",
            margin={"l": 56, "r": 52, "t": 24, "b": 52},
            yaxis2={
                "title": {"text": "KV in use (%)"},
                "overlaying": "y",
                "side": "right",
                "range": [0, 100],
                "rangemode": "tozero",
            },
        ),
    }
    return _dump(figure)


def _share_curve(values: Sequence[float]) -> tuple[list[float], list[float]]:
    """Each value against the share of requests at or below it, in %: a distribution as a line."""
    ordered = sorted(values)
    n = len(ordered)
    return [round(v, 3) for v in ordered], [round(100 * (i + 1) / n, 2) for i in range(n)]


def distribution_figure(requests: Sequence[RequestResult]) -> str:
    """TTFT (s) and TPOT (ms) of every request, each sorted against the share of requests within it."""
    ttft_x, ttft_y = _share_curve([r.ttft for r in requests])
    tpot_x, tpot_y = _share_curve([1000 * r.tpot for r in requests if r.tpot is not None])
    figure = {
        "data": [
            line("TTFT (s)", ttft_x, ttft_y, BLUE, mode="lines+markers", marker={"size": 4}),
            line(
                "TPOT (ms)",
                tpot_x,
                tpot_y,
                ORANGE,
                xaxis="x2",
                yaxis="y2",
                mode="lines+markers",
                marker={"size": 4},
            ),
        ],
        "layout": layout(
            "TTFT (s)",
            "requests within (%)",
            height=520,
            margin={"l": 56, "r": 24, "t": 24, "b": 52},
            xaxis={"title": {"text": "time to first token, TTFT (s)"}, "anchor": "y"},
            yaxis={"title": {"text": "requests within (%)"}, "domain": [0.6, 1.0], "range": [0, 100]},
            xaxis2={"title": {"text": "time per output token, TPOT (ms)"}, "anchor": "y2"},
            yaxis2={"title": {"text": "requests within (%)"}, "domain": [0.0, 0.38], "range": [0, 100]},
        ),
    }
    return _dump(figure)


def sweep_figure(engine: Sequence[dict[str, float]] | None, practice: Sequence[dict[str, float]]) -> str:
    """Output throughput against concurrency: this engine beside lesson 03's practice server."""
    data = []
    if engine:
        data.append(
            line(
                "this engine",
                [level["conc"] for level in engine],
                [round(level["agg_tok_s"], 1) for level in engine],
                BLUE,
                mode="lines+markers",
            )
        )
    data.append(
        line(
            "lesson 03's practice server",
            [level["conc"] for level in practice],
            [level["agg_tok_s"] for level in practice],
            GREY,
            mode="lines+markers",
            line={"color": GREY, "width": 2, "dash": "dash"},
        )
    )
    levels = [level["conc"] for level in practice]
    figure = {
        "data": data,
        "layout": layout(
            "concurrency C (requests in flight)",
            "output throughput (tok/s)",
            xaxis={
                "title": {"text": "concurrency C (requests in flight)"},
                "type": "log",
                "tickvals": levels,
                "ticktext": [str(c) for c in levels],
            },
            yaxis={"title": {"text": "output throughput (tok/s)"}, "type": "log"},
        ),
    }
    return _dump(figure)


def planner_figure(plan: Plan) -> str:
    """InferenceX's chart: output tokens per second per GPU against tokens per second per user,
    one point a concurrency, felab's curve beside the runs measured at the same settings (fitted
    on and predicted apart), the best concurrency that meets the targets ringed."""
    shown = [level for level in plan.levels if level.tok_s_per_user is not None]
    data = [
        line(
            "felab",
            [round(level.tok_s_per_user or 0, 2) for level in shown],
            [round(level.output_tok_s_per_gpu, 2) for level in shown],
            BLUE,
            mode="lines+markers",
            marker={"size": 6},
            text=[f"C = {level.concurrency}" for level in shown],
        )
    ]
    for group, symbol, colour in (("fitted", "x-thin-open", RED), ("predicted", "diamond-open", PURPLE)):
        chosen = [point for point in plan.measured if (point.group == FIT) == (group == "fitted")]
        if chosen:
            figure_points = points(
                f"measured, {group}",
                [round(point.tok_s_per_user, 2) for point in chosen],
                [point.run.output_tok_s_per_gpu for point in chosen],
                colour,
                symbol,
            )
            figure_points["text"] = [f"C = {point.run.concurrency}" for point in chosen]
            data.append(figure_points)
    if plan.best is not None and plan.best.tok_s_per_user is not None:
        data.append(
            points(
                f"best meeting the targets (C = {plan.best.concurrency})",
                [round(plan.best.tok_s_per_user, 2)],
                [round(plan.best.output_tok_s_per_gpu, 2)],
                GREEN,
                "circle-open",
            )
        )
    annotations = [
        {
            "x": round(level.tok_s_per_user or 0, 2),
            "y": round(level.output_tok_s_per_gpu, 2),
            "xref": "x",
            "yref": "y",
            "text": str(level.concurrency),
            "showarrow": False,
            "xanchor": "left",
            "yanchor": "bottom",
            "xshift": 4,
            "yshift": 2,
            "font": {"size": 10, "color": BLUE},
        }
        for level in shown
    ]
    figure = {
        "data": data,
        "layout": layout(
            "tokens per second per user (1 ÷ mean TPOT)",
            "output tokens per second per GPU",
            xaxis={"title": {"text": "tokens per second per user (1 ÷ mean TPOT)"}, "rangemode": "tozero"},
            annotations=annotations,
        ),
    }
    return _dump(figure)
