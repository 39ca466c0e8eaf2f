"""The few SVG pieces every chart is made of: escaped text, elements, numbers and a chart's frame."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

# Colours that keep 4.5:1 against white for text and 3:1 for marks (WCAG 1.4.3 / 1.4.11); series are
# also told apart by their markers and their legend, never by colour alone.
INK = "#1d2a22"
MUTED = "#4f5f55"
GRID = "#c9d6cd"
TRACK = "#e6eee8"
SERIES = ("#1f6f47", "#2f5fa7", "#a5461f", "#6b3fa0", "#8a6d00", "#0f6f78")
MARKERS = ("circle", "square", "diamond", "triangle", "circle", "square")
FONT = 'font-family="system-ui, sans-serif"'


def attr(value: object) -> str:
    return escape(str(value), quote=True)


def text(
    x: float, y: float, content: str, *, size: int = 13, anchor: str = "start", fill: str = INK, bold: bool = False
) -> str:
    weight = ' font-weight="600"' if bold else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{weight}>'
        f"{escape(content)}</text>"
    )


def rect(x: float, y: float, width: float, height: float, fill: str, *, rx: float = 2) -> str:
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(width, 0):.1f}" height="{height:.1f}" rx="{rx}" fill="{fill}"/>'


def line(x1: float, y1: float, x2: float, y2: float, stroke: str = GRID, width: float = 1, dash: str = "") -> str:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
        f'stroke-width="{width}"{dashed}/>'
    )


def marker(kind: str, x: float, y: float, fill: str, size: float = 4.5) -> str:
    if kind == "square":
        return rect(x - size, y - size, 2 * size, 2 * size, fill, rx=0)
    reach = size + 1
    if kind == "diamond":
        return _polygon([(x, y - reach), (x + reach, y), (x, y + reach), (x - reach, y)], fill)
    if kind == "triangle":
        return _polygon([(x, y - reach), (x + reach, y + size), (x - reach, y + size)], fill)
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size:.1f}" fill="{fill}"/>'


def _polygon(points: list[tuple[float, float]], fill: str) -> str:
    return '<polygon points="{}" fill="{}"/>'.format(" ".join(f"{x:.1f},{y:.1f}" for x, y in points), fill)


def number(value: float) -> str:
    """1234 → "1,234"; 0.8123 → "0.812"; large values stay whole."""
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3f}" if abs(value) < 10 else f"{value:,.1f}"


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 × 10^n at or above value: a round top for an axis."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power  # pragma: no cover  # the loop always returns


@dataclass(frozen=True, slots=True)
class Frame:
    """What makes an SVG a chart a screen reader can name: an id, a title and a one-sentence summary."""

    ident: str
    title: str
    summary: str

    def wrap(self, width: int, height: int, parts: Iterable[str]) -> str:
        title_id, desc_id = f"{self.ident}-title", f"{self.ident}-desc"
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{attr(self.ident)}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="{attr(title_id)} {attr(desc_id)}" {FONT}>'
            f'<title id="{attr(title_id)}">{escape(self.title)}</title>'
            f'<desc id="{attr(desc_id)}">{escape(self.summary)}</desc>' + "".join(parts) + "</svg>"
        )
