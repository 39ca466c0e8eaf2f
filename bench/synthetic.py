"""Seeded synthetic namespaces of any size, grown from the shared collections (Chinese and English)."""

from __future__ import annotations

import random
import re

from bench.datasets import load_dev_queries, load_documents
from knowledge.retrieval.documents import Document
from knowledge.retrieval.tokens import entry_tokens

_SENTENCES = re.compile(r"(?<=[。！？；])|(?<= \. )")


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCES.split(text) if s.strip()] or [text]


def build_namespace(size: int, *, seed: int = 20260902) -> list[Document]:
    """`size` entries: the real ones first (so dev queries keep their answers), then new entries
    stitched from random sentences of two real entries of the same language, sorted by ID.

    The real entries are taken in a seeded shuffled order, so a namespace smaller than the two
    collections holds both languages in proportion (1k entries: about 670 English, 330 Chinese)
    and every size answers the same mix of queries.
    """
    real = load_documents("cranfield") + load_documents("cmrc2018")
    rng = random.Random(seed)
    pools = [[d for d in real if d.id.startswith("CRAN")], [d for d in real if d.id.startswith("CMRC")]]
    split = [[_sentences(d.body) for d in pool] for pool in pools]
    documents = random.Random(seed + 1).sample(real, min(size, len(real)))
    for number in range(size - len(documents)):
        language = number % 2
        pool, sentences = pools[language], split[language]
        a, b = rng.randrange(len(pool)), rng.randrange(len(pool))
        picked = rng.sample(sentences[a], min(3, len(sentences[a]))) + rng.sample(
            sentences[b], min(3, len(sentences[b]))
        )
        title = pool[a].title[:40]
        body = ("" if language else " ").join(picked)
        documents.append(
            Document(
                id=f"SYN-{number:06d}",
                category=("fact", "rule", "workflow")[number % 3],
                title=title,
                summary="",
                body=body,
                tags=(),
                confidence=round(0.8 + 0.2 * rng.random(), 2),
                tokens=entry_tokens(title=title, summary="", body=body),
            )
        )
    return sorted(documents, key=lambda d: d.id)


def sample_queries(count: int, *, seed: int = 7) -> list[str]:
    """Half English, half Chinese dev questions (the test split is never read)."""
    rng = random.Random(seed)
    english = [q.text for q in load_dev_queries("cranfield")]
    chinese = [q.text for q in load_dev_queries("cmrc2018")]
    picked = rng.sample(english, min(count // 2, len(english))) + rng.sample(chinese, count - count // 2)
    rng.shuffle(picked)
    return picked
