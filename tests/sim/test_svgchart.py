"""The server-drawn charts (felab_sim/charts/svgchart.py): pure Python, no database."""

import base64
import json
import struct
import xml.etree.ElementTree as ET

import pytest

from felab_sim.charts import plots, svgchart
from felab_sim.engine.sweep.simulator import run_sweep
from felab_sim.engine.sweep.sweep_params import SweepParams

SVG = "{http://www.w3.org/2000/svg}"


def parsed(html: str) -> ET.Element:
    return ET.fromstring(html)  # well-formed, or this raises


def wide_svg(html: str) -> ET.Element:
    root = parsed(html)
    return next(div for div in root if div.get("class") == "chart-wide")[0]


def test_the_sweep_chart_draws_every_series_the_knee_and_the_slo():
    figure = json.loads(plots.sweep_figure(run_sweep(SweepParams())))
    html = svgchart.render(figure, "sim-figure")
    svg = wide_svg(html)
    lines = svg.findall(f".//{SVG}polyline")
    assert len(lines) == 4  # total, per user, TTFT p50, TTFT p95 (the model)
    texts = [text.text for text in svg.iter(f"{SVG}text")]
    assert "knee: capacity 8" in texts
    assert "SLO 500 ms" in texts
    # The TTFT panel is a log axis: powers of ten, with the site's separators.
    assert {"100", "1,000", "10,000"} <= set(texts)
    # The concurrency axis shows exactly the levels swept.
    assert [t for t in texts if t in {"1", "2", "4", "8", "16", "32"}].count("32") == 1
    legend = parsed(html).find("ul")
    assert "total (model)" in "".join(legend.itertext())


def test_points_land_where_their_values_say():
    figure = {
        "data": [{"type": "scatter", "mode": "markers", "x": [0, 10], "y": [0, 100], "name": "p"}],
        "layout": {"xaxis": {"range": [0, 10]}, "yaxis": {"range": [0, 100]}, "height": 300,
                   "margin": {"l": 50, "r": 50, "t": 50, "b": 50}},
    }  # fmt: skip
    chart = svgchart.Chart(figure, 600)
    svg = ET.fromstring(chart.svg("t"))
    circles = svg.findall(f".//{SVG}circle")
    assert [(float(c.get("cx")), float(c.get("cy"))) for c in circles] == [(50.0, 250.0), (550.0, 50.0)]
    assert circles[1].find(f"{SVG}title").text == "p: 10, 100"


def test_plotlys_typed_arrays_are_read():
    xs = base64.b64encode(struct.pack("<3d", 1.0, 2.0, 3.0)).decode()
    ys = base64.b64encode(struct.pack("<3i", 10, 20, 30)).decode()
    figure = {
        "data": [{"type": "scatter", "x": {"dtype": "f8", "bdata": xs}, "y": {"dtype": "i4", "bdata": ys}}]
    }
    svg = ET.fromstring(svgchart.Chart(figure, 400).svg("t"))
    assert len(svg.find(f".//{SVG}polyline").get("points").split()) == 3


def test_stacked_horizontal_bars_stack():
    figure = {
        "data": [
            {"type": "bar", "orientation": "h", "y": ["a", "b"], "x": [1, 2], "name": "one"},
            {"type": "bar", "orientation": "h", "y": ["a", "b"], "x": [3, 0], "name": "two"},
        ],
        "layout": {"barmode": "stack", "xaxis": {"range": [0, 4]}, "height": 200,
                   "margin": {"l": 0, "r": 0, "t": 0, "b": 0}},
    }  # fmt: skip
    svg = ET.fromstring(svgchart.Chart(figure, 400).svg("t"))
    bars = svg.findall(f".//{SVG}rect")
    bars = [bar for bar in bars if bar.find(f"{SVG}title") is not None]
    assert len(bars) == 3  # a zero is not drawn
    a_one, b_one, a_two = bars
    unit = float(a_one.get("width"))  # one student
    close = pytest.approx  # pixels are written to a tenth
    assert float(b_one.get("width")) == close(2 * unit, abs=0.2)
    # "two" starts where "one" ended on the same row, three units long.
    assert float(a_two.get("x")) == close(float(a_one.get("x")) + unit, abs=0.2)
    assert float(a_two.get("width")) == close(3 * unit, abs=0.2)


def test_lines_outside_a_set_range_are_clipped_and_ids_differ_per_chart():
    figure = {
        "data": [{"type": "scatter", "x": [1, 2], "y": [0, 1000]}],
        "layout": {"yaxis": {"range": [0, 10]}},
    }
    first, second = svgchart.render(figure, "one"), svgchart.render(figure, "two")
    assert 'clip-path="url(#one-720-clip0)"' in first and 'id="one-720-clip0"' in first
    assert "one-" not in second


