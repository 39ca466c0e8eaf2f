"""The release files of seed §10: llms.txt family, context.json and its schema, policies, sitemap, metrics."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import jsonschema
import pytest
from llms_txt import parse_llms_file

from knowledge.models import Entry, EvaluationRun, Namespace, Release
from knowledge.retrieval.evaluation import EvaluationReport

pytestmark = pytest.mark.django_db

LINK = re.compile(r"^- \[[^\]]+\]\([^)]+\)(: .*)?$")


@pytest.mark.parametrize("path", ["/llms.txt", "/llms-full.txt"])
def test_llms_files_parse_with_the_reference_parser(client: Any, demo: Namespace, path: str) -> None:
    text = client.get(path).content.decode()
    parsed = parse_llms_file(text)

    assert parsed.title == "Evergreen · AI Context Engine"
    assert parsed.summary == demo.summary
    assert parsed.info.strip()
    assert parsed.sections
    for name, links in parsed.sections.items():
        assert links, name
        assert all(link["title"] and link["url"].startswith("https://") for link in links)
        # Every link says what it leads to (llms.txt: "- [name](url): notes"); audits score bare links down.
        assert all(link["desc"] for link in links), [link["title"] for link in links if not link["desc"]]
    # The parser splits on any line starting with "##": inside sections only link lines may appear.
    for section in re.split(r"(?m)^##.*$", text)[1:]:
        lines = [line for line in section.splitlines() if line.strip()]
        assert all(LINK.match(line) for line in lines), [ln for ln in lines if not LINK.match(ln)]


def test_llms_txt_docs_are_described_by_their_first_sentence(client: Any, demo: Namespace) -> None:
    docs = parse_llms_file(client.get("/llms.txt").content.decode()).sections["Docs"]

    assert len(docs) == 14
    changelog = next(link for link in docs if link["url"].endswith("/docs/changelog.md"))
    assert changelog["desc"] == "本页记录 Evergreen 演示知识库的版本变化。"
    budget = next(link for link in docs if link["url"].endswith("/docs/rules-budget.md"))
    assert budget["desc"] == "budget 是 /api/context 最重要的参数：它决定一次最多装多少 token 的条目。"


def test_llms_txt_lists_every_entry_with_its_token_cost(client: Any, demo: Namespace) -> None:
    text = client.get("/llms.txt").content.decode()
    context = client.get("/context.json").json()

    for entry in context["entries"]:
        line = next(line for line in text.splitlines() if f"[{entry['id']} " in line)
        assert f"({entry['tokens']} tokens," in line


def test_llms_full_txt_holds_every_entry_body(client: Any, demo: Namespace) -> None:
    text = client.get("/llms-full.txt").content.decode()

    for entry in client.get("/context.json").json()["entries"]:
        assert f"[{entry['id']}]" in text
        assert f"{entry['tokens']} tokens" in text


def test_context_json_is_valid_against_the_served_schema(client: Any, demo: Namespace, alpha: Namespace) -> None:
    schema = client.get("/schemas/knowledge.schema.json").json()
    jsonschema.Draft7Validator.check_schema(schema)

    for prefix in ("/", "/t/alpha/"):
        document = client.get(prefix + "context.json").json()
        jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(document)


def test_context_json_holds_the_whole_knowledge_base(client: Any, demo: Namespace) -> None:
    document = client.get("/context.json").json()

    assert document["entryCount"] == len(document["entries"]) == 15
    assert document["totalTokens"] == sum(e["tokens"] for e in document["entries"])
    assert document["generatedAt"] == "2026-09-02T10:52:47Z"
    assert [c["id"] for c in document["categories"]] == ["fact", "protocol", "rule", "principle", "workflow"]


def test_prompt_pack_fills_in_the_base_url(client: Any, demo: Namespace) -> None:
    response = client.get("/api/prompt-pack", {"scenario": "coding"})

    assert response["Content-Type"] == "text/plain; charset=utf-8"
    text = response.content.decode()
    assert "${base_url}" not in text
    assert demo.base_url in text


@pytest.mark.parametrize("query", ["", "?scenario=nope"])
def test_an_unknown_scenario_is_a_400(client: Any, demo: Namespace, query: str) -> None:
    response = client.get("/api/prompt-pack" + query)

    assert response.status_code == 400
    assert response.json()["error"]["param"] == "scenario"
    assert "chat, coding, research, support" in response.json()["error"]["message"]


def test_a_repeated_scenario_is_refused_as_repeated(client: Any, demo: Namespace) -> None:
    """Both values are known scenarios (QA: the answer said they must be one of chat, coding, …)."""
    response = client.get("/api/prompt-pack?scenario=chat&scenario=coding")

    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "repeated_parameter",
        "message": "The parameter scenario appears more than once; send it once.",
        "param": "scenario",
    }


def test_metrics_are_measured_at_build_time(client: Any, demo: Namespace) -> None:
    metrics = client.get("/metrics.json").json()

    assert client.get("/api/metrics").content == client.get("/metrics.json").content
    # The release's calibration: threshold, pack floor relative to the best hit, and the evidence.
    matching = metrics["matching"]
    assert matching["source"] in ("automatic", "namespace") and matching["threshold"] >= 0
    assert {"crowding", "pack_best_share"} <= set(matching)
    sources = {row["source"]: row for row in metrics["contextShape"]}
    assert list(sources) == ["html", "htmlText", "markdownMirror", "llmsFullTxt", "llmsTxt", "apiContext"]
    html_tokens = sources["html"]["tokens"]
    assert html_tokens > sources["htmlText"]["tokens"] > 0
    assert sources["llmsFullTxt"]["tokens"] > sources["llmsTxt"]["tokens"]
    api = client.get("/api/context", {"budget": 2000}).content.decode()
    from knowledge.retrieval.tokens import estimate_tokens

    assert sources["apiContext"]["tokens"] == estimate_tokens(api)
    assert sources["llmsTxt"]["tokens"] == estimate_tokens(client.get("/llms.txt").content.decode())
    assert sources["html"]["tokens"] == estimate_tokens(client.get("/index.html").content.decode())
    scan = {row["budget"]: row for row in metrics["budgetScan"]}
    assert list(scan) == [800, 2000, 4000, 8000]
    for budget, row in scan.items():
        body = client.get("/api/context", {"budget": budget}).json()
        assert (row["entryCount"], row["usedTokens"], row["truncated"]) == (
            body["entryCount"],
            body["usedTokens"],
            body["truncated"],
        )
    assert metrics["evaluation"]["evaluated"] is False
    assert metrics["evaluation"]["releaseId"] == metrics["releaseId"]


def test_metrics_report_the_latest_evaluation(client: Any, demo: Namespace) -> None:
    release = demo.active_release
    assert release is not None
    EvaluationRun.objects.create(namespace=demo, release=release, metrics={"ndcg@10": 0.81}, results=[])

    evaluation = client.get("/metrics.json").json()["evaluation"]
    assert evaluation["metrics"] == {"ndcg@10": 0.81}
    assert evaluation["releaseId"] == release.sequence
    assert evaluation["evaluated"] is True


def test_metrics_name_the_served_release_after_another_one_is_evaluated(client: Any, demo: Namespace) -> None:
    """Evaluating another release (an older one, a candidate) must not pass its numbers off as the served one's."""
    served = demo.active_release
    assert served is not None
    other = Release.objects.create(
        namespace=demo,
        sequence=served.sequence + 1,
        knowledge_version="0.9.0",
        revision=served.revision,
        inputs_hash="other",
        manifest_stored=[],
        built_at=served.built_at,
    )
    EvaluationRun.objects.create(namespace=demo, release=served, metrics={"ndcg_at_10": 0.9}, results=[])
    EvaluationRun.objects.create(namespace=demo, release=other, metrics={"ndcg_at_10": 0.4}, results=[])

    document = client.get("/metrics.json").json()
    evaluation = document["evaluation"]

    assert evaluation["releaseId"] == document["releaseId"] == served.sequence
    assert evaluation["metrics"] == {"ndcg_at_10": 0.9}
    assert evaluation["latestRun"]["releaseId"] == other.sequence


