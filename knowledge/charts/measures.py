"""The charts of a namespace's measurements: budget scan, context shape, evaluation across releases, traffic."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from knowledge.charts.bars import Bar, bar_chart
from knowledge.charts.lines import Series, line_chart
from knowledge.charts.svg import Frame

CHANNEL_NAMES = {
    "html": "HTML page",
    "htmlText": "HTML page, text only",
    "markdownMirror": "Markdown mirror",
    "llmsFullTxt": "llms-full.txt",
    "llmsTxt": "llms.txt",
    "apiContext": "/api/context",
}
# Evaluation metrics drawn across releases (EvaluationReport field names) and their legend names.
QUALITY_SERIES = (
    ("ndcg_at_10", "nDCG@10"),
    ("mrr_at_10", "MRR@10"),
    ("pack_recall", "Recall in pack"),
    ("hit_rate", "Hit rate"),
)


def budget_scan_chart(scan: Sequence[Mapping[str, Any]], *, ident: str = "budget-scan") -> str:
    """Tokens used of each budget tier by an empty-topic pack, with the number of entries it holds."""
    bars = [
        Bar(
            label=f"Budget {row['budget']:,}",
            value=row["usedTokens"],
            limit=row["budget"],
            note=f"{row['entryCount']:,} entries" + (" · truncated" if row.get("truncated") else ""),
        )
        for row in scan
    ]
    summary = "; ".join(f"{b.label}: {b.value:,} tokens used, {b.note}" for b in bars) or "No measurement."
    return bar_chart(Frame(ident, "Budget scan: tokens used of each budget", summary), bars, unit="tokens")


def context_shape_chart(shape: Sequence[Mapping[str, Any]], *, ident: str = "context-shape") -> str:
    """What each channel costs an agent in tokens (log scale: llms-full.txt dwarfs the rest)."""
    bars = [
        Bar(label=CHANNEL_NAMES.get(row["source"], row["source"]), value=row["tokens"], note=f"{row['bytes']:,} bytes")
        for row in shape
    ]
    summary = "; ".join(f"{b.label}: {b.value:,} tokens" for b in bars) or "No measurement."
    return bar_chart(Frame(ident, "Context shape: tokens per channel", summary), bars, unit="tokens", log=True)


@dataclass(frozen=True, slots=True)
class RunPoint:
    """One evaluation run, as the trend shows it: the release it measured and its metrics."""

    label: str  # e.g. "#12 v1.4.0"
    metrics: Mapping[str, Any]


def quality_trend_chart(runs: Sequence[RunPoint], *, ident: str = "quality-trend") -> str:
    """Golden-question metrics of each evaluated release, oldest first, on a 0–1 axis."""
    series = [
        Series(name, [_metric(run.metrics, key) for run in runs])
        for key, name in QUALITY_SERIES
        if any(_metric(run.metrics, key) is not None for run in runs)
    ]
    if runs:
        last = runs[-1]
        summary = f"{len(runs)} evaluated releases; latest {last.label}: " + ", ".join(
            f"{name} {value:.3f}" for key, name in QUALITY_SERIES if (value := _metric(last.metrics, key)) is not None
        )
    else:
        summary = "No evaluation yet."
    frame = Frame(ident, "Golden questions across releases", summary)
    return line_chart(frame, [run.label for run in runs], series, y_top=1.0)


def traffic_chart(
    days: Sequence[str], requests: Sequence[int], uncovered: Sequence[int], *, ident: str = "traffic"
) -> str:
    """Requests per day and how many asked about something the knowledge does not cover."""
    summary = f"{sum(requests):,} requests over {len(days)} days, {sum(uncovered):,} not covered."
    series = [Series("Requests", list(requests)), Series("Not covered", list(uncovered))]
    return line_chart(Frame(ident, "Requests and topics not covered, per day", summary), days, series, unit="requests")


def _metric(metrics: Mapping[str, Any], key: str) -> float | None:
    value = metrics.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
