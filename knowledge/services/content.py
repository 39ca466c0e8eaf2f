"""A version's content: normalised, with its token cost and content hash, and its references checked."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

import orjson

from knowledge.errors import InvalidInputError
from knowledge.ids import ID_PATTERN
from knowledge.models import Entry, EntryVersion, Namespace
from knowledge.retrieval.paths import globs_normalize
from knowledge.retrieval.tokens import entry_tokens
from knowledge.selectors.layers import layers_below

OVERRIDES_NOT_AN_ID = "overrides must be one entry ID of a base namespace, such as AC-101."
OVERRIDES_SELF = "{id} cannot override itself: overrides names the entry of a base namespace this one replaces."
OVERRIDES_NO_BASE_ENTRY = (
    "overrides: {id} is no live entry of a namespace this one builds on ({bases}); name a published entry of a base"
)
OVERRIDES_EXAMPLE = ", such as {example}"
OVERRIDES_NO_BASES = (
    "overrides: {id} cannot be used: this namespace builds on no other namespace, so it has nothing to override; "
    "remove overrides"
)
LINK_NOT_AN_ID = "links: “{value}” is not an entry ID (such as EG-201)."
# How much one entry may hold (QA: a 1 MB summary and 20,000 tags were taken, and each page that showed
# them ran the safety scan over all of it). An entry is a short fact; these leave room for long ones.
TITLE_MAX = 500
SUMMARY_MAX = 2_000
BODY_MAX = 100_000
LIST_LIMITS = {"tags": (50, 80), "aliases": (50, 500), "links": (100, 32)}  # items, characters each
TOO_LONG = "“{field}” is longer than {limit:,} characters."
TOO_MANY = "“{field}” holds more than {limit} items."
ITEM_TOO_LONG = "“{field}” has an item longer than {limit} characters."
LINK_FOREIGN = "links: {id} is not an ID of this namespace or of one it builds on (IDs starting {prefixes})."
THEME_UNKNOWN = "entries: {ids} is no entry of this namespace or of one it builds on; a theme lists existing entries."
THEME_RETIRED = "entries: {ids} has been retired; agents are no longer served it, so a theme cannot list it."
CONTROL_CHARACTER = "{field} contains the control character U+{code:04X}; remove it."
NONCHARACTER = "{field} contains the noncharacter U+{code:04X}; remove it."
LONE_SURROGATE = "{field} contains the lone surrogate U+{code:04X}, which is not text; remove it."
# QA: a title's U+0001 or a body's U+FFFF passed review unseen and was served raw (llms.txt, <title>, MCP).
# Refused: C0 and C1 controls (category Cc) in a line; in a summary or body C0 controls but tab and line
# breaks, and DEL (C1 controls stay there: documents decoded with the wrong charset carry them, as a
# docstring of Django's does, and the review diff shows them by code point); everywhere the 66
# noncharacters and lone surrogates (PostgreSQL and UTF-8 cannot hold NUL or a surrogate).
_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(17)
)
_REFUSED_IN_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff{_NONCHARACTERS}]")
REFUSED_IN_TEXT = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff{_NONCHARACTERS}]")
MULTILINE_FIELDS = frozenset({"summary", "body"})


class ContentReferenceError(InvalidInputError):
    """A link or override that points nowhere it may; `code` (overrides.self, links.foreign …) names the rule."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


def overridden_id_normalize(value: str) -> str:
    """The ID an override names, upper-cased; raises ValueError when it is not an entry ID."""
    text = value.strip().upper()
    if text and not ID_PATTERN.match(text):
        raise ValueError(OVERRIDES_NOT_AN_ID)
    return text


