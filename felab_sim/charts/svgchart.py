"""A plotly figure drawn as static SVG on the server, so a chart shows at once, without JavaScript.

plotly.js costs a phone seconds of CPU, so pages send each chart twice: as this SVG,
drawn in the first paint, and as the plotly JSON that static/js/plots.js turns into the
interactive chart when the student reaches for it (hover, tap, focus). This module reads the
subset of plotly's figure JSON that felab's figures use: scatter traces (lines, markers, both)
and horizontal or vertical bars (stacked or not), linear, log and category axes, subplots with
domains, a secondary y axis overlaying another, line shapes and text annotations placed in data,
domain or paper coordinates. Anything else in a figure is ignored, never an error: the
interactive chart still has it.

Pure Python, no Django: see docs/architecture.md, "The engine boundary".
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html import escape
from itertools import pairwise
from typing import Any

from ..engine.core.numbers import format_number

# plotly's default colour order, for traces that name no colour.
COLORWAY = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692", "#b6e880")
DASHES = {"dash": "6 4", "dot": "2 3", "dashdot": "6 3 2 3", "longdash": "10 4", "solid": None}
# Sizes for a desktop column and a phone; the page shows one or the other by CSS.
WIDE, NARROW = 720, 360
_TYPED = {"f8": "d", "f4": "f", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q"}


def _values(raw: Any) -> list[Any]:
    """A trace's x or y: a plain list, or plotly's base64 typed array ({"dtype", "bdata"})."""
    if raw is None:
        return []
    if isinstance(raw, dict) and "bdata" in raw:
        code = _TYPED.get(str(raw.get("dtype")))
        if code is None:
            return []
        data = base64.b64decode(raw["bdata"])
        return list(struct.unpack(f"<{len(data) // struct.calcsize(code)}{code}", data))
    return list(raw)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _axis_key(ref: str) -> str:
    """'x2' -> 'xaxis2'; 'y' -> 'yaxis'."""
    return f"{ref[0]}axis{ref[1:]}"


@dataclass
class Axis:
    key: str
    spec: dict[str, Any]
    log: bool = False
    categories: list[str] = field(default_factory=list)
    low: float = math.inf
    high: float = -math.inf
    pixel_low: float = 0.0  # pixel position of `low` (left or bottom)
    pixel_high: float = 0.0

    categorical: bool = False  # bars named by text, not numbers

    @property
    def is_category(self) -> bool:
        return self.spec.get("type") == "category" or self.categorical or bool(self.categories)

    def value(self, raw: Any) -> float | None:
        """A data value in the axis's own units (log10 on a log axis, index on a category axis)."""
        if self.is_category:
            text = str(raw)
            if text not in self.categories:
                self.categories.append(text)
            return float(self.categories.index(text))
        number = _number(raw)
        if number is None:
            return None
        if self.log:
            return math.log10(number) if number > 0 else None
        return number

    def include(self, value: float | None) -> None:
        if value is not None:
            self.low, self.high = min(self.low, value), max(self.high, value)

    def settle(self) -> None:
        """The range plotly's autorange would pick, near enough: data plus a little padding."""
        explicit = self.spec.get("range")
        if explicit and len(explicit) == 2 and None not in explicit:
            self.low, self.high = float(explicit[0]), float(explicit[1])
            return
        if self.is_category:
            self.low, self.high = -0.5, max(len(self.categories), 1) - 0.5
            return
        if self.low > self.high:
            self.low, self.high = (0.0, 1.0)
        if self.spec.get("rangemode") == "tozero" and not self.log:
            self.low, self.high = min(self.low, 0.0), max(self.high, 0.0)
        span = self.high - self.low or (abs(self.high) or 1.0)
        pad = 0.06 * span
        if not (self.spec.get("rangemode") == "tozero" and self.low == 0 and not self.log):
            self.low -= pad
        self.high += pad

    def reversed(self) -> bool:
        return self.spec.get("autorange") == "reversed"

    def to_pixel(self, value: float) -> float:
        low, high = (self.high, self.low) if self.reversed() else (self.low, self.high)
        share = 0.0 if high == low else (value - low) / (high - low)
        return self.pixel_low + share * (self.pixel_high - self.pixel_low)

    def ticks(self) -> list[tuple[float, str]]:
        """(position in axis units, label) for each tick."""
        if self.is_category:
            return [(float(index), name) for index, name in enumerate(self.categories)]
        values = self.spec.get("tickvals")
        if values:
            labels = self.spec.get("ticktext") or [_short_label(v) for v in values]
            out = []
            for raw, label in zip(values, labels, strict=False):
                position = self.value(raw)
                if position is not None and self.low - 1e-9 <= position <= self.high + 1e-9:
                    out.append((position, str(label)))
            return out
        if self.log:
            return _log_ticks(self.low, self.high)
        return _linear_ticks(self.low, self.high, int(self.spec.get("nticks") or 6), self.spec.get("dtick"))


