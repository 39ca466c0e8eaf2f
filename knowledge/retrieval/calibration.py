"""The match threshold of a release, calibrated from the collection itself when nobody set one.

A namespace without golden questions still needs a trustworthy `matched`. Two kinds of evidence
need no one's help: Evergreen's built-in bilingual probe questions (probes/*.txt: weather, cooking,
sport, travel … what a knowledge base is usually not about), and pseudo-questions made from the
entries (an entry's title with a piece of one of its key sentences or its summary, that text held
out of the entry so the question is not simply copied from it). The threshold is the probes'
PROBES_REFUSED quantile (a probe scoring below 0, the coverage penalty's doing, counts as 0), estimated
with Harrell-Davis weights over every probe rather than read off one order statistic, but never
above the median pseudo-question: a knowledge base that is about cooking must still answer its own
questions. The same pseudo-questions say how crowded the collection is (how many other entries
cover a question nearly as well as its own), which sets the pack's floor relative to the best hit's
coverage (relevance.py). Measured across collections in docs/retrieval.md.

Deterministic: the same entries give the same threshold (release builds are reproducible).

Carried forward (issue 11 jitter, issue 18 cost): a build that follows a release calibrated on the same
basis (engine, analysis, ranking options, synonyms, probes) keeps that release's threshold and pack floor
without a single calibration search while at most CARRY_CHANGED_SHARE of the entries calibrated on were
added, removed or changed since; past that it calibrates again, and keeps the threshold it had when the
new one lies within BAND_ERRORS standard errors of the probes' quantile (hysteresis). The record says
which (`provenance`, `carried_from`, `calibrated_in`, `changed_since`). Measured in docs/retrieval.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from knowledge.retrieval import ENGINE_VERSION
from knowledge.retrieval.analysis import analyze_text
from knowledge.retrieval.documents import Document
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.postings import Analyze, Collect, analyze_fields
from knowledge.retrieval.ranking import SearchOptions
from knowledge.retrieval.relevance import BEST_SHARE, RELATIVE_FLOOR
from knowledge.retrieval.synonyms import rules_to_meta

# A pseudo-question's competitor: another hit scoring at least RELATIVE_FLOOR of its best one whose
# best passage holds at least CLOSE_COVERAGE of the best one's. When the median pseudo-question has
# CROWDED of them, relevance is spread over many similar entries (abstracts of one field) and the
# pack keeps every hit above the plain floors; otherwise a hit must hold BEST_SHARE of the best
# hit's coverage (docs/retrieval.md, "Packs without filler").
CLOSE_COVERAGE = 0.5
CROWDED = 2.0
CROWDING_DEPTH = 32

PROBES = Path(__file__).resolve().parent / "probes"
PROBES_REFUSED = 0.96  # the probes' quantile the threshold sits at (issue 11 asks refusal >= 0.80)
PSEUDO_QUESTIONS = 200  # entries sampled for pseudo-questions
CALIBRATION_ENTRIES = 2000  # at most this many entries in the held-out index (build cost)
MIN_TERMS = 4  # a key sentence has at least this many terms
WINDOW_WORDS = 10  # a pseudo-question takes at most this many words of the sentence...
WINDOW_HAN = 14  # ...or this many Chinese characters
# Carry a release's calibration forward while at most this share of the entries it was calibrated on
# changed (counted per build and summed, so an entry edited twice counts twice). Measured: removing
# 5 % of the entries moves pylibs' threshold by at most 0.42 and Cranfield's by 0.14 standard errors.
CARRY_CHANGED_SHARE = 0.05
# A recalibration that moves the threshold by less than this many standard errors keeps the old one.
BAND_ERRORS = 0.5
CALIBRATED = "calibrated"
CARRIED = "carried"
KEPT = "kept within the band"
_HAN = re.compile(r"[\u3400-\u9fff]")
_SENTENCE = re.compile(r"(?<=[。！？!?])|(?<=[.;:])\s+|\n\s*\n")


@cache
def probe_questions() -> tuple[str, ...]:
    """The built-in off-topic probes, English and Chinese."""
    questions: list[str] = []
    for path in sorted(PROBES.glob("*.txt")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = raw.strip()
            if line and not line.startswith("#"):
                questions.append(line)
    return tuple(questions)


@dataclass(frozen=True)
class AutomaticThreshold:
    """The threshold a build chose and the evidence, as the release records it."""

    threshold: float
    probes: int
    probes_refused: float
    pseudo_questions: int
    pseudo_matched: float
    bounded_by_pseudo_questions: bool
    crowding: float = 0.0
    pack_best_share: float = BEST_SHARE
    feedback: bool = False  # feedback_on(crowding): the threshold was calibrated ranking with it
    source: str = "automatic"
    standard_error: float = 0.0  # of the probes' quantile (probe_quantile_error)
    calibrated: float | None = None  # what this calibration found, when the band kept the old threshold
    lineage: dict[str, Any] | None = None  # calibration_record: how the record was obtained

    def to_meta(self) -> dict[str, Any]:
        values = {key: value for key, value in asdict(self).items() if key != "lineage"}
        if self.calibrated is None:
            del values["calibrated"]
        rounded = {key: round(value, 4) if isinstance(value, float) else value for key, value in values.items()}
        return {**rounded, **(self.lineage or {})}


@dataclass(frozen=True)
class Lineage:
    """What a build knows of the release it follows: that release's sequence, its public index's
    matching record (as /metrics.json shows it) and how many entries were added, removed or changed
    since. `replay`: render that very release again (its pruned files): its record is used as it is."""

    sequence: int
    matching: Mapping[str, Any]
    changed: int = 0
    replay: bool = False


def entries_changed(before: Mapping[str, str], after: Mapping[str, str]) -> int:
    """Entries added, removed or changed between two {id: content hash} maps (the containment tests
    run in C: a generator over every entry took 0.035 s a build at 100,000 entries, this 0.02)."""
    unchanged = sum(map(before.items().__contains__, after.items()))
    kept = sum(map(after.__contains__, before))
    return len(after) - unchanged + len(before) - kept


def calibration_basis(index: SearchIndex) -> str:
    """A fingerprint of all a calibration depends on besides the entries: the engine, analysis, BM25F
    parameters, ranking options (the threshold and pack floor aside), synonyms and the probes."""
    options = {
        k: v for k, v in asdict(index.options).items() if k not in ("match_threshold", "pack_best_share", "feedback")
    }
    facts = {
        "engine": ENGINE_VERSION,
        "analyzer": asdict(index.analyzer),
        "params": index.params.to_meta(),
        "options": options,
        "synonyms": rules_to_meta(index.synonyms),
        "probes": probe_questions(),
    }
    return hashlib.blake2b(json.dumps(facts, sort_keys=True, default=str).encode(), digest_size=8).hexdigest()


def calibration_record(*, sequence: int, entries: int, basis: str, provenance: str = CALIBRATED) -> dict[str, Any]:
    """The provenance of a calibration run by the build of release `sequence` over `entries` entries."""
    return {
        "provenance": provenance,
        "calibrated_in": sequence,
        "calibrated_entries": entries,
        "changed_since": 0,
        "basis": basis,
    }


def carried(lineage: Lineage | None, *, source: str, basis: str) -> dict[str, Any] | None:
    """The followed release's record, carried into this build, or None when calibration must run:
    no record, another source or basis, or more than CARRY_CHANGED_SHARE of the entries changed."""
    if lineage is None:
        return None
    before = dict(lineage.matching)
    if before.get("source") != source or before.get("basis") != basis:
        return None
    if lineage.replay:
        return before
    calibrated_on = int(before.get("calibrated_entries") or 0)
    changed = int(before.get("changed_since") or 0) + lineage.changed
    if changed > CARRY_CHANGED_SHARE * max(calibrated_on, 1):
        return None
    return {**before, "provenance": CARRIED, "carried_from": lineage.sequence, "changed_since": changed}


def _stable_order(documents: Sequence[Document]) -> list[int]:
    """Positions in an order that depends only on the entries' IDs (reproducible sampling)."""
    key = [hashlib.blake2b(d.id.encode(), digest_size=8).digest() for d in documents]
    return sorted(range(len(documents)), key=key.__getitem__)