def links_normalize(values: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Linked IDs, upper-cased and each once; raises ValueError naming the first that is not an entry ID."""
    links = tuple(dict.fromkeys(value.strip().upper() for value in values if value.strip()))
    for link in links:
        if not ID_PATTERN.match(link):
            raise ValueError(LINK_NOT_AN_ID.format(value=link[:40]))
    return links


def reference_prefixes(*, namespace: Namespace) -> list[str]:
    """The ID prefixes a namespace's content may refer to: its own, then its layers' (nearest first)."""
    return [namespace.prefix, *(base.prefix for base in layers_below(namespace=namespace))]


def content_references_check(
    *,
    namespace: Namespace,
    public_id: str | None,
    content: VersionContent,
    below: Sequence[Namespace] | None = None,
) -> None:
    """Refuse links and overrides that can never resolve (issue 16 §1: an override names a live base entry).

    A link may name an entry not published yet (review warns about it), but only with a prefix the
    namespace serves; an override must name a live entry of a layer below, never the entry itself.
    `below`: the namespace's layers below, when the caller checks many lines (layers_below).
    """
    references_check(
        namespace=namespace, public_id=public_id, links=content.links, overrides=content.overrides, below=below
    )


def references_check(
    *,
    namespace: Namespace,
    public_id: str | None,
    links: Sequence[str],
    overrides: str,
    below: Sequence[Namespace] | None = None,
) -> None:
    """content_references_check of normalised links and overrides alone: a form checks them before the rest
    of the content is whole, so its refusal is the field's error (`code`'s first part names the field)."""
    below = layers_below(namespace=namespace) if below is None else below
    prefixes = [namespace.prefix, *(base.prefix for base in below)]
    for link in links:
        match = ID_PATTERN.match(link)
        if match is None or match["prefix"] not in prefixes:
            raise ContentReferenceError(
                LINK_FOREIGN.format(id=link, prefixes=", ".join(f"{p}-" for p in prefixes)), code="links.foreign"
            )
    if not overrides:
        return
    if overrides == public_id:
        raise ContentReferenceError(OVERRIDES_SELF.format(id=overrides), code="overrides.self")
    live = Entry.objects.filter(
        namespace__in=below, public_id=overrides, retired_at__isnull=True, live_version__isnull=False
    ).exists()
    if not live:
        raise ContentReferenceError(_no_base_entry(overrides, below), code="overrides.no_base_entry")


def _no_base_entry(refused: str, below: Sequence[Namespace]) -> str:
    """Why an override was refused; the example named is a real live entry of a base, never the refused ID (QA:
    "name a published entry of a base, such as AC-101" when AC-101 was refused, or there was no base at all)."""
    if not below:
        return OVERRIDES_NO_BASES.format(id=refused)
    message = OVERRIDES_NO_BASE_ENTRY.format(id=refused, bases=", ".join(base.slug for base in below))
    for base in below:  # in priority order: the first base's first live entry
        example = (
            Entry.objects.filter(namespace=base, retired_at__isnull=True, live_version__isnull=False)
            .exclude(public_id=refused)
            .order_by("number")
            .values_list("public_id", flat=True)
            .first()
        )
        if example:
            return message + OVERRIDES_EXAMPLE.format(example=example) + "."
    return message + "."


def theme_entries_check(*, namespace: Namespace, ids: Sequence[str]) -> None:
    """Refuse a theme listing an ID that is no entry of the namespace or a base, or a retired one.

    The theme's file lists only what the release serves, so such an ID passed review and then vanished
    from it without a word (QA). An entry still in its first draft may be listed: it is published, or
    it is not served, like any entry. One retired after the theme's approval leaves the theme with it.
    """
    if not ids:
        return
    below = layers_below(namespace=namespace)
    rows = Entry.objects.filter(namespace__in=[namespace, *below], public_id__in=ids)
    retired_at = dict(rows.values_list("public_id", "retired_at"))
    unknown = [item for item in ids if item not in retired_at]
    if unknown:
        raise ContentReferenceError(THEME_UNKNOWN.format(ids=", ".join(unknown)), code="entries.unknown")
    retired = [item for item in ids if retired_at[item] is not None]
    if retired:
        raise ContentReferenceError(THEME_RETIRED.format(ids=", ".join(retired)), code="entries.retired")


class ContentSizeError(ValueError):
    """A field too long or holding too many items; `field` names it."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


def content_sizes_check(*, title: str, summary: str, body: str, **lists: Sequence[str]) -> None:
    """Raise ContentSizeError for the first field past its limit (TITLE_MAX … LIST_LIMITS)."""
    texts = (("title", title, TITLE_MAX), ("summary", summary, SUMMARY_MAX), ("body", body, BODY_MAX))
    for field, text, limit in texts:
        if len(text) > limit:
            raise ContentSizeError(TOO_LONG.format(field=field, limit=limit), field=field)
    for field, items in lists.items():
        most, longest = LIST_LIMITS[field]
        if len(items) > most:
            raise ContentSizeError(TOO_MANY.format(field=field, limit=most), field=field)
        if any(len(item) > longest for item in items):
            raise ContentSizeError(ITEM_TOO_LONG.format(field=field, limit=longest), field=field)


class ContentTextError(InvalidInputError, ValueError):
    """A character no entry may hold (CONTROL_CHARACTER …); `field` names the field. A ValueError as the size
    checks are, so import lines report it, and a ServiceError, so the management API answers 422 invalid."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


def content_text_problem(field: str, value: str | Sequence[str]) -> str | None:
    """Why `field` (a text, or a list of texts such as tags) cannot be stored, or None.

    Checked on the text as sent, before normalising: splitting aliases on whitespace would quietly turn
    U+001F into a space, and strip() would drop one at a title's end."""
    refused = REFUSED_IN_TEXT if field in MULTILINE_FIELDS else _REFUSED_IN_LINE
    for text in (value,) if isinstance(value, str) else value:
        found = refused.search(text)
        if found is None:
            continue
        code = ord(found.group())
        if 0xD800 <= code <= 0xDFFF:
            return LONE_SURROGATE.format(field=field, code=code)
        template = CONTROL_CHARACTER if code <= 0x9F else NONCHARACTER
        return template.format(field=field, code=code)
    return None


def content_text_check(*, title: str, summary: str, body: str, **lists: Sequence[str]) -> None:
    """Raise ContentTextError for the first field holding a character no entry may hold (see
    content_text_problem); every writer builds its content through VersionContent.build, which calls this."""
    for field, value in (("title", title), ("summary", summary), ("body", body), *lists.items()):
        problem = content_text_problem(field, value)
        if problem is not None:
            raise ContentTextError(problem, field=field)


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
        """Normalised content; raises ValueError naming a field too long or too full, holding a control character
        (ContentTextError), a path glob or an overridden ID that cannot be used (links are checked where
        content is written: content_references_check, so stored content always rebuilds)."""
        content_sizes_check(title=title, summary=summary, body=body, tags=tags, aliases=aliases, links=links)
        content_text_check(title=title, summary=summary, body=body, tags=tags, aliases=aliases)
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

    @classmethod
    def of(cls, version: EntryVersion, **changes: object) -> VersionContent:
        """The content `version` holds, with `changes` (fields of build) made: every field the changes do not
        name is kept."""
        fields = {field.name: getattr(version, field.name) for field in dataclasses.fields(cls)}
        return cls.build(**{**fields, **changes})

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
