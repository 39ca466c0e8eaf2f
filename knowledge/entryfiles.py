"""Entries as Markdown files with YAML front matter, for keeping a namespace's knowledge in Git.

```
---
id: EG-202
title: Token budget discipline
summary: Agents ask for a token budget and get whole entries that fit.
category: rule
tags: [token, budget]
confidence: 0.95
links: [EG-101]
aliases: []
updated: 2026-08-25
---
The body, in Markdown.
```

An entry that has them also holds `paths`, `overrides`, `sensitivity` (when not public), `reviewBy` and
`validUntil`.

`entry_file_render` writes exactly this layout (keys in this order, one file per entry) and
`entry_file_parse` reads it back into the record import_entries validates, so export → sync is
lossless. Pure: no Django, no database.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Final

import yaml

DELIMITER: Final = "---"
KEY_ORDER: Final = (
    "id",
    "title",
    "summary",
    "category",
    "tags",
    "confidence",
    "links",
    "aliases",
    "updated",
    "paths",
    "overrides",
    "sensitivity",
    "reviewBy",
    "validUntil",
)
DATE_KEYS: Final = ("updated", "reviewBy", "validUntil")
SUFFIX: Final = ".md"


class EntryFileError(ValueError):
    """The file is not an entry file; the message says why and where."""


def entry_file_name(public_id: str) -> str:
    return f"{public_id}{SUFFIX}"


def entry_file_render(row: dict[str, Any]) -> str:
    """The file of one exported row (entries_export_rows): every key of KEY_ORDER it holds, then the body."""
    front = {key: row[key] for key in KEY_ORDER if key in row}
    for key in DATE_KEYS:
        if isinstance(front.get(key), str):
            front[key] = date.fromisoformat(front[key])  # unquoted in YAML
    header = yaml.safe_dump(front, allow_unicode=True, sort_keys=False, default_flow_style=None, width=100_000)
    body = row.get("body", "").strip()
    return f"{DELIMITER}\n{header}{DELIMITER}\n{body}\n" if body else f"{DELIMITER}\n{header}{DELIMITER}\n"


def _plain(value: Any) -> Any:
    """YAML's dates as ISO strings; everything else as loaded."""
    if isinstance(value, date):
        return value.isoformat()
    return value


def entry_file_parse(text: str) -> dict[str, Any]:
    """The record of a file: its front matter plus `body`. Raises EntryFileError with a reason."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].strip() != DELIMITER:
        raise EntryFileError("the file must start with a front-matter block: a line “---”, YAML, then “---”")
    try:
        end = next(n for n, line in enumerate(lines[1:], start=1) if line.strip() == DELIMITER)
    except StopIteration:
        raise EntryFileError("the front matter is not closed by a line “---”") from None
    try:
        front = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise EntryFileError(f"the front matter is not valid YAML{where}") from None
    except ValueError as error:  # a date YAML recognises but the calendar has not: 2026-02-30
        raise EntryFileError(f"the front matter holds an impossible date ({error})") from None
    if front is None:
        front = {}
    if not isinstance(front, dict):
        raise EntryFileError("the front matter must be YAML keys and values (title: …)")
    if "body" in front:
        raise EntryFileError("“body” is the Markdown after the front matter, not a front-matter key")
    record = {str(key): _plain(value) for key, value in front.items()}
    record["body"] = "\n".join(lines[end + 1 :]).strip()
    return record
