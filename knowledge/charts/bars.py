"""Horizontal bar charts: one labelled row per item, optionally drawn against a limit (a budget) or on a log scale."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.charts.svg import GRID, MUTED, SERIES, TRACK, Frame, line, nice_ceiling, number, rect, text

WIDTH = 560
ROW = 44
LABEL_GAP = 17  # the label sits on its own line above the bar, so long labels fit a phone's width
BAR = 14
VALUE_COLUMN = 150  # right-hand column for the value and its note
TOP, BOTTOM = 8, 26


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float
    note: str = ""
    limit: float | None = None  # drawn as a track behind the bar: "value of limit"


@dataclass(frozen=True, slots=True)
class Axis:
    """A linear axis from 0, or a log axis between two powers of ten, with its tick values."""

    low: float
    top: float
    ticks: tuple[float, ...]
    log: bool

    @classmethod
    def fitting(cls, values: Sequence[float], *, log: bool) -> Axis:
        top = max([*values, 1.0])
        if log:
            positive = [v for v in values if v > 0] or [1.0]
            low_exp = max(0, math.floor(math.log10(min(positive))))
            top_exp = max(low_exp + 1, math.ceil(math.log10(top)))
            return cls(10.0**low_exp, 10.0**top_exp, tuple(10.0**k for k in range(low_exp, top_exp + 1)), True)
        top = nice_ceiling(top)
        return cls(0.0, top, tuple(top * k / 4 for k in range(5)), False)

    def position(self, value: float) -> float:
        """Where a value falls between 0 and 1 along the axis (clamped)."""
        if value <= 0:
            return 0.0
        if self.log:
            span = math.log10(self.top) - math.log10(self.low)
            return min(1.0, max(0.0, (math.log10(value) - math.log10(self.low)) / span))
        return min(1.0, value / self.top)


def bar_chart(frame: Frame, bars: Sequence[Bar], *, unit: str, log: bool = False) -> str:
    """Bars left to right on a shared axis; the value (with `unit`) and note at the row's right."""
    plot = WIDTH - VALUE_COLUMN - 8
    axis = Axis.fitting([max(b.value, b.limit or 0) for b in bars], log=log)
    height = TOP + ROW * max(len(bars), 1) + BOTTOM + (16 if log else 0)
    parts: list[str] = []
    axis_y = TOP + ROW * len(bars) + 4
    for tick in axis.ticks:
        x = plot * axis.position(tick)
        parts.append(line(x + 1, TOP, x + 1, axis_y, GRID, dash="2 3"))
        parts.append(
            text(x + 1, axis_y + 16, number(tick), size=11, anchor="middle" if x > 10 else "start", fill=MUTED)
        )
    for row, bar in enumerate(bars):
        y = TOP + row * ROW
        parts.append(text(0, y + 13, bar.label, size=13))
        bar_y = y + LABEL_GAP + 2
        if bar.limit is not None:
            parts.append(rect(1, bar_y, plot * axis.position(bar.limit), BAR, TRACK))
        colour = SERIES[0] if bar.limit is None or bar.value <= bar.limit else SERIES[2]
        parts.append(rect(1, bar_y, max(plot * axis.position(bar.value), 2), BAR, colour))
        value = f"{number(bar.value)} {unit}".strip()
        if bar.limit is not None:
            value = f"{number(bar.value)} of {number(bar.limit)} {unit}".strip()
        parts.append(text(WIDTH, bar_y + 11, value, size=12, anchor="end"))
        if bar.note:
            parts.append(text(WIDTH, y + 13, bar.note, size=11, anchor="end", fill=MUTED))
    if log:
        parts.append(text(plot, height - 2, f"{unit}, log scale", size=11, anchor="end", fill=MUTED))
    return frame.wrap(WIDTH, height, parts)
