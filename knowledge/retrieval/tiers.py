"""Who reads which entries of a release, and which entries a pack may hold (issue 12 §4 and §6).

A release is built once and read at three clearances. Public artifacts (pages, llms.txt,
llms-full.txt, context.json, sitemap, JSON-LD, metrics) are rendered from the public view only.
Each clearance that sees more than the one below it gets its own compiled index, so a caller's
ranking is computed over exactly the entries it may read (filter before ranking: no score, idf or
hit count depends on text it cannot see).

An entry past its valid-until date stays readable by ID (marked stale) but leaves the packs: it is
not in any index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from operator import attrgetter

from knowledge.retrieval.contract.records import INTERNAL, PUBLIC, RESTRICTED, clears
from knowledge.retrieval.contract.shapes import is_stale
from knowledge.retrieval.snapshot import EntryRecord, Snapshot, without_dead_links

LEVELS = (PUBLIC, INTERNAL, RESTRICTED)
PUBLIC_INDEX = "search.index"
PROTECTED_JSON = "protected.json"  # internal artifact: the non-public entries and tombstones (never served)


def index_name(level: str) -> str:
    return PUBLIC_INDEX if level == PUBLIC else f"search.{level}.index"


# Artifacts no route serves: the indexes, protected.json and site.json (what context.json leaves out).
INTERNAL_ARTIFACTS = frozenset({*(index_name(level) for level in LEVELS), PROTECTED_JSON, "site.json"})


def visible(snapshot: Snapshot, clearance: str) -> Snapshot:
    """The snapshot as a caller with `clearance` may read it (links to hidden entries dropped)."""
    readable = frozenset(level for level in LEVELS if clears(clearance, level))  # once, not per entry
    if snapshot.levels <= readable:
        return snapshot
    entries = tuple(e for e in snapshot.entries if e.sensitivity in readable)
    tombstones = tuple(t for t in snapshot.tombstones if t.sensitivity in readable)
    if len(entries) == len(snapshot.entries) and len(tombstones) == len(snapshot.tombstones):
        return snapshot
    return replace(snapshot, entries=without_dead_links(entries), tombstones=tombstones)


def tier_levels(snapshot: Snapshot) -> tuple[str, ...]:
    """The clearances whose view differs from the one below: public always, then each level in use."""
    return tuple(level for level in LEVELS if level == PUBLIC or level in snapshot.levels)


def tier_for(clearance: str, levels: tuple[str, ...]) -> str:
    """The widest tier a clearance may read (a tier with nothing new above public is never needed)."""
    return max((level for level in levels if clears(clearance, level)), key=LEVELS.index, default=PUBLIC)


def expired(entry: EntryRecord, *, revision: str) -> bool:
    """Past its valid-until date on the release's revision date (issue 12 §6)."""
    return expired_on(entry.valid_until, revision=revision)


def expired_on(valid_until: str | None, *, revision: str) -> bool:
    """Whether an entry valid until `valid_until` (None: for ever) has expired on `revision`."""
    return valid_until is not None and valid_until < revision


_VALID_UNTIL = attrgetter("valid_until")


def packable(entries: Sequence[EntryRecord], *, revision: str) -> Sequence[EntryRecord]:
    """The entries a pack may hold: every one but those past valid-until (index positions follow this order).

    `entries` itself when none has expired, so a served release's entry table stays unparsed."""
    dated = [day for day in map(_VALID_UNTIL, entries) if day is not None]  # one C pass, few are dated
    if not dated or min(dated) >= revision:
        return entries
    return tuple(e for e in entries if not expired(e, revision=revision))


def freshness_counts(entries: Sequence[EntryRecord], *, revision: str) -> dict[str, int]:
    """For metrics: how many entries are stale (past review-by, or `updated` over a year old) and expired."""
    by_date: dict[str, bool] = {}  # is_stale of each `updated`: entries share a few hundred dates
    stale = expired_count = 0
    for entry in entries:
        review_by, valid_until = entry.review_by, entry.valid_until
        if review_by is not None and review_by < revision:
            stale += 1
        else:
            old = by_date.get(entry.updated)
            if old is None:
                old = by_date[entry.updated] = is_stale(entry.updated, revision=revision)
            stale += old
        expired_count += valid_until is not None and valid_until < revision  # expired_on
    return {"entries": len(entries), "stale": stale, "expired": expired_count}
