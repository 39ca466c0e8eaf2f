"""Authoring warnings shown to editors and reviewers before an entry reaches agents."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta

from knowledge.retrieval.analysis import AnalyzerConfig, analyze_text, is_coverage_term

LOW_CONFIDENCE = 0.80
STALE_AFTER = timedelta(days=365)
KEY_TERMS = 5

SUMMARY_MISSES_KEYWORDS = "The summary does not mention {terms}; agents route on summaries (seed, OKF routing)."
CONFIDENCE_LOW = "Confidence {confidence:.2f} is below 0.80: agents must tell users to double-check it (EG-201.2)."
UPDATED_STALE = "`updated` is {date}, more than 12 months ago: agents will warn that it may be outdated (EG-201.4)."
LINK_MISSING = "Link {id} points to no entry of this namespace."
LINK_RETIRED = "Link {id} points to a retired entry."


@dataclass(frozen=True, slots=True)
class Draft:
    title: str
    summary: str
    body: str
    confidence: float
    updated: date
    links: tuple[str, ...]


def key_terms(text: str, *, limit: int = KEY_TERMS) -> list[str]:
    """The most frequent informative terms of a text (the words its body is about)."""
    config = AnalyzerConfig()
    counts = Counter(term for term in analyze_text(text, config) if is_coverage_term(term, config) and len(term) > 1)
    return [term for term, count in counts.most_common(limit) if count > 1]


def authoring_warnings(draft: Draft, *, link_states: Mapping[str, str], today: date) -> list[str]:
    """Warnings, not errors: each names what an agent would otherwise get wrong.

    `link_states` maps each linked ID to "live", "retired" or "missing".
    """
    warnings: list[str] = []
    summary_terms = set(analyze_text(draft.title + " " + draft.summary, AnalyzerConfig()))
    missing = [term for term in key_terms(draft.body) if term not in summary_terms]
    if missing:
        warnings.append(SUMMARY_MISSES_KEYWORDS.format(terms=", ".join(f"“{t}”" for t in missing)))
    if draft.confidence < LOW_CONFIDENCE:
        warnings.append(CONFIDENCE_LOW.format(confidence=draft.confidence))
    if today - draft.updated > STALE_AFTER:
        warnings.append(UPDATED_STALE.format(date=draft.updated.isoformat()))
    for link in draft.links:
        state = link_states.get(link, "missing")
        if state == "missing":
            warnings.append(LINK_MISSING.format(id=link))
        elif state == "retired":
            warnings.append(LINK_RETIRED.format(id=link))
    return warnings