def _sentences(text: str) -> list[str]:
    parts = (re.sub(r"\s+", " ", part).strip() for part in _SENTENCE.split(text))
    return [part for part in parts if part]


def _window(sentence: str, pick: int) -> str:
    """A piece of a sentence, about as long as a question; `pick` chooses where it starts."""
    if len(_HAN.findall(sentence)) * 3 > len(sentence):
        if len(sentence) <= WINDOW_HAN:
            return sentence
        start = pick % (len(sentence) - WINDOW_HAN + 1)
        return sentence[start : start + WINDOW_HAN]
    words = sentence.split()
    if len(words) <= WINDOW_WORDS:
        return sentence
    start = pick % (len(words) - WINDOW_WORDS + 1)
    return " ".join(words[start : start + WINDOW_WORDS])


def _pseudo_question(document: Document, index: SearchIndex, pick: int) -> tuple[str, Document] | None:
    """A question from the document and the document without the text it was made of."""
    candidates = [s for s in _sentences(document.body) if len(analyze_text(s, index.analyzer)) >= MIN_TERMS]
    if document.summary.strip() and pick % 3 == 0:
        return f"{document.title} {_window(document.summary, pick)}".strip(), replace(document, summary="")
    if not candidates:
        return None
    # A key sentence: one of the three with the most terms (the most to say about the entry).
    candidates.sort(key=lambda s: -len(set(analyze_text(s, index.analyzer))))
    sentence = candidates[pick % min(3, len(candidates))]
    question = f"{document.title} {_window(sentence, pick)}".strip()
    return question, replace(document, body=document.body.replace(sentence, " "))


