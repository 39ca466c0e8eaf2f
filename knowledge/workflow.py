"""The one table of allowed version transitions, and the function that enforces it.

draft → in review → approved → published → superseded; in review → rejected;
draft or in review → withdrawn. A rollback alone may also bring a superseded version back
(superseded → published). Everything else is refused with a message an editor can act on.
"""

from __future__ import annotations

from knowledge.models.entry import VersionState as S

TRANSITIONS: dict[tuple[str, str], str] = {
    (S.DRAFT, S.IN_REVIEW): "submit",
    (S.IN_REVIEW, S.APPROVED): "approve",
    (S.IN_REVIEW, S.REJECTED): "reject",
    (S.APPROVED, S.PUBLISHED): "publish",
    (S.PUBLISHED, S.SUPERSEDED): "supersede",
    (S.DRAFT, S.WITHDRAWN): "withdraw",
    (S.IN_REVIEW, S.WITHDRAWN): "withdraw",
}

# What a rollback (knowledge.services.rollback) may do for the reviewer who asked: never offered as a step.
ROLLBACK_TRANSITIONS: dict[tuple[str, str], str] = {**TRANSITIONS, (S.SUPERSEDED, S.PUBLISHED): "revert"}

EDITABLE_STATES = frozenset({S.DRAFT})


class TransitionError(Exception):
    """A refused transition; `str(error)` is the message shown to the user."""


REFUSED_TRANSITION = "A version that is {current} cannot be {action}: allowed from {allowed}."


def check_transition(current: str, target: str, *, table: dict[tuple[str, str], str] = TRANSITIONS) -> str:
    """Return the action name of current → target, or raise TransitionError saying why not."""
    action = table.get((current, target))
    if action is not None:
        return action
    verb = {
        S.IN_REVIEW: "submitted for review",
        S.APPROVED: "approved",
        S.REJECTED: "rejected",
        S.PUBLISHED: "published",
        S.SUPERSEDED: "superseded",
        S.WITHDRAWN: "withdrawn",
        S.DRAFT: "turned back into a draft",
    }.get(S(target), target)
    sources = sorted(S(src).label.lower() for src, dst in TRANSITIONS if dst == target)
    raise TransitionError(
        REFUSED_TRANSITION.format(
            current=S(current).label.lower(), action=verb, allowed=" or ".join(sources) or "no state"
        )
    )
