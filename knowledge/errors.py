"""Errors raised by services; `str(error)` is a message for the person who caused it."""

from __future__ import annotations


class ServiceError(Exception):
    """Base class: a refused write that changed nothing."""

    code = "refused"


class NotAllowedError(ServiceError):
    code = "not_allowed"


class ConflictError(ServiceError):
    code = "conflict"


class BlockFullError(ServiceError):
    code = "block_full"


class InvalidInputError(ServiceError):
    code = "invalid"


class BlockedFindingsError(InvalidInputError):
    """The safety scan found something that must not reach agents (high severity)."""

    code = "blocked_findings"


class UnacknowledgedWarningsError(InvalidInputError):
    """The safety scan warned, and nobody acknowledged the warnings with a reason."""

    code = "warnings_unacknowledged"


NOT_A_MEMBER = "You are not {role} of the namespace “{namespace}”."
SELF_APPROVAL = (
    "You wrote or edited this version, so someone else must review it (four eyes). "
    "A namespace admin can enable single-person mode for this namespace."
)
STALE_DRAFT = (
    "Someone else saved this draft while you were editing it (your copy was version {expected}, "
    "the draft is now at {current}). Your text is kept below: compare it with the current draft, "
    "then save again."
)
OPEN_VERSION_EXISTS = "{entry} already has version {number} {state}; finish or withdraw it first."
RETIRED_ENTRY = "{entry} is retired; its ID stays retired for good and cannot be edited or published."
NOT_EDITABLE = "Version {number} is {state}; only drafts can be edited."
BLOCK_FULL = "Every number of the category “{category}” is used; a namespace admin can add an ID block."
