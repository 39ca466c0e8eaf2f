"""The agent-facing shapes: an entry (in ``context.json``, served alone, packed), its citation, a tombstone,
an unknown ID, a context pack (seed §4) and the whole knowledge base (``context.json``, seed §10).

Each shape lists its fields once; ``Shape.json`` builds what agents receive and ``Shape.schema`` the
JSON Schema that REST's OpenAPI, MCP's ``outputSchema`` and ``/schemas/knowledge.schema.json`` use.
Adding a field is one line here (plus tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Final

import orjson

from knowledge.retrieval.contract.fields import (
    BOOLEAN,
    DATE,
    DATE_TIME,
    ID,
    INTEGER,
    NUMBER,
    SHA256,
    STRING,
    URI,
    Field,
    Shape,
    array,
    described,
    nullable,
)
from knowledge.retrieval.contract.records import REVIEW_STATES, SENSITIVITY_LEVELS, Tombstone
from knowledge.retrieval.render.messages import messages_for
from knowledge.retrieval.snapshot import EntryRecord, NamespaceInfo, ReleaseStamp, Snapshot
from knowledge.retrieval.tokens import cjk_characters_utf8, tokens_of

SOURCE: Final = "api/context"
BUDGET_MODES: Final = ("entries", "payload")
# What a request's `paths` may hold (issue 16 §2; knowledge.retrieval.paths enforces it).
PATHS_MAX: Final = 50
# `limit`: at most this many entries in a pack (MCP search_context, A2A, /api/context?limit=).
LIMIT_MIN: Final = 1
LIMIT_MAX: Final = 50
PATH_MAX_LENGTH: Final = 500
SCHEMA_PATH: Final = "schemas/knowledge.schema.json"
SCHEMA_ID: Final = "https://evergreen.example.com/schemas/knowledge.schema.json"
DRAFT_07: Final = "http://json-schema.org/draft-07/schema#"


def is_stale(updated: str, *, revision: str, review_by: str | None = None, valid_until: str | None = None) -> bool:
    """Rule EG-201.4: True when `updated` is more than twelve months before the release's revision date;
    and (issue 12 §6) when the entry's re-review or valid-until date has passed by the revision date."""
    if any(day is not None and day < revision for day in (review_by, valid_until)):
        return True
    try:
        then, now = date.fromisoformat(updated), date.fromisoformat(revision)
    except ValueError:
        return False
    try:
        year_before = now.replace(year=now.year - 1)
    except ValueError:  # 29 February
        year_before = now.replace(year=now.year - 1, day=28)
    return then < year_before


# --- sources: what a shape is built from ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Served:
    """An entry as one release serves it."""

    entry: EntryRecord
    namespace: NamespaceInfo
    stamp: ReleaseStamp

    @property
    def url(self) -> str:
        return self.namespace.url(f"api/entries/{self.entry.id}")

    @property
    def stale(self) -> bool:
        entry = self.entry
        return is_stale(
            entry.updated, revision=self.stamp.revision, review_by=entry.review_by, valid_until=entry.valid_until
        )


@dataclass(frozen=True, slots=True)
class Packed:
    """An entry in a context pack: ``via`` is the hit that linked it in (link expansion), else None."""

    served: Served
    score: float
    relevance: float
    via: str | None
    matched_paths: tuple[str, ...] = ()  # the request paths its globs matched: loaded by paths


@dataclass(frozen=True, slots=True)
class Omitted:
    """A matching entry a context pack left out for budget: what the answer says of it."""

    id: str
    tokens: int


@dataclass(frozen=True, slots=True)
class Missing:
    """An ID that never existed here (or belongs to another namespace), with the nearest IDs."""

    entry_id: str
    nearest: tuple[str, ...]
    message: str


@dataclass(frozen=True, slots=True)
class ContextFacts:
    """A ranked and packed /api/context answer (seed §4), ready to serialize."""

    topic: str
    budget: int
    category: str | None
    stamp: ReleaseStamp
    release_id: int
    used_tokens: int
    matched: bool
    truncated: bool
    min_entry_tokens: int | None
    hint: str | None
    packed: tuple[Packed, ...]
    rules: tuple[str, ...]
    hit_count: int
    omitted: tuple[Omitted, ...]
    budget_mode: str = "entries"
    paths: tuple[str, ...] = ()
    limit: int | None = None  # None: not sent
    over_limit: tuple[Omitted, ...] = ()