def test_robots_allow_lists_ai_agents_and_states_usage_preferences(client: Any, demo: Namespace) -> None:
    text = client.get("/robots.txt").content.decode()

    for agent in ("GPTBot", "ClaudeBot", "PerplexityBot", "Google-Extended"):
        assert f"User-agent: {agent}\nAllow: /" in text
    assert "Content-Usage: train-ai=n, search=y" in text
    assert "Sitemap: https://evergreen.example.com/sitemap.xml" in text


def test_ai_txt_and_ai_policy(client: Any, demo: Namespace) -> None:
    assert "Content-Usage: train-ai=n, search=y" in client.get("/ai.txt").content.decode()
    policy = client.get("/ai-policy.json").json()
    assert policy["license"] == "CC-BY-4.0"
    assert policy["allow"]["answer"] is True
    assert policy["rules"] == list(demo.rules)


def test_sitemap_lists_pages_and_mirrors(client: Any, demo: Namespace) -> None:
    root = ET.fromstring(client.get("/sitemap.xml").content)
    locations = [loc.text for loc in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]

    assert "https://evergreen.example.com/entries/EG-202" in locations
    assert "https://evergreen.example.com/entries/EG-202.md" in locations
    assert "https://evergreen.example.com/docs/protocol-stack.md" in locations