def _tick_label(value: float) -> str:
    return format_number(value) if isinstance(value, int | float) else str(value)


# An axis label of ten digits and three commas does not fit beside its neighbours on a phone.
_SHORT_SCALES = ((1e12, "T"), (1e9, "B"), (1e6, "M"))


def _short_label(value: float) -> str:
    """A tick label: millions and up in short form ("1 B", "2.5 M"), as plotly's axes print them."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        for scale, suffix in _SHORT_SCALES:
            if abs(value) >= scale:
                return f"{format_number(float(value) / scale)} {suffix}"
    return _tick_label(value)


def _linear_ticks(low: float, high: float, count: int, dtick: Any = None) -> list[tuple[float, str]]:
    span = high - low
    if span <= 0:
        return [(low, _tick_label(low))]
    step = _number(dtick)
    if not step or step <= 0 or span / step > 50:
        raw = span / max(count - 1, 1)
        magnitude = 10 ** math.floor(math.log10(raw))
        step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + 1e-9 * step:
        clean = round(value, 10)
        ticks.append((clean, _short_label(int(clean) if clean == int(clean) else clean)))
        value += step
    return ticks


def _log_ticks(low: float, high: float) -> list[tuple[float, str]]:
    """Powers of ten; with less than two decades, 2 and 5 times them too."""
    multiples = (1,) if high - low >= 2 else (1, 2, 5)
    ticks = []
    for power in range(math.floor(low), math.ceil(high) + 1):
        for multiple in multiples:
            position = power + math.log10(multiple)
            if low - 1e-9 <= position <= high + 1e-9:
                ticks.append(
                    (position, _short_label(multiple * 10**power if power >= 0 else multiple * 10.0**power))
                )
    return ticks


class Chart:
    """One figure laid out at one width."""

    def __init__(self, figure: dict[str, Any], width: int) -> None:
        self.layout = figure.get("layout") or {}
        self.traces = [t for t in figure.get("data") or [] if t.get("type", "scatter") in ("scatter", "bar")]
        self.width = width
        self.narrow = width < 520
        self.font = float((self.layout.get("font") or {}).get("size") or 12)
        margin = self.layout.get("margin") or {}
        self.height = float(self.layout.get("height") or 420)
        self.left = float(margin.get("l", 60))
        self.right = float(margin.get("r", 30))
        self.top = float(margin.get("t", 40))
        self.bottom = float(margin.get("b", 48))
        if self.narrow and any(key.startswith("yaxis3") for key in self.layout):
            # A phone: the stacked panels get taller, as static/js/plots.js does for plotly.
            self.height = max(self.height, 600)
        if self.narrow:
            self.left, self.right = min(self.left, 48), min(self.right, 44)
        self.axes: dict[str, Axis] = {}
        self._place_data()

    # -- layout -------------------------------------------------------------------------

    def axis(self, ref: str) -> Axis:
        key = _axis_key(ref)
        if key not in self.axes:
            spec = self.layout.get(key) or {}
            self.axes[key] = Axis(key, spec, log=spec.get("type") == "log")
        return self.axes[key]

    def _domain(self, axis: Axis) -> tuple[float, float]:
        spec = axis.spec
        if "overlaying" in spec:
            return self._domain(self.axis(spec["overlaying"]))
        low, high = spec.get("domain") or (0.0, 1.0)
        return float(low), float(high)

    def _place_data(self) -> None:
        for trace in self.traces:
            x_axis, y_axis = self.axis(trace.get("xaxis", "x")), self.axis(trace.get("yaxis", "y"))
            xs, ys = _values(trace.get("x")), _values(trace.get("y"))
            if trace.get("type") == "bar":
                self._place_bars(trace, x_axis, y_axis, xs, ys)
                continue
            for x, y in zip(xs, ys, strict=False):
                x_axis.include(x_axis.value(x))
                y_axis.include(y_axis.value(y))
        for shape in self.layout.get("shapes") or []:
            for which in ("x", "y"):
                ref = str(shape.get(f"{which}ref", which))
                if ref == "paper" or ref.endswith("domain"):
                    continue
                axis = self.axis(ref)
                for end in ("0", "1"):
                    axis.include(axis.value(shape.get(which + end)))
        for axis in self.axes.values():
            axis.settle()
        # Matched axes share one range (make_subplots' shared x).
        for axis in self.axes.values():
            if (other := axis.spec.get("matches")) and _axis_key(other) in self.axes:
                twin = self.axes[_axis_key(other)]
                axis.low = twin.low = min(axis.low, twin.low)
                axis.high = twin.high = max(axis.high, twin.high)
        self._make_room_for_y_labels()
        self._assign_pixels()

    def _make_room_for_y_labels(self) -> None:
        """Widen a side margin until a y axis's tick labels and title fit (plotly's automargin)."""
        for axis in self.axes.values():
            if not axis.key.startswith("y"):
                continue
            titled = bool(self._title(axis))
            needed = 5 + self._label_room(axis) + (self.font + 6 if titled else 0) + 4
            if axis.spec.get("side") == "right":
                self.right = max(self.right, needed)
            else:
                self.left = max(self.left, needed)

    def _title(self, axis: Axis) -> str:
        title = axis.spec.get("title")
        text = title.get("text") if isinstance(title, dict) else title
        return str(text) if text else ""

    def _assign_pixels(self) -> None:
        plot_w = self.width - self.left - self.right
        plot_h = self.height - self.top - self.bottom
        for axis in self.axes.values():
            low, high = self._domain(axis)
            if axis.key.startswith("x"):
                axis.pixel_low, axis.pixel_high = self.left + low * plot_w, self.left + high * plot_w
            else:
                axis.pixel_low = self.top + (1 - low) * plot_h
                axis.pixel_high = self.top + (1 - high) * plot_h

    def _place_bars(self, trace: dict, x_axis: Axis, y_axis: Axis, xs: list, ys: list) -> None:
        horizontal = trace.get("orientation") == "h"
        value_axis, category_axis = (x_axis, y_axis) if horizontal else (y_axis, x_axis)
        values, categories = (xs, ys) if horizontal else (ys, xs)
        if any(_number(category) is None for category in categories):
            category_axis.categorical = True
        stacked = self.layout.get("barmode") == "stack"
        totals = getattr(self, "_stack", {})
        self._stack = totals
        value_axis.include(0.0)
        for category, value in zip(categories, values, strict=False):
            category_axis.value(category)
            number = _number(value) or 0.0
            base = totals.get((value_axis.key, str(category)), 0.0) if stacked else 0.0
            value_axis.include(base + number)
            if stacked:
                totals[(value_axis.key, str(category))] = base + number

    def paper_x(self, share: float) -> float:
        return self.left + share * (self.width - self.left - self.right)

    def paper_y(self, share: float) -> float:
        return self.top + (1 - share) * (self.height - self.top - self.bottom)

    def position(self, which: str, ref: str, value: Any, *, data_units: bool = False) -> float | None:
        """Pixel position of a shape's or annotation's coordinate.

        plotly places shapes in data units, but annotations on a log axis in log10 units.
        """
        number = _number(value)
        if number is None:
            return None
        if ref == "paper":
            return self.paper_x(number) if which == "x" else self.paper_y(number)
        if ref.endswith(" domain"):
            axis = self.axis(ref.split()[0])
            low, high = self._domain(axis)
            share = low + number * (high - low)
            return self.paper_x(share) if which == "x" else self.paper_y(share)
        axis = self.axis(ref)
        if data_units:
            converted = axis.value(number)
            return None if converted is None else axis.to_pixel(converted)
        return axis.to_pixel(number)

    # -- drawing ------------------------------------------------------------------------

    def svg(self, uid: str) -> str:
        """The chart; `uid` keeps its clip paths' ids apart from other charts' on the page."""
        # Every grid line is one stroke of a single path, drawn first, under everything: as a
        # <line> element each, /sim/'s two charts sent 1.7 kB more (19,187 bytes, now 17,493).
        grid: list[str] = []
        parts: list[str] = []
        for axis in self.axes.values():
            parts.extend(self._grid_and_ticks(axis, grid))
        if grid:
            parts.insert(0, f'<path class="grid" d="{"".join(grid)}"/>')
        parts.extend(self._shapes())
        stacks: dict[tuple[str, str], float] = {}
        clips: dict[tuple[str, str], str] = {}
        for index, trace in enumerate(self.traces):
            # A trace is clipped to its plot, as plotly does when a range is set by hand.
            x_ref, y_ref = trace.get("xaxis", "x"), trace.get("yaxis", "y")
            if (x_ref, y_ref) not in clips:
                clip_id = f"{uid}-{self.width}-clip{len(clips)}"
                x_axis, y_axis = self.axis(x_ref), self.axis(y_ref)
                left, right = sorted((x_axis.pixel_low, x_axis.pixel_high))
                top, bottom = sorted((y_axis.pixel_low, y_axis.pixel_high))
                parts.append(
                    f'<clipPath id="{escape(clip_id)}"><rect x="{left - 6:.1f}" y="{top - 6:.1f}" '
                    f'width="{right - left + 12:.1f}" height="{bottom - top + 12:.1f}"/></clipPath>'
                )
                clips[(x_ref, y_ref)] = clip_id
            parts.append(f'<g clip-path="url(#{escape(clips[(x_ref, y_ref)])})">')
            parts.extend(self._trace(trace, index, stacks))
            parts.append("</g>")
        parts.extend(self._annotations())
        return (
            # The page labels the chart (and its table has the numbers); the drawing itself is
            # hidden from screen readers, its points' titles are tooltips for the mouse.
            f'<svg class="chart-svg" viewBox="0 0 {self.width} {self.height:g}" aria-hidden="true" '
            f'xmlns="http://www.w3.org/2000/svg" font-size="{self.font:g}">{"".join(parts)}</svg>'
        )

    def _grid_and_ticks(self, axis: Axis, grid: list[str]) -> Iterable[str]:
        """The axis's tick labels and title; its grid lines go onto ``grid`` as path strokes."""
        spec = axis.spec
        is_x = axis.key.startswith("x")
        cross = self._crossing(axis)
        right = spec.get("side") == "right"
        anchor_low, anchor_high = cross
        out = []
        show_labels = spec.get("showticklabels", True) is not False
        ticks = axis.ticks()
        shown = self._x_labels_that_fit(axis, ticks) if is_x else set(range(len(ticks)))
        for number, (position, label) in enumerate(ticks):
            pixel = axis.to_pixel(position)
            if is_x:
                if spec.get("showgrid", True) is not False and not axis.is_category:
                    grid.append(f"M{pixel:.1f} {anchor_high:.1f}V{anchor_low:.1f}")
                if show_labels and number in shown:
                    out.append(
                        self._x_label(pixel, anchor_low + self.font + 4, label, self._tick_gap(axis, ticks))
                    )
            else:
                left, right_edge = anchor_low, anchor_high
                if (
                    spec.get("showgrid", True) is not False
                    and "overlaying" not in spec
                    and not axis.is_category
                ):
                    grid.append(f"M{left:.1f} {pixel:.1f}H{right_edge:.1f}")
                if show_labels:
                    x = right_edge + 5 if right else left - 5
                    anchor = "start" if right else "end"
                    out.append(f'<text class="tick" x="{x:.1f}" y="{pixel + self.font * 0.35:.1f}" '
                               f'text-anchor="{anchor}">{escape(label)}</text>')  # fmt: skip
        title = self._title(axis)
        if title:
            middle = (axis.pixel_low + axis.pixel_high) / 2
            if is_x:
                out.append(f'<text class="axis-title" x="{middle:.1f}" y="{anchor_low + 2 * self.font + 12:.1f}" '
                           f'text-anchor="middle">{escape(str(title))}</text>')  # fmt: skip
            else:
                # Rotated text's glyphs sit on the side of x its top faces: to the left of it.
                room = self._label_room(axis)
                x = anchor_high + 5 + room + self.font + 2 if right else anchor_low - 5 - room - 4
                out.append(f'<text class="axis-title" x="{x:.1f}" y="{middle:.1f}" text-anchor="middle" '
                           f'transform="rotate(-90 {x:.1f} {middle:.1f})">{escape(str(title))}</text>')  # fmt: skip
        return out

    def _text_width(self, text: str) -> float:
        return len(text) * self.font * 0.6

    def _tick_gap(self, axis: Axis, ticks: list[tuple[float, str]]) -> float:
        """Pixels between neighbouring ticks (the room each label has)."""
        pixels = [axis.to_pixel(position) for position, _ in ticks]
        gaps = [abs(b - a) for a, b in pairwise(pixels)]
        return min(gaps, default=float(self.width))

    def _x_labels_that_fit(self, axis: Axis, ticks: list[tuple[float, str]]) -> set[int]:
        """Which x tick labels to print: every one that clears the last one printed.

        A category's name is never dropped (it names a bar): _x_label wraps it instead.
        """
        if axis.is_category:
            return set(range(len(ticks)))
        shown: set[int] = set()
        last_right = -math.inf
        for number, (position, label) in enumerate(ticks):
            pixel, half = axis.to_pixel(position), self._text_width(label) / 2
            if pixel - half >= last_right + 4:
                shown.add(number)
                last_right = pixel + half
        return shown

    def _x_label(self, x: float, y: float, label: str, room: float) -> str:
        """One x tick label; a name wider than its room goes onto more lines, at its spaces."""
        lines: list[str] = []
        for word in label.split(" "):
            if lines and self._text_width(f"{lines[-1]} {word}") <= room - 4:
                lines[-1] = f"{lines[-1]} {word}"
            else:
                lines.append(word)
        if len(lines) == 1:
            return f'<text class="tick" x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{escape(label)}</text>'
        spans = "".join(
            f'<tspan x="{x:.1f}" dy="{0 if index == 0 else self.font * 1.15:.1f}">{escape(line)}</tspan>'
            for index, line in enumerate(lines)
        )
        return f'<text class="tick" x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{spans}</text>'

    def _label_room(self, axis: Axis) -> float:
        """About how wide the axis's widest tick label is."""
        if axis.spec.get("showticklabels", True) is False:
            return 0.0
        longest = max((len(label) for _, label in axis.ticks()), default=1)
        return longest * self.font * 0.6

    def _crossing(self, axis: Axis) -> tuple[float, float]:
        """For an x axis, its plot's (bottom, top) pixels; for a y axis, its plot's (left, right)."""
        anchor = axis.spec.get("anchor")
        if "overlaying" in axis.spec:
            anchor = self.axis(axis.spec["overlaying"]).spec.get("anchor", anchor)
        other = self.axis(anchor) if anchor and anchor != "free" else None
        if other is None:
            return (
                (self.paper_y(0), self.paper_y(1))
                if axis.key.startswith("x")
                else (self.paper_x(0), self.paper_x(1))
            )
        low, high = self._domain(other)
        if axis.key.startswith("x"):
            return self.paper_y(low), self.paper_y(high)
        return self.paper_x(low), self.paper_x(high)

    def _shapes(self) -> Iterable[str]:
        for shape in self.layout.get("shapes") or []:
            if shape.get("type", "line") != "line":
                continue
            xref, yref = str(shape.get("xref", "x")), str(shape.get("yref", "y"))
            x0, x1 = (self.position("x", xref, shape.get(end), data_units=True) for end in ("x0", "x1"))
            y0, y1 = (self.position("y", yref, shape.get(end), data_units=True) for end in ("y0", "y1"))
            if None in (x0, x1, y0, y1):
                continue
            yield f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{y0:.1f}" y2="{y1:.1f}"{_stroke(shape.get("line") or {})}/>'

    def _trace(self, trace: dict, index: int, stacks: dict[tuple[str, str], float]) -> Iterable[str]:
        x_axis, y_axis = self.axis(trace.get("xaxis", "x")), self.axis(trace.get("yaxis", "y"))
        xs, ys = _values(trace.get("x")), _values(trace.get("y"))
        name = str(trace.get("name") or "")
        if trace.get("type") == "bar":
            yield from self._bars(trace, index, x_axis, y_axis, xs, ys, stacks)
            return
        mode = str(trace.get("mode") or "lines+markers")
        line = trace.get("line") or {}
        marker = trace.get("marker") or {}
        colour = line.get("color") or marker.get("color") or COLORWAY[index % len(COLORWAY)]
        points = []
        for x, y in zip(xs, ys, strict=False):
            px, py = x_axis.value(x), y_axis.value(y)
            if px is not None and py is not None:
                points.append((x_axis.to_pixel(px), y_axis.to_pixel(py), x, y))
        if "lines" in mode and len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in points)
            yield f'<polyline fill="none" points="{path}"{_stroke({**line, "color": colour})}/>'
        if "markers" in mode or ("lines" in mode and len(points) == 1):
            size = float(marker.get("size") or (7 if "lines" in mode else 8))
            symbol = str(marker.get("symbol") or "circle")
            marker_colour = marker.get("color") if isinstance(marker.get("color"), str) else colour
            width = float((marker.get("line") or {}).get("width") or 1.5)
            for px, py, x, y in points:
                tip = (
                    f"{name}: {_tick_label(x)}, {_tick_label(y)}"
                    if name
                    else f"{_tick_label(x)}, {_tick_label(y)}"
                )
                yield _marker(symbol, px, py, size, marker_colour, width, tip)

    def _bars(self, trace, index, x_axis, y_axis, xs, ys, stacks) -> Iterable[str]:
        horizontal = trace.get("orientation") == "h"
        value_axis, category_axis = (x_axis, y_axis) if horizontal else (y_axis, x_axis)
        values, categories = (xs, ys) if horizontal else (ys, xs)
        stacked = self.layout.get("barmode") == "stack"
        colours = (trace.get("marker") or {}).get("color") or COLORWAY[index % len(COLORWAY)]
        band = abs(category_axis.to_pixel(1) - category_axis.to_pixel(0)) * 0.7
        name = str(trace.get("name") or "")
        for position, (category, raw) in enumerate(zip(categories, values, strict=False)):
            # One colour for the trace, or one per bar.
            colour = colours[position % len(colours)] if isinstance(colours, list) and colours else colours
            number = _number(raw) or 0.0
            if not number:
                continue
            key = (value_axis.key, str(category))
            base = stacks.get(key, 0.0) if stacked else 0.0
            stacks[key] = base + number
            centre = category_axis.to_pixel(category_axis.value(category) or 0.0)
            start, end = value_axis.to_pixel(base), value_axis.to_pixel(base + number)
            low, size = min(start, end), abs(end - start)
            if horizontal:
                box = f'x="{low:.1f}" y="{centre - band / 2:.1f}" width="{size:.1f}" height="{band:.1f}"'
            else:
                box = f'x="{centre - band / 2:.1f}" y="{low:.1f}" width="{band:.1f}" height="{size:.1f}"'
            tip = f"{category}: {_tick_label(number)} {name}".strip()
            yield f'<rect {box} fill="{escape(str(colour))}"><title>{escape(tip)}</title></rect>'

    def _annotations(self) -> Iterable[str]:
        for note in self.layout.get("annotations") or []:
            text = note.get("text")
            if not text:
                continue
            x = self.position("x", str(note.get("xref", "x")), note.get("x"))
            y = self.position("y", str(note.get("yref", "y")), note.get("y"))
            if x is None or y is None:
                continue
            font = note.get("font") or {}
            size = float(font.get("size") or self.font)
            if self.narrow:
                size = min(size, self.font)
            anchor = {"left": "start", "right": "end"}.get(str(note.get("xanchor")), "middle")
            yanchor = str(note.get("yanchor", "middle"))
            baseline = y - 3 if yanchor == "bottom" else y + size if yanchor == "top" else y + size * 0.35
            colour = f' fill="{escape(str(font["color"]))}"' if font.get("color") else ""
            plain = _plain(str(text))
            yield (f'<text class="note" x="{x:.1f}" y="{baseline:.1f}" text-anchor="{anchor}" '
                   f'font-size="{size:g}"{colour}>{escape(plain)}</text>')  # fmt: skip

    def legend(self) -> list[tuple[str, str, str, bool]]:
        """(name, colour, symbol, drawn as a line) for each named trace shown in the legend."""
        out: list[tuple[str, str, str, bool]] = []
        if self.layout.get("showlegend") is False:  # as plotly: the figure asked for none
            return out
        for index, trace in enumerate(self.traces):
            if trace.get("showlegend") is False or not trace.get("name"):
                continue
            line, marker = trace.get("line") or {}, trace.get("marker") or {}
            colour = line.get("color") or marker.get("color") or COLORWAY[index % len(COLORWAY)]
            if isinstance(colour, list):
                # One colour per bar: one entry per bar, named by its category, not one swatch for all.
                horizontal = trace.get("orientation") == "h"
                categories = _values(trace.get("y") if horizontal else trace.get("x"))
                out.extend(
                    (str(category), str(colour[position % len(colour)]), "square", False)
                    for position, category in enumerate(categories)
                    if colour
                )
                continue
            mode = str(trace.get("mode") or ("bars" if trace.get("type") == "bar" else "lines+markers"))
            symbol = "square" if trace.get("type") == "bar" else str(marker.get("symbol") or "circle")
            out.append((str(trace["name"]), str(colour), symbol, "lines" in mode))
        return out


