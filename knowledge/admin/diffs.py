"""The review pages' diff: any two versions of anything reviewed, every field, in one column or side by side.

A version admin says which fields its versions have (`(name, value)` pairs); values become lines of
text here (a list one item per line, so an added tag or rule is one added line), and the template
lays out the line and word differences that `textdiff` finds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from knowledge.admin.textdiff import field_diff

DIFF_TEMPLATE = "admin/evergreen/diff.html"
Fields = Sequence[tuple[str, Any]]


def value_text(value: Any) -> str:
    """A field's value as lines: list items one per line, dates in ISO form, structures as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return "\n".join(value_text(item) if not isinstance(item, dict) else _json(item) for item in value)
    if isinstance(value, dict):
        return _json(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def version_label(version: Any) -> str:
    return f"v{version.number} ({version.get_state_display().lower()})"


def diff_html(old: Fields | None, new: Fields, *, old_label: str, new_label: str) -> SafeString:
    """Every field of `new` against `old` (None: nothing before, a new entry or text)."""
    before = dict(old or ())
    fields = [
        field_diff(name, None if old is None else value_text(before.get(name)), value_text(value))
        for name, value in new
    ]
    context = {
        "old_label": old_label,
        "new_label": new_label,
        "changed": [f for f in fields if f.changed],
        "unchanged": [f.name for f in fields if not f.changed],
    }
    return render_to_string(DIFF_TEMPLATE, context)


def versions_diff_html(admin: Any, old: Any, new: Any) -> SafeString:
    """`new` against `old` (None: nothing before), with the fields the version admin names."""
    return diff_html(
        admin.diff_fields(old) if old is not None else None,
        admin.diff_fields(new),
        old_label=version_label(old) if old is not None else f"nothing (new {admin.subject_noun})",
        new_label=version_label(new),
    )
