"""What each number of /metrics.json means (seed §10: "评测指标与口径"), in the namespace's language.

The three *Definition fields are the ones the demo's evaluation page promises for its A/B method; the
`definitions` object explains every field the document measures, so a reader never has to guess.
"""

from __future__ import annotations

from typing import Any

_EN = {
    "accuracyDefinition": "Accuracy: the answer's covered key points ÷ all key points of the reference answer, "
    "median of 3 runs per question, averaged over questions; reported as the change from the no-context group.",
    "tokenSavingDefinition": "Token saving = 1 − (context tokens with Evergreen ÷ context tokens without it), "
    "counting every token of context sent to the model for one question.",
    "roundsDefinition": "Rounds: HTTP requests or tool calls made before the final answer, per question.",
    "definitions": {
        "tokenEstimate": "How tokens are counted: round(CJK characters × 1.0 + other characters × 0.28) (seed §4).",
        "contextShape": "Tokens and bytes of each channel an agent can read, measured on the served bytes.",
        "budgetScan": "An empty-topic /api/context at each budget: entries packed, tokens used, truncated.",
        "matching": "The `matched` threshold and pack floor of this release and how they were obtained.",
        "evaluation": "Golden questions run through the /api/context path against this release (null before a run).",
        "ndcg_at_10": "nDCG@10 with linear gains and log2 discounts over covered questions.",
        "mrr_at_10": "Mean reciprocal rank of the first relevant entry within the top 10.",
        "pack_recall": "Share of a covered question's relevant entries that are in the pack.",
        "hit_rate": "Share of covered questions whose pack holds at least one relevant entry.",
        "matched_when_covered": "Share of covered questions answered with matched=true.",
        "unmatched_when_uncovered": "Share of uncovered questions answered with matched=false (a correct refusal).",
        "filler": "Share of packed entries that are not relevant to the question.",
        "latency_p50_ms": "Median time to rank and pack one question, in milliseconds (p99: latency_p99_ms).",
    },
}
_ZH = {
    "accuracyDefinition": "准确率：回答覆盖的标准答案要点数 ÷ 要点总数，每题 3 次取中位数后对问题求平均；"
    "报告相对无上下文组的变化。",
    "tokenSavingDefinition": "token 节省 = 1 − 接入组上下文 token ÷ 无上下文组上下文 token，"
    "计入为回答一个问题送进模型的全部上下文。",
    "roundsDefinition": "检索轮次：得到最终答案前发出的 HTTP 请求或工具调用次数，按问题计。",
}


def metric_definitions(language: str) -> dict[str, Any]:
    """The definitions in `language` where they are translated (zh), else English."""
    if language.lower().startswith("zh"):
        return {**_EN, **_ZH}
    return dict(_EN)