def _plain(text: str) -> str:
    """plotly annotation text may carry <b>, <br> and the like; the SVG gets the words."""
    out, inside = [], False
    for char in text.replace("<br>", " "):
        if char == "<":
            inside = True
        elif char == ">":
            inside = False
        elif not inside:
            out.append(char)
    return "".join(out)


def _stroke(line: dict[str, Any]) -> str:
    colour = escape(str(line.get("color") or "currentColor"))
    width = float(line.get("width") or 2)
    dash = DASHES.get(str(line.get("dash") or "solid"))
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return f' stroke="{colour}" stroke-width="{width:g}"{dashed}'


def _marker(symbol: str, x: float, y: float, size: float, colour: str, width: float, tip: str) -> str:
    open_ = symbol.endswith("-open")
    base = symbol.removesuffix("-open")
    paint = (
        f'fill="none" stroke="{escape(colour)}" stroke-width="{width:g}"'
        if open_ or base.startswith("x")
        else f'fill="{escape(colour)}"'
    )
    r = size / 2
    title = f"<title>{escape(tip)}</title>"
    if base in ("square",):
        return f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{size:.1f}" height="{size:.1f}" {paint}>{title}</rect>'
    if base == "diamond":
        points = f"{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r:.1f} {x - r:.1f},{y:.1f}"
        return f'<polygon points="{points}" {paint}>{title}</polygon>'
    if base.startswith("x"):
        d = f"M{x - r:.1f},{y - r:.1f}L{x + r:.1f},{y + r:.1f}M{x - r:.1f},{y + r:.1f}L{x + r:.1f},{y - r:.1f}"
        return f'<path d="{d}" {paint}>{title}</path>'
    if base == "star":
        points = " ".join(
            f"{x + (r if i % 2 == 0 else r * 0.45) * math.sin(i * math.pi / 5):.1f},"
            f"{y - (r if i % 2 == 0 else r * 0.45) * math.cos(i * math.pi / 5):.1f}"
            for i in range(10)
        )
        return f'<polygon points="{points}" {paint}>{title}</polygon>'
    if base.startswith("triangle"):
        points = f"{x:.1f},{y - r:.1f} {x + r:.1f},{y + r * 0.8:.1f} {x - r:.1f},{y + r * 0.8:.1f}"
        return f'<polygon points="{points}" {paint}>{title}</polygon>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r * 0.8:.1f}" {paint}>{title}</circle>'


