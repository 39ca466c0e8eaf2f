"""Query-time synonyms: editor-kept sets of phrases that stand for each other, across languages.

A two-way set makes every phrase search for every other (`MCP` ⇄ `Model Context Protocol`); a
one-way set makes its first phrase also search for the others, not the reverse (`LLM` → `大模型`).
Phrases are analysed exactly like topics and entries, and compiled into the release's index, so a
change to a set reaches agents with the next release.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from knowledge.retrieval.analysis import AnalyzerConfig, analyze_text

# Longest source phrase, in terms, that a topic is searched for.
MAX_PHRASE_TERMS = 8


@dataclass(frozen=True, slots=True)
class SynonymSet:
    """One set as editors keep it: its phrases, and whether only the first one expands (one-way)."""

    phrases: tuple[str, ...]
    two_way: bool = True


@dataclass(frozen=True, slots=True)
class SynonymMatch:
    """A source phrase found in a topic: terms [start, end) and the phrases it also searches for."""

    start: int
    end: int
    targets: tuple[tuple[str, ...], ...]


Rules = dict[tuple[str, ...], tuple[tuple[str, ...], ...]]


def synonym_rules(sets: Iterable[SynonymSet], config: AnalyzerConfig) -> Rules:
    """Source phrase (analysed terms) -> the analysed phrases it expands to, merged over all sets."""
    rules: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for synonym_set in sets:
        phrases = [tuple(analyze_text(phrase, config)) for phrase in synonym_set.phrases]
        phrases = [p for p in dict.fromkeys(phrases) if 0 < len(p) <= MAX_PHRASE_TERMS]
        sources = phrases if synonym_set.two_way else phrases[:1]
        for source in sources:
            targets = rules.setdefault(source, [])
            targets.extend(p for p in phrases if p != source and p not in targets)
    return {source: tuple(targets) for source, targets in sorted(rules.items()) if targets}


def rules_to_meta(rules: Rules) -> list[list[list[str]]]:
    """JSON-able form kept in the index: [[source terms], [target terms], ...] per rule."""
    return [[list(source), *[list(target) for target in targets]] for source, targets in rules.items()]


def rules_from_meta(rows: Sequence[Sequence[Sequence[str]]]) -> Rules:
    return {tuple(row[0]): tuple(tuple(target) for target in row[1:]) for row in rows if len(row) > 1}


def find_synonyms(terms: Sequence[str], rules: Rules) -> list[SynonymMatch]:
    """Source phrases in the topic's terms, longest first from left to right, never overlapping."""
    if not rules:
        return []
    longest = max(len(source) for source in rules)
    matches: list[SynonymMatch] = []
    start = 0
    while start < len(terms):
        for length in range(min(longest, len(terms) - start), 0, -1):
            targets = rules.get(tuple(terms[start : start + length]))
            if targets:
                matches.append(SynonymMatch(start, start + length, targets))
                start += length
                break
        else:
            start += 1
    return matches
