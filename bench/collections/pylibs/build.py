"""Rebuild entries.jsonl of the `pylibs` development collection from installed packages' docstrings.

Run: .venv/bin/python -m bench.collections.pylibs.build  (writes entries.jsonl beside this file)

The entries are the reference documentation (signature + docstring) of public functions, classes
and methods of four permissively licensed libraries, as installed in the project's venv (versions in
README.md). Which members are taken is decided by rule, not by hand: public callables with a
docstring of a minimum length, deduplicated by object, and for the larger libraries a stable
hash-ordered sample, so the same versions give the same file.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PREFIX = "PYL"
MIN_DOC = 150
MAX_BODY = 12_000  # characters: the longest docstrings (numpy's) are cut at a paragraph break

# (module, class or None, how many to keep at most): members of the module (or of the class).
SOURCES: tuple[tuple[str, str | None, int], ...] = (
    ("numpy", None, 130),
    ("django.utils.text", None, 99),
    ("django.utils.html", None, 99),
    ("django.utils.timezone", None, 99),
    ("django.utils.dateparse", None, 99),
    ("django.utils.http", None, 99),
    ("django.utils.functional", None, 99),
    ("django.utils.encoding", None, 99),
    ("django.utils.safestring", None, 99),
    ("django.utils.crypto", None, 99),
    ("django.utils.cache", None, 99),
    ("django.utils.formats", None, 99),
    ("django.utils.module_loading", None, 99),
    ("django.shortcuts", None, 99),
    ("django.core.signing", None, 99),
    ("django.core.mail", None, 99),
    ("django.db.transaction", None, 99),
    ("django.template.defaultfilters", None, 99),
    ("django.contrib.auth", None, 99),
    ("django.urls", None, 99),
    ("django.views.decorators.cache", None, 99),
    ("django.views.decorators.http", None, 99),
    ("django.db.models.query", "QuerySet", 99),
    ("click", None, 99),
    ("click.core", "Context", 99),
    ("redis.commands.core", "BasicKeyCommands", 40),
    ("redis.commands.core", "HashCommands", 15),
    ("redis.commands.core", "ListCommands", 15),
    ("redis.commands.core", "SetCommands", 10),
    ("redis.commands.core", "SortedSetCommands", 20),
    ("redis.commands.core", "ManagementCommands", 25),
)
PUBLIC_NAMES = {"redis.commands.core": "redis.Redis"}  # where users meet a mixin's methods


def _stable_rank(name: str) -> str:
    return hashlib.blake2b(name.encode(), digest_size=8).hexdigest()


def _signature(obj: Any) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _cut(text: str) -> str:
    if len(text) <= MAX_BODY:
        return text
    head = text[:MAX_BODY]
    return head[: head.rfind("\n\n")] if "\n\n" in head else head


def _members(module_name: str, class_name: str | None) -> Iterator[tuple[str, Any]]:
    module = importlib.import_module(module_name)
    owner = getattr(module, class_name) if class_name else module
    root = module_name.split(".", maxsplit=1)[0]
    for name in sorted(vars(owner) if class_name else dir(owner)):
        if name.startswith("_"):
            continue
        obj = getattr(owner, name)
        if not callable(obj) or not str(getattr(obj, "__module__", "") or "").startswith(root):
            continue
        yield name, obj


def _title(module_name: str, class_name: str | None, name: str, obj: Any) -> str:
    if class_name:
        base = PUBLIC_NAMES.get(module_name, f"{module_name}.{class_name}")
        return f"{base}.{name}"
    if module_name in ("numpy", "click"):
        return f"{module_name}.{name}"
    return f"{obj.__module__}.{getattr(obj, '__qualname__', name)}"


def collect() -> list[dict[str, str]]:
    seen: set[int] = set()
    titles: set[str] = set()
    rows: list[dict[str, str]] = []
    for module_name, class_name, limit in SOURCES:
        found = []
        for name, obj in _members(module_name, class_name):
            # The object's own docstring: an inherited one describes the parent, not this member.
            own = obj.__doc__ if isinstance(getattr(obj, "__doc__", None), str) else ""
            doc = inspect.cleandoc(own) if own else ""
            title = _title(module_name, class_name, name, obj)
            if len(doc) < MIN_DOC or id(obj) in seen or title in titles:
                continue
            seen.add(id(obj))
            titles.add(title)
            kind = "class" if inspect.isclass(obj) else "function"
            body = _cut(f"{kind} {title}{_signature(obj)}\n\n{doc}")
            found.append({"title": title, "body": body})
        found.sort(key=lambda row: _stable_rank(row["title"]))
        rows.extend(sorted(found[:limit], key=lambda row: row["title"]))
    return rows


def main() -> int:
    import django
    from django.conf import settings

    settings.configure()
    django.setup()
    rows = collect()
    with open(HERE / "entries.jsonl", "w", encoding="utf-8") as out:
        for number, row in enumerate(rows, start=1):
            out.write(json.dumps({"id": f"{PREFIX}-{number:04d}", **row}, ensure_ascii=False) + "\n")
    print(f"{len(rows)} entries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
