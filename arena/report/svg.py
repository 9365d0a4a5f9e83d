"""Inline SVG for the report: a win-rate interval bar and a line chart; no script, no external file."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

from arena.report.wording import fixed, percent

PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#8c564b")
"""Okabe-Ito's colour-blind-safe colours (yellow left out: too faint on white), then brown."""
DASHES = ("", "8 4", "2 4", "10 4 2 4")
"""With more bots than colours, lines also differ by dash pattern."""


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def dash(index: int) -> str:
    return DASHES[(index // len(PALETTE)) % len(DASHES)]


def interval_bar(rate: float, low: float, high: float) -> str:
    """The 95% interval as a bar on a 0-100% track, the win rate as a dot; the numbers as its accessible label."""
    width, height, pad = 200, 24, 6
    span = width - 2 * pad

    def x(value: float) -> float:
        return round(pad + span * min(1.0, max(0.0, value)), 1)

    label = f"win rate {percent(rate)}, 95% interval {percent(low)} to {percent(high)}"
    return (
        f'<svg class="interval" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}"'
        f' data-low="{low}" data-high="{high}" data-rate="{rate}">'
        f"<title>{escape(label)}</title>"
        f'<line class="track" x1="{pad}" y1="12" x2="{width - pad}" y2="12"/>'
        f'<line class="half" x1="{x(0.5)}" y1="4" x2="{x(0.5)}" y2="20"/>'
        f'<rect class="range" x="{x(low)}" y="6" width="{max(1.0, x(high) - x(low)):.1f}" height="12" rx="3"/>'
        f'<circle class="rate" cx="{x(rate)}" cy="12" r="5"/>'
        "</svg>"
    )


def line_chart(
    positions: Sequence[int],
    labels: Sequence[str],
    series: Mapping[str, Sequence[float]],
    x_title: str,
    y_title: str,
    chart_id: str = "rating-chart",
) -> str:
    """One polyline per series over shared x positions, with axes, ticks and a title per line for hovering."""
    width, height = 960, 420
    left, right, top, bottom = 64, 24, 16, 56
    values = [v for line in series.values() for v in line] or [0.0]
    low, high = min(values), max(values)
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    margin = (high - low) * 0.05
    low, high = low - margin, high + margin
    x_max = max(positions[-1] if positions else 1, 1)

    def x(position: float) -> float:
        return round(left + (width - left - right) * position / x_max, 1)

    def y(value: float) -> float:
        return round(top + (height - top - bottom) * (high - value) / (high - low), 1)

    parts = [
        f'<svg class="chart" id="{escape(chart_id)}" viewBox="0 0 {width} {height}" role="img"'
        f' aria-label="{escape(y_title)} by {escape(x_title)}">',
        f'<line class="axis" x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}"/>',
        f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}"/>',
    ]
    for tick in _ticks(low, high, 6):
        parts.append(f'<line class="grid" x1="{left}" y1="{y(tick)}" x2="{width - right}" y2="{y(tick)}"/>')
        parts.append(f'<text class="tick" x="{left - 8}" y="{y(tick) + 5}" text-anchor="end">{tick_label(tick)}</text>')
    for tick in _ticks(0, x_max, 10):
        if tick == int(tick) and 0 <= tick <= x_max:
            parts.append(
                f'<text class="tick" x="{x(tick)}" y="{height - bottom + 22}" text-anchor="middle">{int(tick)}</text>'
            )
    parts.append(
        f'<text class="axis-title" x="{(left + width - right) / 2}" y="{height - 8}" text-anchor="middle">'
        f"{escape(x_title)}</text>"
    )
    for index, (name, line) in enumerate(series.items()):
        points = " ".join(f"{x(p)},{y(v)}" for p, v in zip(positions, line, strict=True))
        pattern = dash(index)
        dashed = f' stroke-dasharray="{pattern}"' if pattern else ""
        final = fixed(line[-1]) if line else "-"
        parts.append(
            f'<polyline class="series" data-bot="{escape(name)}" data-final="{final}" fill="none"'
            f' stroke="{colour(index)}"{dashed} points="{points}"><title>{escape(name)}: {final}</title></polyline>'
        )
        if line:
            parts.append(
                f'<circle class="end" cx="{x(positions[-1])}" cy="{y(line[-1])}" r="4" fill="{colour(index)}">'
                f"<title>{escape(name)}: {final} ({escape(labels[-1])})</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _ticks(low: float, high: float, count: int) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering low..high: whole multiples of the step, so
    the tick at zero is 0 itself (adding steps up from below, or -(-low // step) for a low in (-step, 0], gave -0.0)."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / max(1, count)
    power = 10 ** int(f"{raw:e}".split("e")[1])
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
    return [round(k * step, 10) + 0.0 for k in range(first, last + 1)]


def tick_label(value: float) -> str:
    """A tick's value as the axis shows it: short ("2.5", "-10", "1e+06"), and never "-0"."""
    text = f"{value:g}"
    return "0" if text in ("-0", "+0") else text