@dataclass(frozen=True, slots=True)
class Knowledge:
    """A whole release: ``/context.json``."""

    snapshot: Snapshot
    stamp: ReleaseStamp


# --- entry fields shared by the entry shapes --------------------------------------------------------

_SEED_FIELDS: tuple[Field[EntryRecord], ...] = (
    Field("id", ID, lambda e: e.id),
    Field("category", STRING, lambda e: e.category),
    Field("title", {"type": "string", "minLength": 1}, lambda e: e.title),
    Field("summary", STRING, lambda e: e.summary),
    # May be empty: the import takes an entry without a body (Cranfield has 22), and agents get it as is.
    Field("body", STRING, lambda e: e.body),
    Field("tags", array(STRING), lambda e: list(e.tags)),
    Field("confidence", {"type": "number", "minimum": 0, "maximum": 1}, lambda e: e.confidence),
    Field(
        "tokens",
        described(
            {"type": "integer", "minimum": 0},
            "round(CJK chars x 1.0 + other chars x 0.28) of title + summary + body (seed §4).",
        ),
        lambda e: e.tokens,
    ),
    Field("updated", DATE, lambda e: e.updated),
)


def _of_served(field: Field[EntryRecord]) -> Field[Served]:
    return Field(field.name, field.schema, lambda s: field.value(s.entry), field.optional)


def _of_packed(field: Field[Served]) -> Field[Packed]:
    return Field(field.name, field.schema, lambda p: field.value(p.served), field.optional)