def _legend_html(entries: Sequence[tuple[str, str, str, bool]]) -> str:
    items = []
    for name, colour, symbol, as_line in entries:
        line = (
            f'<line x1="1" x2="23" y1="7" y2="7" stroke="{escape(colour)}" stroke-width="2.5"/>'
            if as_line
            else ""
        )
        mark = _marker(symbol, 12, 7, 9, colour, 2, name)
        items.append(
            f'<li><svg class="legend-key" viewBox="0 0 24 14" width="24" height="14" aria-hidden="true">'
            f"{line}{mark}</svg>{escape(name)}</li>"
        )
    return f'<ul class="chart-legend">{"".join(items)}</ul>' if items else ""


def render(figure: dict[str, Any], uid: str = "chart") -> str:
    """The figure as HTML: a wide and a narrow SVG (CSS shows one) and the legend as a list.

    `uid`, unique on the page (the chart's element id), names the SVGs' clip paths.
    """
    wide, narrow = Chart(figure, WIDE), Chart(figure, NARROW)
    return (
        f'<div class="chart-static">'
        f'<div class="chart-wide">{wide.svg(uid)}</div>'
        f'<div class="chart-narrow">{narrow.svg(uid)}</div>'
        f"{_legend_html(wide.legend())}</div>"
    )