def pseudo_questions(index: SearchIndex, documents: Sequence[Document]) -> tuple[list[Document], list[str]]:
    """A held-out calibration collection (a sample of the entries) and the pseudo-questions on it."""
    order = _stable_order(documents)
    corpus = {position: documents[position] for position in order[:CALIBRATION_ENTRIES]}
    questions: list[str] = []
    for pick, position in enumerate(order[:PSEUDO_QUESTIONS]):
        made = _pseudo_question(documents[position], index, pick)
        if made is not None:
            questions.append(made[0])
            corpus[position] = made[1]
    return [corpus[position] for position in sorted(corpus)], questions


def gate_scores(index: SearchIndex, questions: Sequence[str]) -> list[float]:
    """Each question's gate score with the gate open (-inf: no hit, or below the coverage floor)."""
    ungated = replace(index.options, match_threshold=-math.inf, expand=False)
    scores = []
    for question in questions:
        ranking = index.search(question, options=ungated)
        scores.append(-math.inf if ranking.gate_score is None else float(ranking.gate_score))
    return scores


def _beta_cdf(points: np.ndarray, a: float, b: float, grid: int = 4096) -> np.ndarray:
    """The Beta(a, b) distribution function at `points` (midpoint rule; no SciPy needed)."""
    u = (np.arange(grid) + 0.5) / grid
    log_pdf = (a - 1) * np.log(u) + (b - 1) * np.log1p(-u) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    cdf = np.concatenate([[0.0], np.cumsum(np.exp(log_pdf))])
    return np.asarray(np.interp(points, np.linspace(0.0, 1.0, grid + 1), cdf / cdf[-1]))


def _hd_weights(n: int, share: float) -> np.ndarray:
    return np.diff(_beta_cdf(np.arange(n + 1) / n, share * (n + 1), (1 - share) * (n + 1)))


def _probe_values(scores: Sequence[float]) -> np.ndarray:
    return np.sort(np.maximum(np.where(np.isfinite(scores), scores, 0.0), 0.0))


def probe_quantile_error(scores: Sequence[float], share: float) -> float:
    """The standard error of probe_quantile, Maritz-Jarrett: the same weights' second moment,
    sqrt(sum w x^2 - (sum w x)^2). What a release's threshold would move by when the probes' scores
    are resampled, so a recalibration that moves less than a few of these is noise."""
    if not scores:
        return 0.0
    ordered = _probe_values(scores)
    weights = _hd_weights(len(ordered), share)
    mean = float(weights @ ordered)
    return math.sqrt(max(float(weights @ (ordered * ordered)) - mean * mean, 0.0))


