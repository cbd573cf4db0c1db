"""The sweep chart's cut-down plotly template draws the same pixels as plotly's whole one."""

import json
from pathlib import Path

import plotly.io as pio
from playwright.sync_api import Browser
from plotly.utils import PlotlyJSONEncoder

from felab_sim.charts import plots
from felab_sim.engine.sweep.simulator import run_sweep
from felab_sim.engine.sweep.sweep_params import SweepParams
from tests.browser.conftest import new_page

PLOTLY = Path(__file__).resolve().parents[2] / "static" / "vendor" / "plotly-basic-4.1.1.min.js"


def _drawn(browser: Browser, figure: dict) -> bytes:
    page = new_page(browser, timeout_ms=30_000, viewport={"width": 800, "height": 700})
    try:
        page.set_content('<div id="chart" style="width: 760px"></div>')
        page.add_script_tag(path=str(PLOTLY))
        page.evaluate(
            "figure => Plotly.newPlot('chart', figure.data, figure.layout, {staticPlot: true}).then(() => true)",
            figure,
        )
        return page.locator("#chart").screenshot()
    finally:
        page.close()


def _plain(value):
    return json.loads(json.dumps(value, cls=PlotlyJSONEncoder))


def test_the_cut_template_draws_the_same_chart_as_plotlys_whole_one(browser: Browser):
    sent = json.loads(plots.sweep_figure(run_sweep(SweepParams())))
    whole = {
        **sent,
        "layout": {**sent["layout"], "template": _plain(pio.templates["plotly"].to_plotly_json())},
    }
    assert len(json.dumps(whole["layout"]["template"])) > 2 * len(json.dumps(sent["layout"]["template"]))

    assert _drawn(browser, sent) == _drawn(browser, whole)
