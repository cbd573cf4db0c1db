"""A calculator's chart as the page gets it: the description its module builds, as plotly JSON.

The page draws that JSON twice: as SVG on the server (felab_sim/charts/svgchart.py, through the
``plots`` template tags) and, when a student reaches for it, with plotly in the browser
(static/js/plots.js). Pure Python, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..engine.calculators import CALCULATORS
from ..engine.core.calculator import Result
from ..engine.core.chart import Series


def chart_json(name: str, result: Result, measured: Sequence[Series] = ()) -> str:
    """The calculator's chart at the result's settings, with any measured runs drawn over it."""
    return json.dumps(CALCULATORS[name].chart(result.params, measured), separators=(",", ":"))