def probe_quantile(scores: Sequence[float], share: float) -> float:
    """The `share` quantile of the probes' gate scores, Harrell-Davis: a weighted mean of every order
    statistic (weights from Beta((n+1)·share, (n+1)·(1-share))) instead of the one at the share.

    Most probes score below 0 (the coverage penalty; counted as 0: the threshold's own floor), so the plain
    order statistic jumps between 0 and the few finite scores when one probe changes (measured:
    bootstrap 5th percentile of Cranfield's matched 0.35 with it, 0.65 with this estimator).
    """
    if not scores:
        return 0.0
    ordered = _probe_values(scores)
    return float(_hd_weights(len(ordered), share) @ ordered)


def crowding(index: SearchIndex, questions: Sequence[str]) -> float:
    """The median number of close competitors of a question's best hit (see CLOSE_COVERAGE)."""
    ungated = replace(index.options, match_threshold=-math.inf, expand=False, packing="seed")
    counts = []
    for question in questions:
        ranking = index.search(question, options=ungated)
        hits = [hit for hit, _ in zip(ranking, range(CROWDING_DEPTH), strict=False)]
        if ranking.mode != "match" or len(hits) < 2:
            continue
        positions = np.array([hit.position for hit in hits], dtype=np.int64)
        passages, _ = index.coverage_at(index.plan(question), positions)
        top_score, top_passage = hits[0].score, float(passages[0])
        counts.append(
            sum(
                1
                for hit, passage in zip(hits[1:], passages[1:].tolist(), strict=True)
                if hit.score >= RELATIVE_FLOOR * top_score and passage >= CLOSE_COVERAGE * top_passage
            )
        )
    return float(np.median(counts)) if counts else 0.0


def pack_best_share(crowded: float) -> float:
    """The floor relative to the best hit's coverage for a collection this crowded."""
    return 0.0 if crowded >= CROWDED else BEST_SHARE


def feedback_on(crowded: float) -> bool:
    """Whether a collection this crowded ranks with feedback (feedback.py): where relevance is spread
    over many similar entries, as the pack floor relative to the best hit is off there."""
    return crowded >= CROWDED


def _ranking_with(index: SearchIndex, feedback: bool) -> SearchIndex:
    return (
        index.with_options(replace(index.options, feedback=feedback)) if feedback != index.options.feedback else index
    )


def held_out(
    index: SearchIndex,
    documents: Sequence[Document],
    analyze: Analyze = analyze_fields,
    collect: Collect | None = None,
) -> tuple[SearchIndex, list[str]] | None:
    """The held-out calibration index and its pseudo-questions (None: the entries make none)."""
    corpus, questions = pseudo_questions(index, documents)
    if not questions:
        return None
    compiled = SearchIndex.compile(
        corpus,
        analyzer=index.analyzer,
        params=index.params,
        options=SearchOptions(ranker="bm25f"),
        analyze=analyze,
        collect=collect,
    ).with_synonyms(index)
    return compiled, questions


def threshold_automatic(
    index: SearchIndex,
    documents: Sequence[Document],
    *,
    probes: Sequence[str] | None = None,
    analyze: Analyze = analyze_fields,
    collect: Collect | None = None,
    keep: float | None = None,
) -> AutomaticThreshold:
    """The threshold for `index` (compiled from `documents`) from probes and held-out pseudo-questions,
    and the pack's floor relative to the best hit from how crowded the pseudo-questions find it.
    `keep`: the threshold the release this build follows served with; it stays when the new one lies
    within BAND_ERRORS standard errors of it (`calibrated` records the new one then)."""
    probes = probe_questions() if probes is None else probes
    calibration = held_out(index, documents, analyze, collect)
    crowded = crowding(*calibration) if calibration is not None else 0.0
    # The threshold is calibrated ranking as the release will serve: with feedback when crowded.
    feedback = feedback_on(crowded) and index.options.ranker == "bm25f"
    probe_scores = gate_scores(_ranking_with(index, feedback), probes)
    threshold = probe_quantile(probe_scores, PROBES_REFUSED)
    error = probe_quantile_error(probe_scores, PROBES_REFUSED)
    pseudo: list[float] = []
    if calibration is not None:
        pseudo = gate_scores(_ranking_with(calibration[0], feedback), calibration[1])
    bounded = False
    if pseudo:
        median = float(np.median(pseudo))
        if median < threshold:
            threshold, bounded = max(median, 0.0), True
    threshold = math.ceil(threshold * 10_000) / 10_000
    found: float | None = None
    if keep is not None and abs(threshold - keep) <= BAND_ERRORS * error and threshold != keep:
        threshold, found = keep, threshold
    return AutomaticThreshold(
        threshold=threshold,
        probes=len(probe_scores),
        probes_refused=float(np.mean([s < threshold for s in probe_scores])) if probe_scores else 0.0,
        pseudo_questions=len(pseudo),
        pseudo_matched=float(np.mean([s >= threshold for s in pseudo])) if pseudo else 0.0,
        bounded_by_pseudo_questions=bounded,
        crowding=crowded,
        pack_best_share=pack_best_share(crowded),
        feedback=feedback,
        standard_error=error,
        calibrated=found,
    )


