"""The golden questions before and after, as reviewers read them: on a release and on a version's review page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from knowledge.models import GateStatus, ReleaseGate
from knowledge.retrieval.gate import answers_differently
from knowledge.services.golden_preview import GoldenPreview

REGRESSION_LABELS = {"refused": "now refused", "lost_expected": "lost its expected entry"}
BORDERLINE_LABEL = "refused, on the boundary (not held)"


def _answer(answer: dict[str, Any], expected: Sequence[str]) -> SafeString:
    """matched and the packed IDs, the expected ones in bold."""
    ids = format_html_join(
        ", ", "{}", ((format_html("<strong>{}</strong>", i) if i in expected else i,) for i in answer["packed"])
    )
    return format_html("matched={} · {}", str(answer["matched"]).lower(), ids or "nothing packed")


def questions_table(questions: Sequence[dict[str, Any]]) -> SafeString:
    """One row per question: its expected entries, the serving release's answer and the candidate's."""
    if not questions:
        return mark_safe("")
    rows = format_html_join(
        "",
        '<tr class="{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>',
        (
            (
                "evergreen-regressed" if q["regression"] else "",
                q["key"],
                q["text"],
                ", ".join(q["expected"]) or "(not covered)",
                _answer(q["before"], q["expected"]),
                _answer(q["after"], q["expected"]),
                BORDERLINE_LABEL if q.get("borderline") else REGRESSION_LABELS.get(q["regression"] or "", "—"),
            )
            for q in questions
        ),
    )
    return format_html(
        '<table class="evergreen-gate"><thead><tr><th scope="col">Question</th><th scope="col">Text</th>'
        '<th scope="col">Expected</th><th scope="col">Before</th><th scope="col">After</th>'
        '<th scope="col">Regression</th></tr></thead><tbody>{}</tbody></table>',
        rows,
    )


def gate_html(gate: ReleaseGate | None) -> SafeString:
    """The gate's status, why, the hit rates, and the questions that changed (regressions first)."""
    if gate is None:
        return mark_safe("<p>Not checked (built before the publish gate existed).</p>")
    report = gate.report or {}
    compared = f"release #{gate.compared_with.sequence}" if gate.compared_with else "no serving release"
    head = format_html(
        '<p id="evergreen-gate-status"><strong>{}</strong>, compared with {} on {}.</p>',
        gate.get_status_display(),
        compared,
        f"{gate.checked_at:%Y-%m-%d %H:%M}",
    )
    if "questions" not in report:
        return format_html("{}<p>{}</p>", head, report.get("note", ""))
    reasons = format_html_join(
        "", "<li>{}</li>", ((r,) for r in [*report.get("reasons", []), *report.get("borderline", [])])
    )
    rate = report.get("hitRate", {})
    questions = report["questions"]
    changed = sorted((q for q in questions if answers_differently(q)), key=lambda q: not q["regression"])
    decided = (
        format_html(
            "<p>Activated by {} on {}: “{}”</p>", gate.decided_by, f"{gate.decided_at:%Y-%m-%d %H:%M}", gate.reason
        )
        if gate.status == GateStatus.OVERRIDDEN
        else ""
    )
    return format_html(
        '{}{}<ul class="evergreen-warnings">{}</ul><p>Hit rate {} → {} (a fall of more than {} holds the release).</p>'
        "<p>{} of {} golden questions answer differently.</p>{}",
        head,
        decided,
        reasons,
        _share(rate.get("before")),
        _share(rate.get("after")),
        _share(report.get("tolerance", {}).get("hitRateDrop")),
        len(changed),
        len(questions),
        questions_table(changed),
    )


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def golden_preview_html(preview: GoldenPreview) -> SafeString:
    """The review page's answer to "which golden questions would this version change?"."""
    if preview.report is None:
        return format_html("<p>{}</p>", preview.note)
    changed = preview.changed
    total = len(preview.report["questions"])
    if not changed:
        return format_html('<p id="evergreen-golden-preview">None of the {} golden questions would change.</p>', total)
    verdict = (
        format_html(
            "<p><strong>Publishing it would hold the release</strong> until a reviewer activates it with a reason:</p>"
            '<ul class="evergreen-warnings">{}</ul>',
            format_html_join("", "<li>{}</li>", ((r,) for r in preview.report["reasons"])),
        )
        if preview.held
        else mark_safe("<p>Within the publish gate's tolerance.</p>")
    )
    return format_html(
        '<p id="evergreen-golden-preview">{} of {} golden questions would answer differently '
        "(before: the published entries; after: with this version).</p>{}{}",
        len(changed),
        total,
        verdict,
        questions_table(changed),
    )
