"""The scanner's evaluation corpus: labelled attacks (with obfuscated variants) and benign texts.

Layout of a corpus directory (see bench/scanner_corpus/README.md for provenance):
  attacks.jsonl  {"id", "lang", "field", "kinds", "text", "variants", "technique"}
  benign.jsonl   {"id", "lang", "source", "fields" | "text", "allowed_hosts"?}
Demo content (knowledge/demo) is read live as benign text, so the corpus follows the demo.
Every record belongs to the tuning half or the held-out half by a hash of its base id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowledge.safety.obfuscation import SURVIVING_KINDS, TRANSFORMS

DEFAULT_ALLOWED_HOSTS = ("evergreen.example.com",)
HALVES = ("tune", "holdout")


@dataclass(frozen=True)
class Sample:
    """One text (or several fields of one version) and the kinds a scan must report (none: benign)."""

    id: str
    half: str
    lang: str
    fields: Mapping[str, str]
    kinds: frozenset[str] = frozenset()
    allowed_hosts: tuple[str, ...] = DEFAULT_ALLOWED_HOSTS
    technique: str = ""
    source: str = "hand-written"
    variant: str = ""

    @property
    def attack(self) -> bool:
        return bool(self.kinds)


@dataclass(frozen=True)
class Corpus:
    attacks: Sequence[Sample]
    benign: Sequence[Sample]


def half_of(record_id: str) -> str:
    """Stable and blind: which half a record lands in does not depend on its content."""
    return HALVES[hashlib.sha1(record_id.encode(), usedforsecurity=False).digest()[0] % 2]


def load_corpus(directory: Path, *, demo: Path | None = None) -> Corpus:
    attacks = list(_attacks(directory / "attacks.jsonl"))
    benign = list(_benign(directory / "benign.jsonl"))
    if demo is not None:
        benign.extend(demo_samples(demo))
    return Corpus(attacks, benign)


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path.name} line {number}: {error.msg}") from error


def _attacks(path: Path) -> Iterator[Sample]:
    for record in _records(path):
        base = Sample(
            str(record["id"]),
            half=half_of(str(record["id"])),
            lang=str(record["lang"]),
            fields={str(record.get("field", "body")): str(record["text"])},
            kinds=frozenset(str(kind) for kind in record["kinds"]),
            allowed_hosts=tuple(record.get("allowed_hosts", DEFAULT_ALLOWED_HOSTS)),
            technique=str(record.get("technique", "")),
        )
        yield base
        for variant in record.get("variants", ()):
            transform, added = TRANSFORMS[variant]
            yield dataclasses.replace(
                base,
                id=f"{base.id}~{variant}",
                fields={name: transform(text) for name, text in base.fields.items()},
                kinds=(base.kinds & SURVIVING_KINDS) | frozenset(added),
                variant=variant,
            )


def _benign(path: Path) -> Iterator[Sample]:
    for record in _records(path):
        fields = record.get("fields") or {"body": record["text"]}
        yield Sample(
            str(record["id"]),
            half=half_of(str(record["id"])),
            lang=str(record.get("lang", "")),
            fields={str(k): str(v) for k, v in fields.items()},
            allowed_hosts=tuple(record.get("allowed_hosts", DEFAULT_ALLOWED_HOSTS)),
            source=str(record.get("source", "hand-written")),
        )


def demo_samples(demo: Path) -> Iterator[Sample]:
    """The demo namespace's entries, docs, prompt packs and rules: the project's own agent-facing text."""
    namespace = json.loads((demo / "namespace.json").read_text(encoding="utf-8"))
    base_url = str(namespace.get("base_url", ""))
    hosts = (base_url.split("://", 1)[-1].split("/", 1)[0] or DEFAULT_ALLOWED_HOSTS[0],)
    for record in _records(demo / "entries.jsonl"):
        fields = {name: str(record.get(name, "")) for name in ("title", "summary", "body")}
        fields["tags"] = " ".join(str(tag) for tag in record.get("tags", ()))
        sample_id = f"demo-entry-{record['id']}"
        yield Sample(
            sample_id, half_of(sample_id), "zh", fields, allowed_hosts=hosts, source="knowledge/demo/entries.jsonl"
        )
    for path in sorted((demo / "docs").glob("*.md")) + sorted((demo / "prompt_packs").glob("*.md")):
        sample_id = f"demo-{path.parent.name}-{path.stem}"
        source = f"knowledge/demo/{path.parent.name}/{path.name}"
        yield Sample(
            sample_id,
            half_of(sample_id),
            "zh",
            {"body": path.read_text(encoding="utf-8")},
            allowed_hosts=hosts,
            source=source,
        )
    rules = "\n".join(str(rule) for rule in namespace.get("rules", ()))
    yield Sample(
        "demo-rules",
        half_of("demo-rules"),
        "zh",
        {"rules": rules},
        allowed_hosts=hosts,
        source="knowledge/demo/namespace.json",
    )
