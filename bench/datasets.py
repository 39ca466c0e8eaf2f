"""Loading the development collections (dev split only): the shared ones and the project's own."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from evergreen_site.settings.env import Env
from evergreen_site.settings.evergreen import datasets_directory
from knowledge.retrieval.documents import Document
from knowledge.retrieval.evaluation import EvalQuestion, questions_parse
from knowledge.retrieval.tokens import entry_tokens

DATASETS = datasets_directory(Env())
# Development collections that ship with the project (bench/collections/<name>/README.md: provenance).
OWN = Path(__file__).resolve().parent / "collections"
COLLECTIONS = ("cranfield", "cmrc2018", "pylibs")


def collection_dir(collection: str) -> Path:
    """Where a collection's entries.jsonl and queries.jsonl are: the project's own, else the shared ones."""
    own = OWN / collection
    return own if (own / "entries.jsonl").exists() else DATASETS / collection


BUDGET = 2000


def load_documents(collection: str) -> list[Document]:
    """Entries as the engine sees them: no summary/tags in these files, confidence 1.0."""
    documents = []
    with open(collection_dir(collection) / "entries.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            documents.append(
                Document(
                    id=row["id"],
                    category="fact",
                    title=row["title"],
                    summary="",
                    body=row["body"],
                    tags=(),
                    confidence=1.0,
                    tokens=entry_tokens(title=row["title"], summary="", body=row["body"]),
                )
            )
    return sorted(documents, key=lambda d: d.id)


def load_dev_queries(collection: str) -> list[EvalQuestion]:
    """Dev-split queries only: the test split measures the product and is never read here
    (questions_parse drops a line of another split before looking at anything else of it)."""
    with open(collection_dir(collection) / "queries.jsonl", encoding="utf-8") as lines:
        return questions_parse(lines, split="dev")


def progress(items: Sequence[object], label: str) -> Iterator[int]:
    """Indices with a progress line on stderr every 10 %."""
    step = max(1, len(items) // 10)
    for index in range(len(items)):
        if index % step == 0:
            print(f"  {label}: {index}/{len(items)}", file=sys.stderr, flush=True)
        yield index
