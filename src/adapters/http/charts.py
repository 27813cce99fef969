"""Line charts as inline SVG, drawn on the server: no JavaScript library, no CDN, readable without JS."""

from __future__ import annotations

import html
from collections.abc import Sequence

import attrs

WIDTH, HEIGHT, PAD = 640, 160, 36


@attrs.frozen
class Series:
    label: str
    points: Sequence[tuple[int, float]]  # (time ms, value)
    css_class: str = "s0"


def line_chart(series: Sequence[Series], unit: str = "") -> str:
    """An SVG document fragment; the x axis is time, the y axis starts at 0."""
    points = [p for s in series for p in s.points]
    if max((len(s.points) for s in series), default=0) < 2:
        return '<p class="muted">Not enough samples yet (one every 5 seconds).</p>'
    t0 = min(t for t, _ in points)
    t1 = max(max(t for t, _ in points), t0 + 1)
    top = max(max(v for _, v in points), 1)

    def x(t: int) -> float:
        return PAD + (t - t0) / (t1 - t0) * (WIDTH - 2 * PAD)

    def y(v: float) -> float:
        return HEIGHT - PAD / 2 - v / top * (HEIGHT - PAD)

    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{html.escape(", ".join(s.label for s in series))}">',
        f'<line class="axis" x1="{PAD}" y1="{y(0):.1f}" x2="{WIDTH - PAD}" y2="{y(0):.1f}"/>',
        f'<text class="tick" x="2" y="{y(top) + 4:.1f}">{_short(top)}{unit}</text>',
        f'<text class="tick" x="2" y="{y(0) + 4:.1f}">0</text>',
        f'<text class="tick" x="{PAD}" y="{HEIGHT - 2}">-{_span(t1 - t0)}</text>',
        f'<text class="tick" x="{WIDTH - PAD - 20}" y="{HEIGHT - 2}">now</text>',
    ]
    for s in series:
        coords = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in s.points)
        parts.append(
            f'<polyline class="line {s.css_class}" points="{coords}"><title>{html.escape(s.label)}</title></polyline>'
        )
    legend = "".join(f'<span class="legend {s.css_class}">{html.escape(s.label)}</span>' for s in series)
    return "".join(parts) + "</svg>" + f'<div class="legends">{legend}</div>'


def _short(value: float) -> str:
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.1f}{suffix}"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def _span(ms: int) -> str:
    return f"{ms // 60000} min" if ms >= 60000 else f"{ms // 1000} s"
