"""Grouping unanswered topics by their informative terms, as the engine analyses them (pure).

"price of enterprise plans", "enterprise plan pricing" and "Enterprise-Plan Preise?" are one gap
when they share their most informative terms: the topic is analysed like a query (segmentation,
stemming, stopwords), and its terms are ranked by idf in the release's index — a term no entry
contains is the most informative of all, since it names what the knowledge base lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from knowledge.retrieval.analysis import AnalyzerConfig, analyze_text, is_coverage_term

KEEP = 3


def gap_terms(
    topic: str, *, analyzer: AnalyzerConfig, idf_of: Callable[[str], float], keep: int = KEEP
) -> tuple[str, ...]:
    """The topic's `keep` most informative terms, alphabetically (the gap's key); () when it has none."""
    terms = [term for term in dict.fromkeys(analyze_text(topic, analyzer)) if is_coverage_term(term, analyzer)]
    # Equal idf (every unknown word has the largest) is broken by length: longer words name things
    # ("zeppelin"), shorter ones are more often leftovers of the question ("much").
    ranked = sorted(terms, key=lambda term: (-idf_of(term), -len(term), term))
    return tuple(sorted(ranked[:keep]))


def gap_key(terms: tuple[str, ...]) -> str:
    return " ".join(terms)[:200]


def gap_match(terms: tuple[str, ...], groups: Sequence[tuple[str, frozenset[str]]]) -> str | None:
    """The key of the group sharing the most terms with `terms` — at least two, or all of a shorter one —
    or None. "zeppelin fuel pricing" and "what does zeppelin fuel cost" share zeppelin and fuel: one gap."""
    wanted = set(terms)
    needed = min(2, len(wanted))
    best, best_shared = None, 0
    for key, group in groups:
        shared = len(wanted & group)
        if shared >= needed and shared > best_shared:
            best, best_shared = key, shared
    return best
