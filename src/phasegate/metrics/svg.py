"""Inline SVG bar charts for the HTML report, as strings: no script, no external reference.

Two layouts share one data shape (a :class:`Bar` is a label and stacked :class:`Segment` s):
:func:`column_chart` draws vertical columns (histograms), :func:`row_chart` horizontal rows
(long task and phase names fit on the left). Every text is escaped here, at the point where it
enters markup, so callers pass raw strings. Each chart has an explicit width, height and
viewBox, so it has a size before (and without) any stylesheet; with nothing to draw it says
"no data" at the same width.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#9c755f")  # fmt: skip
"""Colour-blind-friendly series colours (Tableau 10)."""
WIDTH = 760
_TITLE_H = 30
_LEGEND_ROW = 18
_ROW_H = 24
_ROW_LABEL_W = 290
_GRID = "#d0d4da"


@dataclass(frozen=True, slots=True)
class Segment:
    """One coloured part of a bar, with its hover text."""

    value: float
    colour: str
    tooltip: str


@dataclass(frozen=True, slots=True)
class Bar:
    """A labelled bar: its segments stack in order."""

    label: str
    segments: tuple[Segment, ...]

    @property
    def total(self) -> float:
        """The bar's length in data units."""
        return sum(segment.value for segment in self.segments)


def column_chart(
    chart: str,
    title: str,
    bars: Sequence[Bar],
    *,
    x_label: str,
    y_label: str,
    legend: Sequence[tuple[str, str]] = (),
) -> str:
    """Vertical stacked columns, one per bar, labelled underneath; the y axis counts."""
    if not any(bar.total for bar in bars):
        return _no_data(chart, title)
    legend_svg, top = _legend(legend, _TITLE_H + 8)
    top += 12
    height = top + 260
    left, right, bottom = 60, WIDTH - 16, height - 56
    ticks = _ticks(max(bar.total for bar in bars))
    scale = (bottom - top) / ticks[-1]
    slot = (right - left) / len(bars)
    body = [legend_svg, _y_axis(ticks, left, right, bottom, scale)]
    for i, bar in enumerate(bars):
        x, y = left + i * slot + slot * 0.15, float(bottom)
        for segment in bar.segments:
            if segment.value:
                y -= segment.value * scale
                body.append(_rect(x, y, slot * 0.7, segment.value * scale, segment))
        centre = left + (i + 0.5) * slot
        body.append(_text(centre, bottom + 16, _fit(bar.label, slot / 6.5), anchor="middle"))
        if bar.total:
            body.append(_text(centre, y - 4, f"{bar.total:g}", anchor="middle", size=11))
    body.append(_text((left + right) / 2, height - 14, x_label, anchor="middle", bold=True))
    middle = (top + bottom) / 2
    body.append(
        f'<text x="16" y="{middle:.1f}" transform="rotate(-90 16 {middle:.1f})" '
        f'text-anchor="middle" font-weight="600">{escape(y_label)}</text>'
    )
    return _frame(chart, title, height, body)


@dataclass(frozen=True, slots=True)
class Point:
    """A value of a line, and its interval when it has one (drawn as a whisker)."""

    value: float
    low: float | None = None
    high: float | None = None


def line_chart(
    chart: str,
    title: str,
    labels: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[Point | None]]],
    *,
    x_label: str,
    y_label: str,
    percent: bool = False,
) -> str:
    """Lines over labelled slots (periods): each series is (name, colour, one point or None
    per label); None is a gap (no data there), the line breaks around it. ``percent``: values
    are shares (0 to 1) on a 0-100 % axis."""
    points = [p for _, _, values in series for p in values if p is not None]
    if not points or not labels:
        return _no_data(chart, title)
    legend_svg, top = _legend([(name, colour) for name, colour, _ in series], _TITLE_H + 8)
    top += 12
    height = top + 260
    left, right, bottom = 70, WIDTH - 16, height - 56
    highest = max(max(p.value, p.high or 0) for p in points)
    ticks = [0.0, 0.25, 0.5, 0.75, 1.0] if percent else _fine_ticks(highest)
    scale = (bottom - top) / ticks[-1]
    slot = (right - left) / len(labels)
    body = [legend_svg]
    for value in ticks:
        y = bottom - value * scale
        colour = "#333" if value == 0 else _GRID
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{colour}"/>')
        tick = f"{value * 100:g} %" if percent else f"{value:g}"
        body.append(_text(left - 6, y + 4, tick, anchor="end", size=11))
    step = max(1, math.ceil(len(labels) / (WIDTH / 70)))  # labels at least 70 px apart
    for i, label in enumerate(labels):
        if i % step == 0:
            body.append(_text(left + (i + 0.5) * slot, bottom + 16, _fit(label, 12),
                              anchor="middle", size=11))  # fmt: skip
    for name, colour, values in series:
        run: list[str] = []
        for i, point in enumerate([*values, None]):
            if point is None:
                if len(run) > 1:
                    body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                                f'points="{" ".join(run)}"/>')  # fmt: skip
                run = []
                continue
            x, y = left + (i + 0.5) * slot, bottom - point.value * scale
            run.append(f"{x:.1f},{y:.1f}")
            shown = f"{point.value * 100:.1f} %" if percent else f"{point.value:g}"
            tip = f"{labels[i]}: {name} {shown}"
            if point.low is not None and point.high is not None:
                y_low, y_high = bottom - point.low * scale, bottom - point.high * scale
                body.append(f'<line class="interval" x1="{x:.1f}" y1="{y_low:.1f}" '
                            f'x2="{x:.1f}" y2="{y_high:.1f}" stroke="{colour}" '
                            'stroke-width="1.5"/>')  # fmt: skip
                span = (f"{point.low * 100:.1f}-{point.high * 100:.1f} %" if percent
                        else f"{point.low:g}-{point.high:g}")  # fmt: skip
                tip += f" (95 % interval {span})"
            body.append(f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="3.5" '
                        f'fill="{colour}"><title>{escape(tip)}</title></circle>')  # fmt: skip
    body.append(_text((left + right) / 2, height - 14, x_label, anchor="middle", bold=True))
    middle = (top + bottom) / 2
    body.append(
        f'<text x="16" y="{middle:.1f}" transform="rotate(-90 16 {middle:.1f})" '
        f'text-anchor="middle" font-weight="600">{escape(y_label)}</text>'
    )
    return _frame(chart, title, height, body)