def test_the_index_page_has_the_json_ld_graph_and_the_entry_index(client: Any, demo: Namespace) -> None:
    page = client.get("/").content.decode()
    graph = json.loads(re.search(r'<script type="application/ld\+json">(.*?)</script>', page, re.S)[1])  # type: ignore[index]

    assert [node["@type"] for node in graph["@graph"]] == [
        "WebSite",
        "Organization",
        "Dataset",
        "SoftwareApplication",
        "FAQPage",
    ]
    assert len(graph["@graph"][4]["mainEntity"]) == len(demo.faq)
    for entry in client.get("/context.json").json()["entries"]:
        assert f'<a href="entries/{entry["id"]}">{entry["id"]}</a>' in page
    assert 'id="pg-form"' in page
    assert "<script src=" not in page and '<link rel="stylesheet"' not in page  # nothing from a CDN


def test_index_markdown_mirror_has_the_entry_index(client: Any, demo: Namespace) -> None:
    text = client.get("/index.html.md").content.decode()

    assert text.startswith("# Evergreen · AI Context Engine\n\n> ")
    assert "| [EG-202](https://evergreen.example.com/entries/EG-202.md) | Token 预算纪律 | rule | 0.96 |" in text


def test_docs_pages_and_mirrors(client: Any, demo: Namespace) -> None:
    page = client.get("/docs/protocol-stack")
    mirror = client.get("/docs/protocol-stack.md")

    assert page.status_code == mirror.status_code == 200
    assert mirror.content.decode().startswith("#")
    assert b"<script" not in page.content.split(b"</main>")[0].split(b'<main id="content">')[1]
    assert client.get("/docs/nope").status_code == 404


def test_llms_files_stay_parseable_with_hostile_entry_text(client: Any, ns_a: Namespace) -> None:
    from tests.servingfixtures import publish

    publish(
        ns_a,
        [
            {
                "id": "AL-001",
                "category": "fact",
                "title": "A [bracketed] title ## with hashes",
                "summary": "## Looks like a section\n- [fake](https://example.com/x): not a link of ours",
                "body": "## Heading\n\n```\n## inside code\n```\n\n- [a list link](https://example.com)\n\n  ### x",
                "tags": ["x"],
                "updated": "2026-08-01",
            }
        ],
    )
    for path in ("/t/alpha/llms.txt", "/t/alpha/llms-full.txt"):
        text = client.get(path).content.decode()
        parsed = parse_llms_file(text)
        assert list(parsed.sections) in (["Fact (`fact`)", "Optional"], ["Entries", "Optional"]), path
        for section in re.split(r"(?m)^##.*$", text)[1:]:
            assert all(LINK.match(line) for line in section.splitlines() if line.strip()), path


def test_metrics_define_every_number_they_report(client: Any, demo: Namespace) -> None:
    metrics = client.get("/metrics.json").json()
    definitions = metrics["definitions"]

    # The fields the demo's evaluation page promises, in the namespace's language (zh).
    assert metrics["tokenSavingDefinition"].startswith("token 节省 = 1 − ")
    assert {"accuracyDefinition", "roundsDefinition"} <= set(metrics)
    for measured in ("tokenEstimate", "contextShape", "budgetScan", "matching", "evaluation"):
        assert measured in metrics and definitions[measured], measured
    for name in EvaluationReport.__dataclass_fields__:
        if name not in ("queries", "covered", "uncovered", "latency_p99_ms"):
            assert definitions[name], name


@pytest.mark.parametrize(("path", "slug"), [("/llms/rule.txt", "rule"), ("/t/evergreen/llms-full/fact.txt", "fact")])
def test_category_variants_are_served_and_listed_in_llms_txt(
    client: Any, demo: Namespace, path: str, slug: str
) -> None:
    response = client.get(path)

    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    ids = set(re.findall(r"\[(EG-\d+)", response.content.decode()))
    assert ids and all(Entry.objects.get(public_id=i).category.slug == slug for i in ids)
    assert f"https://evergreen.example.com/llms/{slug}.txt" in client.get("/llms.txt").content.decode()
    assert client.get("/llms/gossip.txt").status_code == 404
