"""The contract's plain records that need nothing from the engine: a tombstone and the namespace an agent sees."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Tombstone:
    """A retired entry: agents get 410 Gone with this body (seed §6)."""

    id: str
    title: str
    retired_at: str
    reason: str
    replaced_by: str | None
    # The retired entry's last sensitivity: only callers cleared for it learn it existed. Not sent.
    sensitivity: str = "public"


@dataclass(frozen=True, slots=True)
class AgentNamespace:
    """Who the namespace is, as one request addressed it. ``base_url`` is absolute, without a trailing
    slash, and includes any ``/t/<namespace>`` prefix, so ``base_url + "/mcp"`` is its MCP endpoint."""

    slug: str
    title: str
    summary: str
    base_url: str
    language: str
    knowledge_version: str
    public: bool
    id_prefix: str
    categories: tuple[str, ...]
    organization: str


# Sensitivity (issue 12 §4): an entry is readable by a caller whose clearance is at least its level.
PUBLIC = "public"
INTERNAL = "internal"
RESTRICTED = "restricted"
SENSITIVITY_LEVELS = (PUBLIC, INTERNAL, RESTRICTED)

# How an entry's live version was approved (issue 12 §3): by someone other than its author, by its
# author (single-person namespaces, imports with --publish), or before approvals were recorded.
REVIEWED = "reviewed"
SELF_APPROVED = "self_approved"
UNRECORDED = "unrecorded"
REVIEW_STATES = (REVIEWED, SELF_APPROVED, UNRECORDED)


def clears(clearance: str, sensitivity: str) -> bool:
    """Whether a caller with `clearance` may read an entry of `sensitivity` (unknown levels: never)."""
    if clearance not in SENSITIVITY_LEVELS or sensitivity not in SENSITIVITY_LEVELS:
        return False
    return SENSITIVITY_LEVELS.index(sensitivity) <= SENSITIVITY_LEVELS.index(clearance)
