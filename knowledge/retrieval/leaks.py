"""The leak check of a release (issue 12 §4): no text of a non-public entry appears in a public artifact.

Public artifacts are rendered from the public view only, so a leak means a bug or a public entry that
copies hidden text; either way the build fails and the previous release keeps serving. Each hidden
entry is cut into fragments (its title and each sentence of its summary and body long enough to be
telling); a fragment that also occurs in some public entry's own text is not evidence of a leak.
Whitespace is normalised on both sides and JSON artifacts are compared on their decoded strings, so
reflowed or escaped text is still found.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from knowledge.retrieval.snapshot import EntryRecord, Snapshot

MIN_CHARS = 24  # a fragment shorter than this (in non-CJK text) is too common to mean anything
MIN_CJK = 8  # … or with fewer CJK characters than this
_SENTENCE = re.compile(r"(?<=[。！？；])|(?<=[.!?;])\s+|\n+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
LEAKS_REPORTED = 20


@dataclass(frozen=True, slots=True)
class Leak:
    artifact: str
    entry_id: str
    field: str
    excerpt: str

    def describe(self) -> str:
        return f"{self.artifact} contains {self.field} text of {self.entry_id}: “{self.excerpt[:80]}”"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _telling(fragment: str) -> bool:
    return len(fragment) >= MIN_CHARS or len(_CJK.findall(fragment)) >= MIN_CJK


def fragments(entry: EntryRecord) -> Iterator[tuple[str, str]]:
    """(field, fragment) pairs of an entry's text that would identify it if found elsewhere."""
    if _telling(_flat(entry.title)):
        yield "title", _flat(entry.title)
    for field, text in (("summary", entry.summary), ("body", entry.body)):
        for piece in _SENTENCE.split(text):
            fragment = _flat(piece or "")
            if _telling(fragment):
                yield field, fragment


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def artifact_text(name: str, content: bytes) -> str:
    """What a reader of the artifact sees, flattened: JSON decoded to its strings, text as is."""
    if name.endswith(".json"):
        return _flat("\n".join(_strings(orjson.loads(content))))
    return _flat(content.decode("utf-8", "replace"))


def public_texts(snapshot: Snapshot) -> list[str]:
    """Text anyone may read anyway: the public view's entries, docs, prompt packs and namespace texts."""
    ns = snapshot.namespace
    texts = [f"{e.title}\n{e.summary}\n{e.body}" for e in snapshot.entries]
    texts += [f"{d.title}\n{d.body}" for d in snapshot.docs] + [text for _, text in snapshot.prompt_packs]
    return [*texts, ns.title, ns.summary, *ns.rules]


def leak_check(artifacts: Mapping[str, bytes], *, hidden: Sequence[EntryRecord], public: Sequence[str]) -> list[Leak]:
    """Every fragment of a hidden entry found in a public artifact (at most LEAKS_REPORTED)."""
    if not hidden:
        return []
    shared = _flat("\n".join(public))
    texts = {name: artifact_text(name, content) for name, content in artifacts.items()}
    leaks: list[Leak] = []
    for entry in hidden:
        for field, fragment in fragments(entry):
            if fragment in shared:
                continue
            for name, text in texts.items():
                if fragment in text:
                    leaks.append(Leak(name, entry.id, field, fragment))
                    if len(leaks) >= LEAKS_REPORTED:
                        return leaks
    return leaks
