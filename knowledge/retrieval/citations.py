"""Citations in an agent's answer: the [EG-202] markers, the sentence each backs, the figures it quotes.

Pure functions for POST /api/verify and MCP verify_citations. A marker may hold several IDs
([EG-001, EG-002]). A marker standing alone after a sentence's end ("… 2000 tokens. [EG-202]")
backs the sentence before it. Figures are runs of digits with inner separators (2,000 · 0.85 ·
2026-11-30 gives 2026, 11 and 30); a figure is quoted verbatim when the same digits occur in the
entry not inside a longer number (seed rule: figures are never rewritten). Text is NFKC-folded first,
so full-width digits count as the same figure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_ID = r"[A-Za-z][A-Za-z0-9]{0,15}-\d{1,12}"
_MARKER = re.compile(rf"\[\s*({_ID}(?:\s*[,，、;；]\s*{_ID})*)\s*\]")
_ID_IN_MARKER = re.compile(_ID)
# ASCII neighbours only: Chinese text puts figures right against its characters (为2000个).
# Digits glued to Latin letters (MCP2, v2) or an ID's dash (EG-7) are names, not figures.
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.,])(?<![A-Za-z]-)\d+(?:[.,]\d+)*(?![A-Za-z0-9_])")
# A list item's number ("1. ", "2) ") at the start of a line is numbering, not a figure.
_LIST_NUMBER = re.compile(r"(?m)^\s*\d+[.)]\s")
_SENTENCE_END = re.compile(r"[。！？；!?;\n]|\.(?=\s|$)")
SENTENCE_MAX = 300


@dataclass(frozen=True, slots=True)
class CitationFound:
    id: str  # upper case
    marker: str
    start: int
    end: int
    sentence: str  # the text the marker backs, markers removed
    figures: tuple[str, ...]  # the figures of that sentence


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def figures_in(text: str) -> tuple[str, ...]:
    """The figures of a text, in order, without list numbering and without the digits of citation IDs."""
    text = _MARKER.sub(" ", text)
    text = _LIST_NUMBER.sub(" ", text)
    return tuple(dict.fromkeys(match.group() for match in _NUMBER.finditer(text)))


def citations_find(answer: str) -> list[CitationFound]:
    """Every cited ID in order of appearance, with the sentence it backs and that sentence's figures."""
    text = fold(answer)
    found: list[CitationFound] = []
    previous_text = ""
    for start, end in _sentences(text):
        chunk = text[start:end]
        markers = list(_MARKER.finditer(chunk))
        if not markers:
            previous_text = chunk
            continue
        own = _MARKER.sub(" ", chunk)
        backed = own if any(ch.isalnum() for ch in own) else previous_text
        sentence = " ".join(_MARKER.sub(" ", backed).split())[:SENTENCE_MAX]
        figures = figures_in(backed)
        for marker in markers:
            for match in _ID_IN_MARKER.finditer(marker.group(1)):
                found.append(
                    CitationFound(
                        id=match.group().upper(),
                        marker=marker.group(),
                        start=start + marker.start(),
                        end=start + marker.end(),
                        sentence=sentence,
                        figures=figures,
                    )
                )
        if any(ch.isalnum() for ch in own):
            previous_text = chunk
    return found


def figure_appears(figure: str, text: str) -> bool:
    """Whether `figure` occurs in `text` as a whole number (2000 is not in 12000 nor in 2000.5)."""
    pattern = rf"(?<![\d])(?<![\d][.,]){re.escape(figure)}(?![\d])(?![.,]\d)"
    return re.search(pattern, fold(text)) is not None


def figures_missing(figures: Sequence[str], texts: Iterable[str]) -> list[str]:
    """The figures that occur in none of the texts (the cited entries of one sentence)."""
    haystacks = list(texts)
    return [figure for figure in figures if not any(figure_appears(figure, text) for text in haystacks)]
