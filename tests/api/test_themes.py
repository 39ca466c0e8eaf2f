"""Themes (issue 16 §3): reviewed texts that group entries; llms.txt lists them with token totals and links one
Markdown file per theme, so an agent can load a theme at a time."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.errors import InvalidInputError
from knowledge.models import Namespace, TextKind
from knowledge.retrieval.render.themes import theme_lines
from knowledge.retrieval.snapshot import Snapshot, ThemeRecord
from knowledge.services.releases import release_build
from knowledge.services.text_kinds import NEEDS_IDS, text_content_clean
from knowledge.services.texts import text_publish_as_system
from tests.retrieval.helpers import demo_namespace
from tests.retrieval.test_paths import RULES
from tests.servingfixtures import alpha_rows, publish

pytestmark = pytest.mark.django_db

THEME = {
    "title": "Token budgets",
    "summary": "How agents size a request.",
    "entries": ["al-201", "AL-001", "AL-999", "AL-003"],
    "position": 0,
}


@pytest.fixture
def themed(ns_a: Namespace) -> Namespace:
    rows = [*alpha_rows(), {**alpha_rows()[0], "id": "AL-003", "title": "Internal plan", "sensitivity": "internal"}]
    publish(ns_a, rows)
    text_publish_as_system(namespace=ns_a, kind=TextKind.THEME, key="budgets", content=THEME, note="test")
    release_build(namespace_id=ns_a.pk)
    return ns_a


def test_llms_txt_lists_each_theme_with_its_entries_and_tokens(client: Any, themed: Namespace) -> None:
    index = client.get("/t/alpha/llms.txt").text
    served = client.get("/t/alpha/context.json").json()["entries"]
    tokens = sum(e["tokens"] for e in served if e["id"] in ("AL-201", "AL-001"))

    line = next(line for line in index.splitlines() if line.startswith("- [Token budgets]"))
    assert line == (
        f"- [Token budgets](https://alpha.example.com/themes/budgets.md): How agents size a request. "
        f"(2 entries, {tokens} tokens)"
    )
    assert index.count("## Themes") == 1 and index.index("## Themes") < index.index("## Optional")


def test_a_theme_file_holds_its_public_entries_in_full_in_the_editors_order(client: Any, themed: Namespace) -> None:
    response = client.get("/t/alpha/themes/budgets.md")

    assert response.status_code == 200 and response["Content-Type"].startswith("text/markdown")
    text = response.text
    assert text.startswith("# Token budgets\n\n> How agents size a request.")
    assert text.index("## [AL-201]") < text.index("## [AL-001]")
    assert "AL-003" not in text and "AL-999" not in text  # internal, and never published: not in a public file
    assert client.get("/t/alpha/themes/nothing.md").status_code == 404


def test_a_theme_names_entry_ids_or_is_refused() -> None:
    with pytest.raises(InvalidInputError) as refused:
        text_content_clean(kind=TextKind.THEME, content={**THEME, "entries": ["budget"]})
    assert str(refused.value) == NEEDS_IDS
    assert text_content_clean(kind=TextKind.THEME, content=THEME)["entries"][0] == "AL-201"


def test_without_themes_llms_txt_has_no_themes_section() -> None:
    snapshot = Snapshot(namespace=demo_namespace(language="en"), entries=RULES)
    assert theme_lines(snapshot) == []
    themed = Snapshot(
        namespace=demo_namespace(language="en"),
        entries=RULES,
        themes=(ThemeRecord("rules", "Rules", "", ("EG-201", "EG-202")),),
    )
    total = sum(e.tokens for e in RULES if e.id in ("EG-201", "EG-202"))
    assert theme_lines(themed)[2].endswith(f"(2 entries, {total} tokens)")
