"""While typing: token cost, sanitised Markdown, warnings and similar entries, for editors of the namespace only."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from knowledge.models import EntryVersion, Namespace
from knowledge.retrieval.tokens import entry_tokens
from knowledge.services.releases import release_build
from tests.admin_ui.conftest import as_user

pytestmark = pytest.mark.django_db
TYPED = {
    "title": "Token budget discipline, again",
    "summary": "Budgets.",
    "body": "Ask for **2000** tokens.<script>alert(1)</script>",
    "confidence": "0.5",
    "updated": "2026-08-25",
    "links": "AL-999",
}


def test_the_preview_counts_tokens_renders_safely_and_warns(editor: Any, revision: EntryVersion) -> None:
    url = reverse("admin:knowledge_entryversion_livepreview", args=[revision.pk])
    answer = as_user(editor).post(url, TYPED).json()
    assert answer["tokens"] == entry_tokens(title=TYPED["title"], summary=TYPED["summary"], body=TYPED["body"])
    assert "<strong>2000</strong>" in answer["html"] and "<script>" not in answer["html"]
    assert any("below 0.80" in w for w in answer["warnings"])
    assert any("Link AL-999 points to no entry" in w for w in answer["warnings"])
    assert answer["similar"] == []  # no release yet: nothing to compare with


def test_similar_entries_come_from_the_serving_release_and_flag_near_duplicates(
    ns_a: Namespace, editor: Any, live: EntryVersion
) -> None:
    release_build(namespace_id=ns_a.pk)
    category = ns_a.categories.get(slug="fact")
    url = reverse("admin:knowledge_category_livepreview", args=[category.pk])
    answer = as_user(editor).post(url, {**TYPED, "title": "Token budget discipline"}).json()
    assert answer["similar"][0] == {"id": live.entry.public_id, "title": live.title, "nearDuplicate": True}
    unrelated = as_user(editor).post(url, {**TYPED, "title": "Budget"}).json()
    assert [s["nearDuplicate"] for s in unrelated["similar"]] == [False]
    own = reverse("admin:knowledge_entryversion_livepreview", args=[live.pk])
    assert as_user(editor).post(own, {**TYPED, "title": "Token budget discipline"}).json()["similar"] == []


def test_only_editors_of_the_namespace_get_a_preview(reviewer: Any, outsider: Any, revision: EntryVersion) -> None:
    url = reverse("admin:knowledge_entryversion_livepreview", args=[revision.pk])
    assert as_user(reviewer).post(url, TYPED).status_code == 403
    assert as_user(outsider).post(url, TYPED).status_code == 404
    assert as_user(reviewer).get(url).status_code == 403