def packing_automatic(
    index: SearchIndex,
    documents: Sequence[Document],
    *,
    analyze: Analyze = analyze_fields,
    collect: Collect | None = None,
) -> dict[str, float]:
    """The pack floor and feedback alone, for a release whose threshold is the namespace's own."""
    calibration = held_out(index, documents, analyze, collect)
    crowded = crowding(*calibration) if calibration is not None else 0.0
    return {"crowding": crowded, "pack_best_share": pack_best_share(crowded), "feedback": feedback_on(crowded)}


MATCHING_SOURCES = {
    "automatic": "calibrated automatically from the entries and Evergreen's off-topic probes",
    "namespace": "the namespace's own threshold",
    "none": "no threshold (seed ranker)",
}


def matching_summary(matching: dict[str, Any] | None) -> str:
    """One line for the admin: threshold, where it came from and what it does on the evidence."""
    if not matching:
        return "Not recorded (built before releases calibrated their threshold)."
    source = str(matching.get("source", ""))
    line = f"{matching.get('threshold')} — {MATCHING_SOURCES.get(source, source)}"
    if source == "automatic":
        line += (
            f": refuses {matching.get('probes_refused', 0):.0%} of {matching.get('probes', 0)} probe questions, "
            f"matches {matching.get('pseudo_matched', 0):.0%} of {matching.get('pseudo_questions', 0)} "
            "pseudo-questions held out from the entries"
        )
        if matching.get("bounded_by_pseudo_questions"):
            line += " (lowered so that at least half of the pseudo-questions match)"
    elif matching.get("note"):
        line += f": {matching['note']}"
    line += provenance_summary(matching)
    if "pack_best_share" in matching:
        share = float(matching["pack_best_share"])
        line += (
            f"; packs keep hits holding {share:.0%} of the best hit's coverage"
            if share
            else "; packs keep every hit above the plain floors"
        ) + f" (crowding {matching.get('crowding', 0)})"
    if matching.get("feedback"):
        line += "; ranks with feedback from the best entries (a crowded collection)"
    return line


def provenance_summary(matching: dict[str, Any]) -> str:
    """Where the record came from: calibrated by this build, carried from an earlier release, or
    recalibrated and kept within the band ("" for releases built before calibration was carried)."""
    provenance = matching.get("provenance")
    if not provenance:
        return ""
    calibrated_in = matching.get("calibrated_in")
    changed = f"{matching.get('changed_since', 0)} of {matching.get('calibrated_entries', 0)} entries changed since"
    if provenance == CARRIED:
        return (
            f"; carried from release #{matching.get('carried_from')} (calibrated in #{calibrated_in}; {changed}, "
            f"recalibrated past {CARRY_CHANGED_SHARE:.0%})"
        )
    if provenance == KEPT:
        return (
            f"; recalibrated in release #{calibrated_in}, which found {matching.get('calibrated')}: within "
            f"{BAND_ERRORS} standard errors ({matching.get('standard_error')}) of the threshold it had, so it stays"
        )
    return f"; calibrated in release #{calibrated_in} on {matching.get('calibrated_entries', 0)} entries"