def test_text_from_the_figure_is_escaped():
    figure = {
        "data": [{"type": "scatter", "x": [1], "y": [1], "name": "<script>alert(1)</script>"}],
        "layout": {"annotations": [{"text": "<b>bold</b> & <i>x</i>", "x": 0.5, "y": 0.5,
                                    "xref": "paper", "yref": "paper"}]},
    }  # fmt: skip
    html = svgchart.render(figure)
    assert "<script>" not in html
    parsed(html)
    assert "bold &amp; x" in html  # plotly's own tags dropped, the words kept


def test_an_empty_or_unknown_figure_still_draws():
    for figure in (
        {},
        {"data": [{"type": "heatmap", "z": [[1]]}]},
        {"data": [{"type": "scatter", "x": [], "y": []}]},
    ):
        parsed(svgchart.render(figure))


def test_bars_named_by_text_get_a_category_axis_and_their_own_colours():
    figure = {
        "data": [
            {
                "type": "bar",
                "x": ["list price", "batch"],
                "y": [0.029, 0.0145],
                "marker": {"color": ["#111111", "#222222"]},
            }
        ],
        "layout": {"height": 300, "margin": {"l": 50, "r": 50, "t": 20, "b": 40}},
    }
    svg = ET.fromstring(svgchart.Chart(figure, 600).svg("t"))
    bars = [rect for rect in svg.iter(f"{SVG}rect") if rect.find(f"{SVG}title") is not None]
    assert [bar.get("fill") for bar in bars] == ["#111111", "#222222"]
    # Two bands side by side, the second half the height of the first.
    assert float(bars[0].get("x")) < float(bars[1].get("x"))
    assert abs(float(bars[1].get("height")) * 2 - float(bars[0].get("height"))) < 1
    labels = [text.text for text in svg.iter(f"{SVG}text")]
    assert "list price" in labels and "batch" in labels


def test_large_tick_labels_are_short_and_a_multicoloured_bar_trace_gets_a_swatch_per_bar():
    figure = {
        "data": [
            {"type": "scatter", "mode": "lines", "x": [0, 2e9], "y": [0, 1], "name": "line"},
            {"type": "bar", "x": ["a", "b"], "y": [1, 2], "marker": {"color": ["#111111", "#222222"]},
             "name": "both", "xaxis": "x2", "yaxis": "y2"},
        ],
        "layout": {"xaxis2": {"domain": [0, 1]}, "yaxis2": {"domain": [0, 1]}},
    }  # fmt: skip
    chart = svgchart.Chart(figure, svgchart.NARROW)
    assert [label for _, label in chart.axis("x").ticks()][-2:] == ["1.5 B", "2 B"]
    assert chart.legend()[1:] == [("a", "#111111", "square", False), ("b", "#222222", "square", False)]
    assert svgchart.Chart({**figure, "layout": {"showlegend": False}}, svgchart.NARROW).legend() == []


def test_the_sweep_figure_sends_only_the_template_that_its_scatter_traces_read():
    import plotly.io as pio
    from plotly.utils import PlotlyJSONEncoder

    figure = json.loads(plots.sweep_figure(run_sweep(SweepParams())))
    template = figure["layout"]["template"]
    assert {trace["type"] for trace in figure["data"]} == {"scatter"}
    assert set(template["data"]) == {"scatter"}
    whole = json.loads(json.dumps(pio.templates["plotly"].to_plotly_json(), cls=PlotlyJSONEncoder))
    assert template["data"]["scatter"] == whole["data"]["scatter"]
    # What is kept is plotly's own; what is dropped styles axes these charts don't have.
    assert set(template["layout"]) == set(plots.TEMPLATE_LAYOUT_KEPT)
    assert all(template["layout"][key] == whole["layout"][key] for key in template["layout"])
    assert not {"polar", "ternary", "scene", "geo"} & set(template["layout"])


def test_the_grid_is_one_path_a_stroke_per_level_in_each_panel_and_per_left_axis_tick():
    figure = json.loads(plots.sweep_figure(run_sweep(SweepParams())))
    svg = wide_svg(svgchart.render(figure, "sim-figure"))
    (grid,) = [path for path in svg.iter(f"{SVG}path") if path.get("class") == "grid"]
    strokes = grid.get("d").split("M")[1:]
    levels = len(SweepParams().levels)
    # Up each panel at every level swept; across at total tok/s 0-300 and at 100, 1,000 and
    # 10,000 ms. The per-user axis overlays the first panel and draws no grid of its own.
    assert sum("V" in stroke for stroke in strokes) == 2 * levels
    assert sum("H" in stroke for stroke in strokes) == 4 + 3
    assert svg[0] is grid  # drawn first, under the curves
    assert not [line for line in svg.iter(f"{SVG}line") if line.get("class") == "grid"]