def row_chart(
    chart: str,
    title: str,
    bars: Sequence[Bar],
    *,
    x_label: str,
    ticks: Sequence[float],
    tick_label: Callable[[float], str],
    legend: Sequence[tuple[str, str]] = (),
) -> str:
    """Horizontal bars, one row per bar, labelled on the left; ``ticks`` span the x axis."""
    if not bars:
        return _no_data(chart, title)
    legend_svg, top = _legend(legend, _TITLE_H + 8)
    top += 12
    bottom = top + len(bars) * _ROW_H
    height = bottom + 52
    left, right = _ROW_LABEL_W, WIDTH - 56
    scale = (right - left) / ticks[-1]
    body = [legend_svg]
    for value in ticks:
        x = left + value * scale
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="{_GRID}"/>')
        body.append(_text(x, bottom + 16, tick_label(value), anchor="middle", size=11))
    for i, bar in enumerate(bars):
        x, y = float(left), top + i * _ROW_H
        for segment in bar.segments:
            body.append(_rect(x, y + 4, segment.value * scale, _ROW_H - 8, segment))
            x += segment.value * scale
        body.append(_text(left - 8, y + _ROW_H / 2 + 4, _fit(bar.label, 44), anchor="end"))
        body.append(_text(x + 4, y + _ROW_H / 2 + 4, tick_label(bar.total), size=11))
    body.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#333"/>')
    body.append(_text((left + right) / 2, height - 12, x_label, anchor="middle", bold=True))
    return _frame(chart, title, height, body)


def _frame(chart: str, title: str, height: int, body: list[str]) -> str:
    """The <svg> element: fixed size, system fonts only (the page loads no font)."""
    return (
        f'<svg class="chart" data-chart="{escape(chart)}" role="img" '
        f'aria-label="{escape(title)}" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="system-ui, sans-serif" font-size="12" '
        f'fill="#222"><title>{escape(title)}</title>'
        f'<rect width="{WIDTH}" height="{height}" fill="#fff"/>'
        f"{_text(12, 20, title, size=15, bold=True)}{''.join(body)}</svg>"
    )


def _no_data(chart: str, title: str) -> str:
    note = _text(WIDTH / 2, 90, "no data", anchor="middle", size=14)
    return _frame(chart, title, 140, [f'<g class="no-data" fill="#777">{note}</g>'])


def _legend(entries: Sequence[tuple[str, str]], top: int) -> tuple[str, int]:
    """Swatches and names in rows under the title; returns them and the y below them."""
    if not entries:
        return "", top
    parts, x, y = [], 12.0, top
    for name, colour in entries:
        label = _fit(name, 28)
        advance = 22 + 7 * len(label)
        if x + advance > WIDTH - 12 and x > 12:
            x, y = 12.0, y + _LEGEND_ROW
        parts.append(f'<rect x="{x:.1f}" y="{y}" width="12" height="12" fill="{colour}"/>')
        parts.append(_text(x + 16, y + 10, label, size=11))
        x += advance
    return "".join(parts), y + _LEGEND_ROW


def _y_axis(ticks: list[float], left: int, right: int, bottom: int, scale: float) -> str:
    """Horizontal grid lines at ``ticks``, labelled with the counts."""
    lines = []
    for value in ticks:
        y = bottom - value * scale
        colour = "#333" if value == 0 else _GRID
        lines.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{colour}"/>'
        )
        lines.append(_text(left - 6, y + 4, str(value), anchor="end", size=11))
    return "".join(lines)


def _rect(x: float, y: float, width: float, height: float, segment: Segment) -> str:
    return (
        f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" '
        f'fill="{segment.colour}"><title>{escape(segment.tooltip)}</title></rect>'
    )


def _text(x: float, y: float, text: str, *, anchor: str = "start", size: int = 12,
          bold: bool = False) -> str:  # fmt: skip
    weight = ' font-weight="600"' if bold else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"{weight}>'
        f"{escape(text)}</text>"
    )


def _fit(text: str, chars: float) -> str:
    """``text`` cut to about ``chars`` characters (the full text is in the tooltip)."""
    limit = max(int(chars), 3)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ticks(maximum: float) -> list[float]:
    """0 up to a round number at or above ``maximum``, in 1-2-5 steps (4 to 8 of them)."""
    raw = max(maximum, 1) / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    step = max(step, 1)  # counts: no fractional ticks
    return [step * i for i in range(max(math.ceil(maximum / step), 1) + 1)]


def _fine_ticks(maximum: float) -> list[float]:
    """0 up to a round number at or above ``maximum`` in 1-2-5 steps, fractions allowed."""
    if maximum <= 0:
        return [0.0, 1.0]
    raw = maximum / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [round(step * i, 12) for i in range(math.ceil(maximum / step - 1e-9) + 1)]
