"""Entries like the one being written, from the serving release's index: the editor sees them while typing a title."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from knowledge.models import Namespace
from knowledge.retrieval.analysis import AnalyzerConfig, analyze_text
from knowledge.selectors.pinned import release_load

SIMILAR_SHOWN = 5
NEAR_DUPLICATE = 0.8  # share of title terms in common (Jaccard) from which a title counts as a near duplicate


@dataclass(frozen=True, slots=True)
class SimilarEntry:
    id: str
    title: str
    near_duplicate: bool


def _overlap(asked: set[str], title: str, analyzer: AnalyzerConfig) -> float:
    terms = set(analyze_text(title, analyzer))
    return len(asked & terms) / len(asked | terms) if asked | terms else 0.0


def similar_entries(*, namespace: Namespace, title: str, exclude: str = "") -> list[SimilarEntry]:
    """The engine's best matches for the title among live entries (none before the first release); a title whose
    terms are nearly those of an entry's title or alias is flagged as a near duplicate."""
    release = namespace.active_release
    if release is None or not title.strip():
        return []
    loaded = release_load(release)
    ranking = loaded.index.search(title)
    if ranking.mode not in ("match", "weak"):
        return []
    asked = set(analyze_text(title, loaded.index.analyzer))
    found: list[SimilarEntry] = []
    for hit in islice(ranking, SIMILAR_SHOWN + 1):
        entry_id = loaded.index.public_id(hit.position)
        record = loaded.entry(entry_id)
        if record is None or entry_id == exclude:
            continue
        overlap = max(_overlap(asked, name, loaded.index.analyzer) for name in (record.title, *record.aliases))
        found.append(SimilarEntry(entry_id, record.title, overlap >= NEAR_DUPLICATE))
    return found[:SIMILAR_SHOWN]
