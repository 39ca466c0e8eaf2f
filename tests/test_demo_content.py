"""The demo namespace's data files (knowledge/demo/) hold the seed §6 knowledge base and its companions.

Pure tests: they read the files and never touch the database, so they run with `-p no:django`.
"""

from __future__ import annotations

import json
import math
import re
import string
from datetime import date
from itertools import pairwise
from pathlib import Path

import pytest

from knowledge.retrieval.calibration import threshold_automatic
from knowledge.retrieval.index import SearchIndex, SearchOptions
from knowledge.retrieval.synonyms import SynonymSet
from knowledge.retrieval.tokens import entry_tokens
from tests.retrieval.helpers import demo_documents

DEMO = Path(__file__).resolve().parent.parent / "knowledge" / "demo"

# Seed §6 "条目索引": id -> (title, category, confidence, tokens, updated).
SEED_ENTRIES: dict[str, tuple[str, str, float, int, str]] = {
    "EG-001": ("Evergreen 是什么", "fact", 0.99, 210, "2026-08-28"),
    "EG-002": ("用户如何把 Evergreen 交给 AI", "fact", 0.98, 238, "2026-08-30"),
    "EG-003": ("效果数据来源与口径", "fact", 0.95, 224, "2026-09-02"),
    "EG-101": ("端点清单与调用契约", "protocol", 0.99, 466, "2026-09-01"),
    "EG-102": ("MCP 工具签名", "protocol", 0.98, 224, "2026-08-29"),
    "EG-201": ("引用与置信度规范", "rule", 0.97, 244, "2026-08-25"),
    "EG-202": ("Token 预算纪律", "rule", 0.96, 179, "2026-08-25"),
    "EG-301": ("信噪比优先于信息量", "principle", 0.94, 229, "2026-08-20"),
    "EG-302": ("可验证性即准确性", "principle", 0.95, 212, "2026-08-20"),
    "EG-303": ("一次抓取，多轮复用", "principle", 0.93, 203, "2026-08-18"),
    "EG-304": ("为 Agent 写文档，不是为人写文档", "principle", 0.94, 214, "2026-08-18"),
    "EG-401": ("Agent 接入标准流程", "workflow", 0.97, 257, "2026-08-30"),
    "EG-402": ("把自己的网站改造成 Evergreen", "workflow", 0.96, 284, "2026-09-01"),
    "EG-403": ("评测接入效果的对照方法", "workflow", 0.92, 247, "2026-08-27"),
    "EG-501": ("常见误解澄清", "fact", 0.97, 247, "2026-08-31"),
}

