"""Derived fields of a version's content: token cost and content hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

import orjson

from knowledge.ids import ID_PATTERN
from knowledge.retrieval.paths import globs_normalize
from knowledge.retrieval.tokens import entry_tokens

OVERRIDES_NOT_AN_ID = "overrides must be one entry ID of a base namespace, such as AC-101."


def overridden_id_normalize(value: str) -> str:
    """The ID an override names, upper-cased; raises ValueError when it is not an entry ID."""
    text = value.strip().upper()
    if text and not ID_PATTERN.match(text):
        raise ValueError(OVERRIDES_NOT_AN_ID)
    return text


@dataclass(frozen=True, slots=True)
class VersionContent:
    """The editable content of a version, normalised."""

    title: str
    summary: str
    body: str
    tags: tuple[str, ...]
    confidence: Decimal
    links: tuple[str, ...]
    updated: date
    aliases: tuple[str, ...] = ()
    sensitivity: str = "public"
    review_by: date | None = None
    valid_until: date | None = None
    paths: tuple[str, ...] = ()
    overrides: str = ""

    @classmethod
    def build(
        cls,
        *,
        title: str,
        summary: str = "",
        body: str,
        tags: list[str] | tuple[str, ...] = (),
        confidence: Decimal | float | str = Decimal("0.90"),
        links: list[str] | tuple[str, ...] = (),
        updated: date,
        aliases: list[str] | tuple[str, ...] = (),
        sensitivity: str = "public",
        review_by: date | None = None,
        valid_until: date | None = None,
        paths: list[str] | tuple[str, ...] = (),
        overrides: str | None = "",
    ) -> VersionContent:
        """Normalised content; raises ValueError naming a path glob or an overridden ID that cannot be used."""
        return cls(
            title=title.strip(),
            summary=summary.strip(),
            body=body.strip(),
            tags=tuple(dict.fromkeys(t.strip() for t in tags if t.strip())),
            confidence=Decimal(str(confidence)).quantize(Decimal("0.01")),
            links=tuple(dict.fromkeys(link.strip().upper() for link in links if link.strip())),
            updated=updated,
            aliases=tuple(dict.fromkeys(" ".join(a.split()) for a in aliases if a.strip())),
            sensitivity=sensitivity or "public",
            review_by=review_by,
            valid_until=valid_until,
            paths=globs_normalize(paths),
            overrides=overridden_id_normalize(overrides or ""),
        )

    @property
    def tokens(self) -> int:
        return entry_tokens(title=self.title, summary=self.summary, body=self.body)

    @property
    def content_hash(self) -> str:
        canonical = {
            "title": self.title,
            "summary": self.summary,
            "body": self.body,
            "tags": list(self.tags),
            "confidence": str(self.confidence),
            "links": list(self.links),
            "updated": self.updated.isoformat(),
        }
        if self.aliases:  # only when present: versions without aliases keep the hash they always had
            canonical["aliases"] = list(self.aliases)
        # Likewise the trust fields (issue 12): reviewed with the content, part of its hash when set.
        if self.sensitivity != "public":
            canonical["sensitivity"] = self.sensitivity
        if self.valid_until is not None:
            canonical["validUntil"] = self.valid_until.isoformat()
        if self.paths:  # issue 16: where the entry applies is reviewed content too
            canonical["paths"] = list(self.paths)
        if self.overrides:  # and which base entry it replaces
            canonical["overrides"] = self.overrides
        return hashlib.sha256(orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS)).hexdigest()

    def model_fields(self) -> dict[str, object]:
        return {
            "title": self.title,
            "summary": self.summary,
            "body": self.body,
            "tags": list(self.tags),
            "confidence": self.confidence,
            "links": list(self.links),
            "aliases": list(self.aliases),
            "updated": self.updated,
            "sensitivity": self.sensitivity,
            "review_by": self.review_by,
            "valid_until": self.valid_until,
            "paths": list(self.paths),
            "overrides": self.overrides,
            "tokens": self.tokens,
            "content_hash": self.content_hash,
        }
