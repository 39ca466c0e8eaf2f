"""The kinds of reviewed text: which fields a version's content holds, and how each is checked.

A content is a JSON object. `text_content_clean` returns it normalised (stripped strings, lists
without blanks) or raises InvalidInputError naming the field, so a bad save changes nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from knowledge.errors import InvalidInputError
from knowledge.ids import ID_PATTERN
from knowledge.models import PromptPack, TextKind

TEXT_MAX: Final = 100_000
NEEDS_TEXT: Final = "“{field}” must be text of at most {limit} characters."
REQUIRED: Final = "“{field}” cannot be empty."
NEEDS_LIST: Final = "“{field}” must be a list of texts."
NEEDS_FAQ: Final = "“faq” must be a list of {{question, answer}} objects with both filled in."
NEEDS_POSITION: Final = "“position” must be a whole number from 0 to 32767."
UNKNOWN_FIELDS: Final = "A {kind} has no field(s) {fields}."
BAD_KEY: Final = "“{key}” is not a valid key for a {kind}: {hint}."


def _text(content: Mapping[str, Any], name: str, *, limit: int = TEXT_MAX, required: bool = False) -> str:
    value = content.get(name, "")
    if not isinstance(value, str) or len(value) > limit:
        raise InvalidInputError(NEEDS_TEXT.format(field=name, limit=limit))
    value = value.strip()
    if required and not value:
        raise InvalidInputError(REQUIRED.format(field=name))
    return value


def _texts(content: Mapping[str, Any], name: str) -> list[str]:
    value = content.get(name, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidInputError(NEEDS_LIST.format(field=name))
    return [item.strip() for item in value if item.strip()]


def _faq(content: Mapping[str, Any]) -> list[dict[str, str]]:
    value = content.get("faq", [])
    if not isinstance(value, list):
        raise InvalidInputError(NEEDS_FAQ)
    items = []
    for item in value:
        if not isinstance(item, dict) or set(item) - {"question", "answer"}:
            raise InvalidInputError(NEEDS_FAQ)
        question, answer = item.get("question"), item.get("answer")
        if not isinstance(question, str) or not isinstance(answer, str) or not question.strip() or not answer.strip():
            raise InvalidInputError(NEEDS_FAQ)
        items.append({"question": question.strip(), "answer": answer.strip()})
    return items


def _position(content: Mapping[str, Any]) -> int:
    value = content.get("position", 0)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 32767:
        raise InvalidInputError(NEEDS_POSITION)
    return value


def _profile(content: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "title": _text(content, "title", limit=200, required=True),
        "summary": _text(content, "summary", limit=300),
        "contact": _text(content, "contact", limit=200),
        "rules": _texts(content, "rules"),
        "faq": _faq(content),
    }


def _doc(content: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "title": _text(content, "title", limit=200, required=True),
        "body": _text(content, "body", required=True),
        "position": _position(content),
    }


NEEDS_IDS: Final = "“entries” must list entry IDs such as EG-202, one each."


def _theme(content: Mapping[str, Any]) -> dict[str, Any]:
    """Issue 16 §3: a theme groups entries under a short description; llms.txt links one file per theme."""
    entries = [item.upper() for item in _texts(content, "entries")]
    if not all(ID_PATTERN.match(item) for item in entries):
        raise InvalidInputError(NEEDS_IDS)
    return {
        "title": _text(content, "title", limit=200, required=True),
        "summary": _text(content, "summary", limit=300),
        "entries": list(dict.fromkeys(entries)),
        "position": _position(content),
    }


NEEDS_SLUGS: Final = "“bases” must list namespace slugs (lower-case letters, digits, - and _), one a line."
SLUG = re.compile(r"^[a-z0-9_-]{1,64}$")


def _bases(content: Mapping[str, Any]) -> dict[str, Any]:
    """Issue 16 §1: the namespaces this one builds on, most important first (checked against them by
    knowledge.services.layers when proposed, approved and published: the slugs alone say little)."""
    slugs = [item.lower() for item in _texts(content, "bases")]
    if not all(SLUG.match(item) for item in slugs):
        raise InvalidInputError(NEEDS_SLUGS)
    return {"bases": slugs}


def _prompt(content: Mapping[str, Any]) -> dict[str, Any]:
    return {"template": _text(content, "template", required=True)}


@dataclass(frozen=True, slots=True)
class KindSpec:
    fields: tuple[str, ...]
    clean: Callable[[Mapping[str, Any]], dict[str, Any]]
    empty: Mapping[str, Any]  # a new text's first draft


KINDS: Final[dict[str, KindSpec]] = {
    TextKind.PROFILE: KindSpec(
        ("title", "summary", "contact", "rules", "faq"),
        _profile,
        {"title": "", "summary": "", "contact": "", "rules": [], "faq": []},
    ),
    TextKind.DOC: KindSpec(("title", "body", "position"), _doc, {"title": "", "body": "", "position": 0}),
    TextKind.PROMPT: KindSpec(("template",), _prompt, {"template": ""}),
    TextKind.THEME: KindSpec(
        ("title", "summary", "entries", "position"),
        _theme,
        {"title": "", "summary": "", "entries": [], "position": 0},
    ),
    TextKind.BASES: KindSpec(("bases",), _bases, {"bases": []}),
}


def text_key_check(*, kind: str, key: str) -> str:
    """The key normalised for its kind, or InvalidInputError."""
    key = key.strip()
    label = TextKind(kind).label.lower()
    if kind == TextKind.PROFILE and key:
        raise InvalidInputError(BAD_KEY.format(key=key, kind=label, hint="a namespace has one profile, with no key"))
    if kind == TextKind.BASES and key:
        raise InvalidInputError(BAD_KEY.format(key=key, kind=label, hint="a namespace has one list of bases, no key"))
    if kind == TextKind.PROMPT and key not in PromptPack.Scenario.values:
        scenarios = ", ".join(PromptPack.Scenario.values)
        raise InvalidInputError(BAD_KEY.format(key=key, kind=label, hint=f"one of {scenarios}"))
    if kind == TextKind.DOC and not key:
        raise InvalidInputError(BAD_KEY.format(key=key, kind=label, hint="a doc page needs its slug"))
    if kind == TextKind.THEME and not key:
        raise InvalidInputError(BAD_KEY.format(key=key, kind=label, hint="a theme needs its slug"))
    return key


def text_content_clean(*, kind: str, content: Mapping[str, Any]) -> dict[str, Any]:
    spec = KINDS[kind]
    if not isinstance(content, Mapping):
        raise InvalidInputError(UNKNOWN_FIELDS.format(kind=TextKind(kind).label.lower(), fields="(not an object)"))
    unknown = set(content) - set(spec.fields)
    if unknown:
        raise InvalidInputError(
            UNKNOWN_FIELDS.format(kind=TextKind(kind).label.lower(), fields=", ".join(sorted(unknown)))
        )
    return spec.clean(content)


def text_content_hash(*, kind: str, content: Mapping[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps({"kind": kind, "content": content}, option=orjson.OPT_SORT_KEYS)).hexdigest()