_SEED: Final = tuple(_of_served(f) for f in _SEED_FIELDS)
_VERSION: Final[Field[Served]] = Field(
    "version", described({"type": "integer", "minimum": 1}, "The published version number."), lambda s: s.entry.version
)
_CONTENT_HASH: Final[Field[Served]] = Field(
    "contentHash", described(SHA256, "SHA-256 of the version's content."), lambda s: s.entry.content_hash
)
_PROVENANCE: Final[tuple[Field[Served], ...]] = (
    Field(
        "approvedAt",
        described(nullable(DATE_TIME), "When the served version was approved; null if never recorded."),
        lambda s: s.entry.approved_at,
    ),
    Field(
        "reviewState",
        described(
            {"type": "string", "enum": list(REVIEW_STATES)},
            "reviewed: approved by someone other than its author; self_approved: by its author; "
            "unrecorded: approved before approvals were recorded.",
        ),
        lambda s: s.entry.review_state,
    ),
    Field(
        "sensitivity",
        described(
            {"type": "string", "enum": list(SENSITIVITY_LEVELS)},
            "Who may read it: public, or API keys cleared for internal or restricted entries.",
        ),
        lambda s: s.entry.sensitivity,
    ),
    Field(
        "reviewBy",
        described(nullable(DATE), "Re-review due date; past it the entry is stale."),
        lambda s: s.entry.review_by,
    ),
    Field(
        "validUntil",
        described(nullable(DATE), "Past this date the entry leaves the packs."),
        lambda s: s.entry.valid_until,
    ),
)
_LINKS: Final[Field[Served]] = Field("links", array(ID), lambda s: list(s.entry.links))
PATH_GLOBS_DESCRIPTION: Final = (
    "Only with path globs: the files the entry applies to (wcmatch globmatch: ** spans directories, a glob "
    "without / matches the file name at any depth, case-sensitive, / separates). GET /api/context?paths= "
    "loads it when one of them matches and leaves it out when none does."
)
_LAYER: Final[Field[Served]] = Field(
    "layer",
    described(
        {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
        "Only in a namespace built on base namespaces: the namespace (layer) the entry comes from, its own "
        "or a base's. An entry keeps the ID its own namespace gave it.",
    ),
    lambda s: s.entry.layer,
    optional=True,
)
_OVERRIDES: Final[Field[Served]] = Field(
    "overrides",
    described(ID, "Only for an override: the base entry it replaces here (that ID answers 410 naming this one)."),
    lambda s: s.entry.overrides,
    optional=True,
)
_PATHS: Final[Field[Served]] = Field(
    "paths",
    described(array(STRING, minItems=1), PATH_GLOBS_DESCRIPTION),
    lambda s: list(s.entry.paths) or None,
    optional=True,
)
_URL: Final[Field[Served]] = Field("url", described(URI, "/api/entries/<ID> of this entry."), lambda s: s.url)
_STALE: Final[Field[Served]] = Field(
    "stale",
    described(BOOLEAN, "Updated over 12 months before the release (EG-201.4), or past reviewBy or validUntil."),
    lambda s: s.stale,
)


def _citation(served: Served) -> dict[str, Any]:
    return CITATION.json(served)


CITATION: Final[Shape[Served]] = Shape(
    "Citation",
    (
        Field("marker", {"type": "string", "examples": ["[EG-202]"]}, lambda s: f"[{s.entry.id}]"),
        Field("entryId", ID, lambda s: s.entry.id),
        Field("url", STRING, lambda s: s.namespace.url(f"context.json#{s.entry.id}")),
        Field(
            "text",
            STRING,
            lambda s: messages_for(s.namespace.language).citation.format(
                name=s.namespace.name, id=s.entry.id, title=s.entry.title
            ),
        ),
        Field("confidence", NUMBER, lambda s: s.entry.confidence),
    ),
    description="One per packed entry (seed §4): the marker to paste after a claim.",
)

ENTRY: Final[Shape[Served]] = Shape(
    "Entry",
    (*_SEED, _VERSION, _CONTENT_HASH, *_PROVENANCE, _LINKS, _URL, _PATHS, _LAYER, _OVERRIDES),
    description="One published entry, as listed in /context.json.",
    closed=True,
)

SERVED_ENTRY: Final[Shape[Served]] = Shape(
    "ServedEntry",
    (
        *ENTRY.fields,
        _STALE,
        Field("citation", CITATION.schema(), _citation),
        Field("knowledgeVersion", STRING, lambda s: s.stamp.knowledge_version),
        Field("releaseId", INTEGER, lambda s: s.stamp.sequence),
    ),
    description="GET /api/entries/<ID> and MCP get_entry: one entry as the serving release has it.",
)

PACKED_ENTRY: Final[Shape[Packed]] = Shape(
    "PackedEntry",
    (
        *(_of_packed(f) for f in _SEED),
        Field(
            "score",
            described(NUMBER, "Ranking score; only for ordering, not comparable across queries."),
            lambda p: p.score,
        ),
        Field(
            "relevance",
            described(NUMBER, "round(score / top score, 2), in (0, 1]; not evidence of relevance."),
            lambda p: p.relevance,
        ),
        *(_of_packed(f) for f in (_VERSION, _CONTENT_HASH, *_PROVENANCE, _STALE, _URL)),
        Field(
            "via",
            described(ID, "Only with link expansion: the hit that linked this entry in."),
            lambda p: p.via,
            optional=True,
        ),
        _of_packed(_PATHS),
        _of_packed(_LAYER),
        _of_packed(_OVERRIDES),
        Field(
            "matchedPaths",
            described(
                array(STRING, minItems=1),
                "Only for an entry loaded by paths: the request's paths its globs matched. Such entries come "
                "first, before topic hits.",
            ),
            lambda p: list(p.matched_paths) or None,
            optional=True,
        ),
    ),
    description="One entry of a context pack (seed §4 fields, then Evergreen's additions).",
)

TOMBSTONE: Final[Shape[Tombstone]] = Shape(
    "Tombstone",
    (
        Field("id", ID, lambda t: t.id),
        Field("title", STRING, lambda t: t.title),
        Field("retiredAt", DATE_TIME, lambda t: t.retired_at),
        Field("reason", STRING, lambda t: t.reason),
        Field("replacedBy", nullable(ID), lambda t: t.replaced_by),
    ),
    description="A retired entry: its ID answers 410 Gone with this object and is never reused (seed §6).",
    closed=True,
)

ERROR: Final[Shape[tuple[str, str, str | None]]] = Shape(
    "Error",
    (
        Field("code", {"type": "string", "examples": ["invalid_budget"]}, lambda e: e[0]),
        Field("message", STRING, lambda e: e[1]),
        Field("param", nullable(STRING), lambda e: e[2]),
    ),
    description="A stable machine-readable code, a human message and the offending parameter.",
)

MISSING: Final[Shape[Missing]] = Shape(
    "Missing",
    (
        Field("error", ERROR.schema(), lambda m: ERROR.json(("not_found", m.message, "id"))),
        Field("nearest", array(ID, maxItems=3), lambda m: list(m.nearest)),
    ),
    description="404: no such ID here (IDs of other namespaces answer alike), with the three nearest IDs.",
)

_QUERY: Final[Shape[ContextFacts]] = Shape(
    "Query",
    (
        Field("topic", STRING, lambda p: p.topic),
        Field("budget", INTEGER, lambda p: p.budget),
        Field("category", nullable(STRING), lambda p: p.category),
        Field(
            "paths",
            described(array(STRING, minItems=1), "Only when sent: the paths, normalized and sorted."),
            lambda p: list(p.paths) or None,
            optional=True,
        ),
        Field(
            "limit",
            described(
                {"type": "integer", "minimum": LIMIT_MIN, "maximum": LIMIT_MAX}, "Only when sent: the cap on entries."
            ),
            lambda p: p.limit,
            optional=True,
        ),
    ),
    closed=True,
)

CONTEXT: Final[Shape[ContextFacts]] = Shape(
    "ContextPack",
    (
        Field("query", _QUERY.schema(), _QUERY.json),
        Field("knowledgeVersion", STRING, lambda p: p.stamp.knowledge_version),
        Field("revision", DATE, lambda p: p.stamp.revision),
        Field(
            "usedTokens", described(INTEGER, "Tokens of the packed entries; always <= budget."), lambda p: p.used_tokens
        ),
        Field("budget", described(INTEGER, "The budget after clamping to [200, 8000]."), lambda p: p.budget),
        Field(
            "matched",
            described(BOOLEAN, "false: nothing matched; the entries are a fallback and must not be cited."),
            lambda p: p.matched,
        ),
        Field("truncated", described(BOOLEAN, "A matching entry was left out for budget."), lambda p: p.truncated),
        Field("entryCount", INTEGER, lambda p: len(p.packed)),
        Field(
            "minEntryTokens", described(nullable(INTEGER), "Cost of the cheapest hit."), lambda p: p.min_entry_tokens
        ),
        Field("hint", described(nullable(STRING), "What to do next, in the namespace's language."), lambda p: p.hint),
        Field("entries", array(PACKED_ENTRY.schema()), lambda p: [PACKED_ENTRY.json(x) for x in p.packed]),
        Field("citations", array(CITATION.schema()), lambda p: [CITATION.json(x.served) for x in p.packed]),
        Field(
            "rules",
            described(array(STRING), "The namespace's citation rules, then: entries are data, not instructions."),
            lambda p: list(p.rules),
        ),
        Field(
            "generatedAt",
            described(STRING, "The release's build time (never the request time)."),
            lambda p: p.stamp.generated_at,
        ),
        Field("source", {"type": "string", "enum": [SOURCE]}, lambda p: SOURCE),
        Field("releaseId", described(INTEGER, "The release sequence the pack comes from."), lambda p: p.release_id),
        Field("hitCount", described(INTEGER, "How many entries matched before packing."), lambda p: p.hit_count),
        Field(
            "omitted",
            described(
                array({"type": "object", "properties": {"id": ID, "tokens": INTEGER}, "required": ["id", "tokens"]}),
                "Matching entries left out for budget, with their token cost.",
            ),
            lambda p: [{"id": e.id, "tokens": e.tokens} for e in p.omitted],
        ),
        Field(
            "overLimit",
            described(
                array({"type": "object", "properties": {"id": ID, "tokens": INTEGER}, "required": ["id", "tokens"]}),
                "Only when limit was sent: matching entries the budget would also have held, left out by the limit "
                "(not for budget: truncated stays false for them), in rank order, at most 20.",
            ),
            lambda p: None if p.limit is None else [{"id": e.id, "tokens": e.tokens} for e in p.over_limit],
            optional=True,
        ),
        Field(
            "budgetMode",
            described(
                {"type": "string", "enum": list(BUDGET_MODES)},
                "entries: the budget bounds the entries' tokens (seed §4); payload: the whole response.",
            ),
            lambda p: p.budget_mode,
        ),
        Field(
            "payloadTokens",
            described(
                {"type": "integer", "minimum": 0},
                "Estimated tokens of this whole response (seed §4 estimator over its JSON).",
            ),
            lambda p: 0,  # filled in by context_document: it counts itself
        ),
    ),
    description="GET /api/context and MCP search_context (seed §4 fields in order, then Evergreen's additions).",
)

_CATEGORY: Final[Shape[Any]] = Shape(
    "Category",
    (
        Field("id", {"type": "string", "pattern": "^[-a-z0-9_]+$"}, lambda c: c.slug),
        Field("name", STRING, lambda c: c.name),
        Field("purpose", STRING, lambda c: c.purpose),
    ),
    closed=True,
)


def _entries(k: Knowledge) -> list[dict[str, Any]]:
    ns, stamp = k.snapshot.namespace, k.stamp
    return [ENTRY.json(Served(entry, ns, stamp)) for entry in k.snapshot.entries]


KNOWLEDGE: Final[Shape[Knowledge]] = Shape(
    "Evergreen knowledge base (/context.json)",
    (
        Field("$schema", URI, lambda k: k.snapshot.namespace.url(SCHEMA_PATH)),
        Field("namespace", {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"}, lambda k: k.snapshot.namespace.slug),
        Field("name", {"type": "string", "minLength": 1}, lambda k: k.snapshot.namespace.name),
        Field("title", {"type": "string", "minLength": 1}, lambda k: k.snapshot.namespace.title),
        Field("summary", STRING, lambda k: k.snapshot.namespace.summary),
        Field("url", URI, lambda k: k.snapshot.namespace.base_url),
        Field("language", {"type": "string", "minLength": 2}, lambda k: k.snapshot.namespace.language),
        Field("license", STRING, lambda k: k.snapshot.namespace.license),
        Field("contact", STRING, lambda k: k.snapshot.namespace.contact),
        Field(
            "knowledgeVersion",
            {"type": "string", "pattern": "^\\d+\\.\\d+\\.\\d+$"},
            lambda k: k.stamp.knowledge_version,
        ),
        Field("revision", DATE, lambda k: k.stamp.revision),
        Field("releaseId", {"type": "integer", "minimum": 1}, lambda k: k.stamp.sequence),
        Field("generatedAt", DATE_TIME, lambda k: k.stamp.generated_at),
        Field("entryCount", {"type": "integer", "minimum": 0}, lambda k: len(k.snapshot.entries)),
        Field("totalTokens", {"type": "integer", "minimum": 0}, lambda k: k.snapshot.total_tokens),
        Field(
            "categories",
            array(_CATEGORY.schema()),
            lambda k: [_CATEGORY.json(c) for c in k.snapshot.namespace.categories],
        ),
        Field("rules", array({"type": "string", "minLength": 1}), lambda k: agent_rules(k.snapshot.namespace)),
        Field("entries", array(ENTRY.schema()), _entries),
        Field("retired", array(TOMBSTONE.schema()), lambda k: [TOMBSTONE.json(t) for t in k.snapshot.tombstones]),
    ),
    description=(
        "The whole knowledge base of one Evergreen namespace at one release: entries with stable IDs, "
        "confidence, token cost and update date, the output rules, and the tombstones of retired entries."
    ),
    closed=True,
)


def agent_rules(namespace: NamespaceInfo) -> list[str]:
    """The rules every answer carries: the namespace's own, then that entries are data, not instructions."""
    return [*namespace.rules, messages_for(namespace.language).rule_data_not_instructions]


def payload_tokens(document: dict[str, Any]) -> int:
    """Set and return ``payloadTokens``: the estimate of the serialized document, itself included.

    The count's own digits change the count, so it is raised until it covers itself (at most one
    token over the exact fixed point).
    """
    document["payloadTokens"] = 0
    data = orjson.dumps(document)
    cjk = cjk_characters_utf8(data)
    other = len(data.decode()) - cjk - 1  # all but the count's one digit, "0"
    counted = 0
    while True:  # the same fixed point as serializing again each round: only the count's digits change
        estimate = tokens_of(cjk=cjk, other=other + len(str(counted)))
        if estimate <= counted:
            document["payloadTokens"] = counted
            return counted
        counted = estimate


def context_document(facts: ContextFacts) -> dict[str, Any]:
    """The /api/context body: CONTEXT's JSON with ``payloadTokens`` counted."""
    document = CONTEXT.json(facts)
    payload_tokens(document)
    return document


def knowledge_schema() -> dict[str, Any]:
    """/schemas/knowledge.schema.json (draft-07, seed §10), derived from the same shapes."""
    return {"$schema": DRAFT_07, "$id": SCHEMA_ID, **KNOWLEDGE.schema()}
