"""Public IDs: `<PREFIX>-<digits>`, e.g. EG-202 or CRAN-0001 (seed §6)."""

from __future__ import annotations

import re

# ASCII digits only: `\d` takes any script's (EG-0٥٥ was a third spelling of number 55).
ID_PATTERN = re.compile(r"^(?P<prefix>[A-Z][A-Z0-9]{0,15})-(?P<number>[0-9]{3,9})$")


def format_public_id(*, prefix: str, number: int, digits: int) -> str:
    return f"{prefix}-{number:0{digits}d}"


def canonical_number(public_id: str, *, prefix: str, digits: int) -> int | None:
    """The number of `public_id` when it is spelled as this namespace writes it (format_public_id), else
    None: one number has one ID, which lookups by the canonical spelling find (EG-0061 is not EG-061)."""
    number = parse_public_id(public_id, prefix=prefix)
    if number is None or public_id != format_public_id(prefix=prefix, number=number, digits=digits):
        return None
    return number


def parse_public_id(public_id: str, *, prefix: str) -> int | None:
    """The number of a well-formed ID with this prefix, else None."""
    match = ID_PATTERN.match(public_id)
    if match is None or match["prefix"] != prefix:
        return None
    return int(match["number"])