TOKEN_TOLERANCE = 0.15
ENTRY_FIELDS = {
    "id",
    "title",
    "summary",
    "body",
    "tags",
    "aliases",
    "category",
    "confidence",
    "links",
    "updated",
}
CATEGORY_SLUGS = {"fact", "protocol", "rule", "principle", "workflow"}
REFUSAL = "Evergreen 知识库中无此条目"
DOC_SLUGS = {
    "protocol-stack",
    "migration",
    "knowledge-format",
    "context-engineering",
    "evaluation",
    "rules-citation",
    "rules-budget",
    "prompt-pack-chat",
    "prompt-pack-coding",
    "prompt-pack-research",
    "prompt-pack-support",
    "faq-misconceptions",
    "reference-server",
    "changelog",
}
SCENARIOS = ("chat", "coding", "research", "support")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _jsonl(name: str) -> list[dict]:
    lines = (DEMO / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def entries() -> list[dict]:
    return _jsonl("entries.jsonl")


@pytest.fixture(scope="module")
def by_id(entries: list[dict]) -> dict[str, dict]:
    return {e["id"]: e for e in entries}


@pytest.fixture(scope="module")
def namespace() -> dict:
    return json.loads((DEMO / "namespace.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    return _jsonl("golden_questions.jsonl")


# --- entries ---------------------------------------------------------------------------------


def test_entries_are_exactly_the_seed_table_in_order(entries: list[dict]) -> None:
    assert [e["id"] for e in entries] == list(SEED_ENTRIES)


def test_every_entry_has_exactly_the_import_fields(entries: list[dict]) -> None:
    for e in entries:
        assert set(e) == ENTRY_FIELDS, e["id"]
        assert e["summary"].strip() and e["body"].strip(), e["id"]


@pytest.mark.parametrize("entry_id", list(SEED_ENTRIES))
def test_entry_metadata_matches_the_seed(by_id: dict[str, dict], entry_id: str) -> None:
    title, category, confidence, _tokens, updated = SEED_ENTRIES[entry_id]
    e = by_id[entry_id]
    assert e["title"] == title
    assert e["category"] == category
    assert e["confidence"] == confidence
    assert e["updated"] == updated
    date.fromisoformat(e["updated"])


@pytest.mark.parametrize("entry_id", list(SEED_ENTRIES))
def test_entry_token_cost_is_within_15_percent_of_the_seed(by_id: dict[str, dict], entry_id: str) -> None:
    e = by_id[entry_id]
    seed_tokens = SEED_ENTRIES[entry_id][3]
    cost = entry_tokens(title=e["title"], summary=e["summary"], body=e["body"])
    assert abs(cost - seed_tokens) <= TOKEN_TOLERANCE * seed_tokens, (
        entry_id,
        cost,
        seed_tokens,
    )


def test_tags_are_three_to_six_lowercase_words(entries: list[dict]) -> None:
    for e in entries:
        assert 3 <= len(e["tags"]) <= 6, e["id"]
        assert len(set(e["tags"])) == len(e["tags"]), e["id"]
        for tag in e["tags"]:
            assert tag == tag.lower() and tag.strip() == tag and tag, (e["id"], tag)


def test_links_point_only_at_other_existing_entries(entries: list[dict], by_id: dict[str, dict]) -> None:
    for e in entries:
        assert 1 <= len(e["links"]) <= 4, e["id"]
        for target in e["links"]:
            assert target in by_id, (e["id"], target)
            assert target != e["id"]


def test_token_budget_entry_is_about_token_and_budget(by_id: dict[str, dict]) -> None:
    # Seed §4: topic "token 预算" ranks EG-202 first; its title, tags and summary carry both terms.
    e = by_id["EG-202"]
    for term in ("token", "预算"):
        assert term in e["title"].lower()
        assert term in e["summary"].lower()
        assert any(term in tag for tag in e["tags"])
    assert {"token", "budget", "efficiency", "cost"} <= set(e["tags"])


def test_no_entry_mentions_the_seed_not_covered_example(entries: list[dict]) -> None:
    # The seed's zero-hit example must stay a zero hit.
    for e in entries:
        assert "量子色动力学" not in json.dumps(e, ensure_ascii=False), e["id"]


def test_citation_rule_keeps_the_refusal_phrase(by_id: dict[str, dict]) -> None:
    assert REFUSAL in by_id["EG-201"]["body"]
    assert "[EG-xxx]" in by_id["EG-201"]["body"]


# --- namespace -------------------------------------------------------------------------------


def test_namespace_metadata(namespace: dict) -> None:
    assert namespace["slug"] == "evergreen"
    assert namespace["prefix"] == "EG"
    assert namespace["language"] == "zh-CN"
    assert namespace["license"] == "CC-BY-4.0"
    assert namespace["contact"] == "agents@evergreen.example.com"
    assert namespace["base_url"] == "https://evergreen.example.com"
    assert namespace["knowledge_version"] == "1.2.0"
    assert namespace["default_budget"] == 2000
    for key in ("name", "title", "summary"):
        assert namespace[key].strip()
    assert "\n" not in namespace["summary"]


def test_namespace_carries_the_five_output_rules(namespace: dict) -> None:
    rules = namespace["rules"]
    assert len(rules) == 5
    assert "[EG-xxx]" in rules[0]
    assert "0.80" in rules[1]
    assert REFUSAL in rules[2]
    assert "truncated=true" in rules[3]
    assert "matched=false" in rules[4] and REFUSAL in rules[4]


def test_categories_are_the_five_seed_categories(namespace: dict) -> None:
    cats = namespace["categories"]
    assert {c["slug"] for c in cats} == CATEGORY_SLUGS
    for c in cats:
        assert c["name"].strip() and c["purpose"].strip()
    blocks = {c["slug"]: [tuple(b) for b in c["blocks"]] for c in cats}
    assert blocks["fact"] == [(0, 99), (500, 599)]
    assert blocks["protocol"] == [(100, 199)]
    assert blocks["rule"] == [(200, 299)]
    assert blocks["principle"] == [(300, 399)]
    assert blocks["workflow"] == [(400, 499)]


def test_category_blocks_do_not_overlap(namespace: dict) -> None:
    spans = sorted(tuple(b) for c in namespace["categories"] for b in c["blocks"])
    for start, end in spans:
        assert 0 <= start <= end
    for (_, prev_end), (next_start, _) in pairwise(spans):
        assert prev_end < next_start


def test_each_entry_number_lies_in_a_block_of_its_category(entries: list[dict], namespace: dict) -> None:
    blocks = {c["slug"]: c["blocks"] for c in namespace["categories"]}
    for e in entries:
        prefix, number = e["id"].split("-")
        assert prefix == namespace["prefix"]
        n = int(number)
        assert any(start <= n <= end for start, end in blocks[e["category"]]), e["id"]


def test_metrics_block_entry_is_a_fact(by_id: dict[str, dict], namespace: dict) -> None:
    fact = next(c for c in namespace["categories"] if c["slug"] == "fact")
    assert by_id["EG-501"]["category"] == "fact"
    assert [500, 599] in fact["blocks"]


def test_faq_has_six_to_eight_answered_questions(namespace: dict) -> None:
    faq = namespace["faq"]
    assert 6 <= len(faq) <= 8
    for item in faq:
        assert set(item) == {"question", "answer"}
        assert item["question"].strip() and item["answer"].strip()


# --- prompt packs and docs -------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_prompt_pack_renders_with_the_base_url(scenario: str) -> None:
    text = (DEMO / "prompt_packs" / f"{scenario}.md").read_text(encoding="utf-8")
    assert "${base_url}" in text
    rendered = string.Template(text).safe_substitute(base_url="https://kb.example.org")
    assert "${" not in rendered
    assert "https://kb.example.org/llms.txt" in rendered
    assert "category=rule&budget=800" in rendered
    assert "/api/context" in rendered
    assert "[EG-xxx]" in rendered
    assert REFUSAL in rendered
    assert "truncated=true" in rendered
    assert "matched=false" in rendered


def test_prompt_packs_are_tailored() -> None:
    packs = {s: (DEMO / "prompt_packs" / f"{s}.md").read_text(encoding="utf-8") for s in SCENARIOS}
    assert "```python" in packs["coding"] and "curl" in packs["coding"]
    assert "budget=4000" in packs["research"]
    assert "客户" in packs["support"]


def test_there_are_exactly_the_fourteen_docs() -> None:
    assert {p.stem for p in (DEMO / "docs").glob("*.md")} == DOC_SLUGS


@pytest.mark.parametrize("slug", sorted(DOC_SLUGS))
def test_doc_starts_with_a_title_and_has_substance(slug: str) -> None:
    text = (DEMO / "docs" / f"{slug}.md").read_text(encoding="utf-8")
    assert text.startswith("# ")
    assert len(_CJK.findall(text)) >= 300, slug


def test_reference_server_lists_the_public_routes() -> None:
    text = (DEMO / "docs" / "reference-server.md").read_text(encoding="utf-8")
    for route in (
        "/llms.txt",
        "/llms-full.txt",
        "/context.json",
        "/api/context",
        "/api/entries/",
        "/api/prompt-pack",
        "/api/metrics",
        "/metrics.json",
        "/mcp",
        "/.well-known/agent-card.json",
        "/ai-policy.json",
        "/ai.txt",
        "/robots.txt",
        "/sitemap.xml",
        "/index.html.md",
        "/schemas/knowledge.schema.json",
        "/docs/<slug>",
        "/t/<namespace>/",
    ):
        assert route in text, route
    assert "PowerShell" not in text


def test_changelog_names_the_starting_release() -> None:
    text = (DEMO / "docs" / "changelog.md").read_text(encoding="utf-8")
    assert "1.2.0" in text and "2026-09-02" in text


# --- golden questions ------------------------------------------------------------------------


def test_golden_questions_format(questions: list[dict]) -> None:
    assert len(questions) >= 36
    ids = [q["id"] for q in questions]
    assert len(set(ids)) == len(ids)
    for q in questions:
        assert set(q) == {"id", "text", "split", "relevant"}
        assert re.fullmatch(r"eg-q-\d{3}", q["id"])
        assert q["split"] in {"dev", "test"}
        assert q["text"].strip()
        assert all(grade in (1, 2) for grade in q["relevant"].values())


def test_golden_questions_refer_only_to_existing_entries(questions: list[dict], by_id: dict[str, dict]) -> None:
    for q in questions:
        for entry_id in q["relevant"]:
            assert entry_id in by_id, (q["id"], entry_id)


def test_every_covered_question_has_an_answer_entry(questions: list[dict]) -> None:
    for q in questions:
        if q["relevant"]:
            assert 2 in q["relevant"].values(), q["id"]


def test_golden_questions_include_not_covered_ones(questions: list[dict]) -> None:
    not_covered = [q for q in questions if not q["relevant"]]
    assert len(not_covered) >= 6
    assert any("量子色动力学" in q["text"] for q in not_covered)
    assert any(_CJK.search(q["text"]) for q in not_covered)
    assert any(not _CJK.search(q["text"]) for q in not_covered)


def test_golden_questions_are_chinese_and_english(questions: list[dict]) -> None:
    chinese = sum(1 for q in questions if _CJK.search(q["text"]))
    english = len(questions) - chinese
    assert chinese >= len(questions) / 3
    assert english >= len(questions) / 3  # English questions over Chinese entries (issue 11)


def test_every_entry_has_english_aliases(entries: list[dict]) -> None:
    for e in entries:
        assert e["aliases"] and all(not _CJK.search(alias) for alias in e["aliases"]), e["id"]


def test_english_dev_questions_find_the_chinese_entry_and_off_topic_ones_are_refused(
    questions: list[dict],
) -> None:
    documents = demo_documents()
    shipped = DEMO / "synonyms.jsonl"
    rows = [json.loads(line) for line in shipped.read_text(encoding="utf-8").splitlines() if line.strip()]
    synonyms = [SynonymSet(tuple(row["phrases"]), row["two_way"]) for row in rows]
    index = SearchIndex.compile(documents, synonyms=synonyms)
    index = index.with_threshold(threshold_automatic(index, documents).threshold, {})
    dev = [q for q in questions if q["split"] == "dev"]
    english = [q for q in dev if q["relevant"] and not _CJK.search(q["text"])]

    in_top_3 = 0
    for q in english:
        ungated = index.search(q["text"], options=SearchOptions(match_threshold=-math.inf))
        top = [index.public_id(hit.position) for hit, _ in zip(ungated, range(3), strict=False)]
        in_top_3 += any(q["relevant"].get(entry_id) == 2 for entry_id in top)

    assert len(english) >= 30
    assert in_top_3 / len(english) >= 0.9
    assert not any(index.search(q["text"]).matched for q in dev if not q["relevant"])


def test_every_entry_answers_some_golden_question(questions: list[dict], by_id: dict[str, dict]) -> None:
    answered = {entry_id for q in questions for entry_id, grade in q["relevant"].items() if grade == 2}
    assert answered == set(by_id)


CHINESE_COUNTS = {4: "四", 5: "五", 6: "六", 7: "七"}


def test_the_mcp_entry_and_pages_name_every_tool_the_server_serves(by_id: dict[str, dict], namespace: dict) -> None:
    from mcp_bridge.tools import build_tools
    from tests.mcp_bridge.fakes import demo_info

    served = [tool.name for tool in build_tools(demo_info())]
    count = f"{CHINESE_COUNTS[len(served)]}个工具"
    entry = by_id["EG-102"]
    table = re.findall(r"^\| `([a-z_]+)` \|", entry["body"], flags=re.MULTILINE)

    assert table == served
    assert count in entry["summary"] and all(name in entry["summary"] for name in served)
    faq = next(item["answer"] for item in namespace["faq"] if "search_context" in item["answer"])
    assert count in faq and all(name in faq for name in served)
    stack = (DEMO / "docs" / "protocol-stack.md").read_text(encoding="utf-8")
    assert count in stack and all(f"`{name}`" in stack for name in served)
