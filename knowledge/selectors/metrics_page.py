"""/metrics.html: the namespace's measurements for people, as charts with their data beside them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.template.loader import render_to_string

from knowledge.charts.measures import (
    CHANNEL_NAMES,
    QUALITY_SERIES,
    RunPoint,
    budget_scan_chart,
    context_shape_chart,
    quality_trend_chart,
)
from knowledge.retrieval.render.metrics import ESTIMATOR
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot
from knowledge.selectors.pages import page_context

# The evaluation metrics the page lists for the served release (EvaluationReport field names).
EVALUATION_ROWS = (
    ("queries", "Questions"),
    ("ndcg_at_10", "nDCG@10"),
    ("mrr_at_10", "MRR@10"),
    ("pack_recall", "Recall in pack"),
    ("hit_rate", "Hit rate"),
    ("matched_when_covered", "Covered questions answered matched=true"),
    ("unmatched_when_uncovered", "Not covered questions answered matched=false"),
    ("latency_p50_ms", "Latency p50 (ms)"),
)


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "—" if value is None else str(value)


def run_label(run: Mapping[str, Any]) -> str:
    return f"#{run['releaseId']} v{run['knowledgeVersion']}"


def metrics_page_render(
    *,
    snapshot: Snapshot,
    stamp: ReleaseStamp,
    document: Mapping[str, Any],
    trend: Sequence[Mapping[str, Any]],
    traffic_chart: str = "",
) -> str:
    """The page from /metrics.json's document (`evaluation` names the served release) and the quality trend."""
    context = page_context(snapshot, stamp, root="", section="metrics")
    measured, evaluation = document, document["evaluation"]
    metrics = evaluation.get("metrics") or {}
    shape = [
        {**row, "name": CHANNEL_NAMES.get(row["source"], row["source"])} for row in measured.get("contextShape", ())
    ]
    context.update(
        {
            "self_md": "metrics.json",
            "alternate_type": "application/json",  # no Markdown twin: /metrics.json holds the same figures
            "threshold": (measured.get("matching") or {}).get("threshold"),
            "evaluation": evaluation,
            "evaluation_rows": [(name, _shown(metrics.get(key))) for key, name in EVALUATION_ROWS if key in metrics],
            "trend_rows": [(run["releaseId"],) for run in reversed(trend)],
            "trend_names": [name for _, name in QUALITY_SERIES],
            "trend_table": [
                (run_label(run), [_shown(run["metrics"].get(key)) for key, _ in QUALITY_SERIES]) for run in trend
            ],
            "quality_chart": quality_trend_chart([RunPoint(run_label(run), run["metrics"]) for run in trend]),
            "budget_scan": measured.get("budgetScan", ()),
            "budget_chart": budget_scan_chart(measured.get("budgetScan", ())),
            "context_shape": shape,
            "shape_chart": context_shape_chart(shape),
            "traffic_chart": traffic_chart,
            "estimator": f"Tokens are estimated as {ESTIMATOR}.",
        }
    )
    return render_to_string("evergreen/metrics.html", context)
