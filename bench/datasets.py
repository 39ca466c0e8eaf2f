"""Loading the shared evaluation collections (dev split only) and a tiny budget packer."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from evergreen_site.settings.env import Env
from evergreen_site.settings.evergreen import datasets_directory
from knowledge.retrieval.documents import Document
from knowledge.retrieval.tokens import entry_tokens

DATASETS = datasets_directory(Env())
COLLECTIONS = ("cranfield", "cmrc2018")
BUDGET = 2000


@dataclass(frozen=True)
class EvalQuery:
    id: str
    text: str
    relevant: dict[str, int]


def load_documents(collection: str) -> list[Document]:
    """Entries as the engine sees them: no summary/tags in these files, confidence 1.0."""
    documents = []
    with open(DATASETS / collection / "entries.jsonl", encoding="utf-8") as lines:
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


def load_dev_queries(collection: str) -> list[EvalQuery]:
    """Dev-split queries only: the test split measures the product and is never read here."""
    queries = []
    with open(DATASETS / collection / "queries.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row.get("split") != "dev":
                continue
            queries.append(EvalQuery(row["id"], row["text"], {k: int(v) for k, v in row["relevant"].items()}))
    return queries


def pack_greedily(ranked: Iterable[tuple[str, int]], budget: int = BUDGET, cheapest: int = 0) -> list[str]:
    """Rank order, skip what does not fit, stop once nothing can fit (the real packer's semantics)."""
    packed: list[str] = []
    left = budget
    for entry_id, tokens in ranked:
        if tokens <= left:
            packed.append(entry_id)
            left -= tokens
        if left < cheapest:
            break
    return packed


def progress(items: Sequence[object], label: str) -> Iterator[int]:
    """Indices with a progress line on stderr every 10 %."""
    step = max(1, len(items) // 10)
    for index in range(len(items)):
        if index % step == 0:
            print(f"  {label}: {index}/{len(items)}", file=sys.stderr, flush=True)
        yield index
