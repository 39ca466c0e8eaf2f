"""Public IDs: `<PREFIX>-<digits>`, e.g. EG-202 or CRAN-0001 (seed §6)."""

from __future__ import annotations

import re

ID_PATTERN = re.compile(r"^(?P<prefix>[A-Z][A-Z0-9]{0,15})-(?P<number>\d{3,9})$")


def format_public_id(*, prefix: str, number: int, digits: int) -> str:
    return f"{prefix}-{number:0{digits}d}"


def parse_public_id(public_id: str, *, prefix: str) -> int | None:
    """The number of a well-formed ID with this prefix, else None."""
    match = ID_PATTERN.match(public_id)
    if match is None or match["prefix"] != prefix:
        return None
    return int(match["number"])
