"""Line charts over an ordered axis (releases, days): several series with markers and a legend."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.charts.svg import GRID, MARKERS, MUTED, SERIES, Frame, line, marker, nice_ceiling, number, text

WIDTH, HEIGHT = 560, 250
LEFT, RIGHT, TOP = 46, 14, 12
AXIS_BOTTOM = 180  # y of the x axis; labels and the legend sit below it
LEGEND_ROW = 18
MAX_X_LABELS = 8


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    values: Sequence[float | None]  # one per x label; None leaves a gap


def _x_positions(count: int) -> list[float]:
    span = WIDTH - LEFT - RIGHT
    if count == 1:
        return [LEFT + span / 2]
    return [LEFT + span * i / (count - 1) for i in range(count)]


def _legend(series: Sequence[Series], y: float) -> tuple[list[str], float]:
    """Entries left to right, wrapping to a new row when the width is used up."""
    parts: list[str] = []
    x: float = LEFT
    for index, item in enumerate(series):
        width = 26 + 7.2 * len(item.name)
        if x + width > WIDTH and x > LEFT:
            x, y = LEFT, y + LEGEND_ROW
        colour = SERIES[index % len(SERIES)]
        parts.append(line(x, y - 4, x + 16, y - 4, colour, width=2))
        parts.append(marker(MARKERS[index % len(MARKERS)], x + 8, y - 4, colour, size=3.5))
        parts.append(text(x + 21, y, item.name, size=12))
        x += width + 12
    return parts, y


def line_chart(
    frame: Frame, x_labels: Sequence[str], series: Sequence[Series], *, y_top: float | None = None, unit: str = ""
) -> str:
    """Each series as a line with a marker per point; y from 0 to y_top (a round number above the data)."""
    values = [v for s in series for v in s.values if v is not None]
    top = y_top if y_top is not None else nice_ceiling(max([*values, 0.0]) or 1.0)
    xs = _x_positions(max(len(x_labels), 1))
    plot_height = AXIS_BOTTOM - TOP

    def y_of(value: float) -> float:
        return AXIS_BOTTOM - plot_height * min(max(value / top, 0.0), 1.0)

    parts: list[str] = []
    for k in range(5):
        tick = top * k / 4
        y = y_of(tick)
        parts.append(line(LEFT, y, WIDTH - RIGHT, y, GRID, dash="" if k == 0 else "2 3"))
        parts.append(text(LEFT - 6, y + 4, number(tick), size=11, anchor="end", fill=MUTED))
    step = max(1, -(-len(x_labels) // MAX_X_LABELS))
    last = len(x_labels) - 1
    for index, label in enumerate(x_labels):
        # Every step-th label and the last one, unless a stepped label would crowd the last.
        if index == last or (index % step == 0 and last - index >= max(step / 2, 1)):
            parts.append(text(xs[index], AXIS_BOTTOM + 16, label, size=11, anchor="middle", fill=MUTED))
    for index, item in enumerate(series):
        colour = SERIES[index % len(SERIES)]
        points = [(xs[i], y_of(v)) for i, v in enumerate(item.values) if v is not None and i < len(xs)]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.extend(marker(MARKERS[index % len(MARKERS)], x, y, colour) for x, y in points)
    legend, last_y = _legend(series, AXIS_BOTTOM + 40)
    parts.extend(legend)
    if unit:
        parts.append(text(WIDTH - RIGHT, last_y + LEGEND_ROW, unit, size=11, anchor="end", fill=MUTED))
    return frame.wrap(WIDTH, max(HEIGHT, int(last_y + LEGEND_ROW + 8)), parts)
