"""Does routing a topic to themes first help retrieval? Measured on the demo's development questions only.

Run: .venv/bin/python -m bench.theme_routing

The demo's themes are its categories (name and purpose as the theme card, the category's entries as
its members), the first routing layer issue 16 §3 names. Each development question is ranked twice,
plainly and inside its two best themes (knowledge.retrieval.theme_routing), and both rankings are
scored with the suite's metrics. Test-split questions are never read: nothing here may be tuned on them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from knowledge.retrieval.evaluation import ndcg_at_k, pack_recall, reciprocal_rank_at_k
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.ranking import Ranking
from knowledge.retrieval.synonyms import SynonymSet
from knowledge.retrieval.theme_routing import RoutingTheme, ThemeRouter, routed_search
from knowledge.retrieval.tokens import entry_tokens

DEMO = Path(__file__).resolve().parent.parent / "knowledge" / "demo"
DEV = "dev"
TOP = 3  # "hit" = a relevant entry among the first three


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DEMO / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _demo() -> tuple[SearchIndex, ThemeRouter, list[str], list[dict[str, Any]]]:
    from knowledge.retrieval.documents import Document  # keeps the module's imports short

    rows = sorted(_lines("entries.jsonl"), key=lambda r: r["id"])
    documents = [
        Document(
            id=r["id"],
            category=r["category"],
            title=r["title"],
            summary=r["summary"],
            body=r["body"],
            tags=tuple(r["tags"]),
            confidence=r["confidence"],
            tokens=entry_tokens(title=r["title"], summary=r["summary"], body=r["body"]),
            links=tuple(r.get("links", ())),
            aliases=tuple(r.get("aliases", ())),
        )
        for r in rows
    ]
    synonyms = [
        SynonymSet(phrases=tuple(item["phrases"]), two_way=item.get("two_way", True))
        for item in _lines("synonyms.jsonl")
    ]
    index = SearchIndex.compile(documents, synonyms=synonyms)
    spec = json.loads((DEMO / "namespace.json").read_text(encoding="utf-8"))
    themes = [
        RoutingTheme(
            slug=c["slug"],
            title=c["name"],
            summary=c.get("purpose", ""),
            positions=tuple(i for i, d in enumerate(documents) if d.category == c["slug"]),
        )
        for c in spec["categories"]
    ]
    dev = [q for q in _lines("golden_questions.jsonl") if q.get("split", DEV) == DEV and q["relevant"]]
    return index, ThemeRouter(themes, documents), [d.id for d in documents], dev


def _scores(rankings: list[tuple[Ranking, dict[str, int]]], ids: list[str]) -> dict[str, float]:
    ndcg = mrr = hit = 0.0
    for ranking, relevant in rankings:
        ranked = [ids[hit_.position] for hit_, _ in zip(ranking, range(10), strict=False)]
        ndcg += ndcg_at_k(ranked, relevant)
        mrr += reciprocal_rank_at_k(ranked, relevant)
        hit += 1.0 if pack_recall(ranked[:TOP], relevant) > 0 else 0.0
    count = max(len(rankings), 1)
    return {"nDCG@10": ndcg / count, "MRR@10": mrr / count, f"hit@{TOP}": hit / count}


def measure() -> dict[str, dict[str, float]]:
    index, router, ids, dev = _demo()
    plain = [(index.search(q["text"]), q["relevant"]) for q in dev]
    routed = [(routed_search(index, router, q["text"]), q["relevant"]) for q in dev]
    return {"plain": _scores(plain, ids), "routed to 2 themes": _scores(routed, ids), "questions": {"dev": len(dev)}}


def main() -> None:
    results = measure()
    sys.stdout.write(f"Demo, development split: {int(results['questions']['dev'])} covered questions\n")
    for name in ("plain", "routed to 2 themes"):
        cells = "  ".join(f"{metric} {value:.3f}" for metric, value in results[name].items())
        sys.stdout.write(f"{name:>20}: {cells}\n")


if __name__ == "__main__":
    main()
