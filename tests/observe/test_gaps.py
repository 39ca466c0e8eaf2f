"""The knowledge-gap report: unanswered topics grouped by informative terms, a one-click draft, dismissal, a digest."""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core import mail

from knowledge.models import EntryVersion, GapStatus, KnowledgeGap, Namespace, Role, VersionState
from knowledge.services.gaps import gaps_digest
from tests.factories import UserFactory, membership
from tests.observe.logged import logging_on, written

pytestmark = pytest.mark.django_db
__all__ = ["logging_on"]

UNANSWERED = ["zeppelin hangar fuel", "fuel for the zeppelin hangar", "how much fuel does a zeppelin burn"]


def ask(client: Any, namespace: str, *topics: str) -> None:
    for topic in topics:
        assert client.get(f"/t/{namespace}/api/context", {"topic": topic}).status_code == 200


def test_unanswered_topics_are_grouped_by_their_informative_terms(
    client: Any, alpha: Namespace, logging_on: None
) -> None:
    ask(client, "alpha", *UNANSWERED, "alpha ships every tuesday", "zeppelin hangar fuel")
    rows = written()
    assert [r.matched for r in rows] == [False, False, False, True, False]

    (gap,) = KnowledgeGap.objects.filter(namespace=alpha)
    assert "zeppelin" in gap.terms and "fuel" in gap.terms
    assert gap.count == 4 and gap.channels == ["rest"]
    assert gap.example == "zeppelin hangar fuel"  # the latest
    assert gap.topics == ["zeppelin hangar fuel", UNANSWERED[2], UNANSWERED[1]]
    assert gap.first_seen <= gap.last_seen and gap.status == GapStatus.OPEN


def test_the_report_shows_a_namespaces_gaps_to_its_members_only(
    client: Any, alpha: Namespace, beta: Namespace, editor: Any, outsider: Any, logging_on: None
) -> None:
    ask(client, "alpha", "zeppelin hangar fuel")
    ask(client, "beta", "quantum chromodynamics lecture")
    written()
    client.force_login(editor)
    page = client.get("/admin/knowledge/knowledgegap/").content.decode()
    assert "zeppelin hangar fuel" in page and "quantum" not in page
    client.force_login(outsider)
    page = client.get("/admin/knowledge/knowledgegap/").content.decode()
    assert "quantum chromodynamics lecture" in page and "zeppelin" not in page


def test_one_click_opens_a_prefilled_draft_and_takes_the_gap_off_the_list(
    client: Any, alpha: Namespace, editor: Any, logging_on: None
) -> None:
    ask(client, "alpha", *UNANSWERED)
    written()
    gap = KnowledgeGap.objects.get()
    client.force_login(editor)
    response = client.get(f"/admin/knowledge/knowledgegap/{gap.pk}/draft/")
    target = urlsplit(response["Location"])
    assert response.status_code == 302 and target.path == "/admin/knowledge/entry/add/"
    initial = parse_qs(target.query)
    assert initial["title"] == [gap.example] and "zeppelin" in initial["tags"][0]
    form = client.get(response["Location"]).context["adminform"].form
    assert form.initial["title"] == gap.example
    gap.refresh_from_db()
    assert gap.status == GapStatus.DRAFTED and gap.status_by == editor


def test_an_outsider_cannot_open_or_dismiss_another_namespaces_gap(
    client: Any, alpha: Namespace, outsider: Any, logging_on: None
) -> None:
    ask(client, "alpha", "zeppelin hangar fuel")
    written()
    gap = KnowledgeGap.objects.get()
    client.force_login(outsider)
    assert client.get(f"/admin/knowledge/knowledgegap/{gap.pk}/draft/").status_code == 404
    client.post("/admin/knowledge/knowledgegap/", {"action": "dismiss", "_selected_action": [gap.pk]})
    gap.refresh_from_db()
    assert gap.status == GapStatus.OPEN


def test_dismissed_gaps_keep_counting_but_leave_the_digest(
    client: Any, alpha: Namespace, editor: Any, logging_on: None
) -> None:
    reviewer = membership(UserFactory(username="rhea", email="rhea@example.com"), alpha, Role.REVIEWER)
    ask(client, "alpha", *UNANSWERED, "quantum chromodynamics lecture")
    written()
    assert gaps_digest() == 1
    (message,) = mail.outbox
    assert message.to == [reviewer.email]
    assert "zeppelin" in message.body and "asked 3×" in message.body and "quantum" in message.body

    client.force_login(editor)
    zeppelin = next(gap for gap in KnowledgeGap.objects.all() if "zeppelin" in gap.terms)
    client.post("/admin/knowledge/knowledgegap/", {"action": "dismiss", "_selected_action": [zeppelin.pk]})
    ask(client, "alpha", "zeppelin hangar fuel")
    written()
    zeppelin.refresh_from_db()
    assert zeppelin.status == GapStatus.DISMISSED and zeppelin.count == 4
    mail.outbox.clear()
    gaps_digest()
    assert "zeppelin" not in mail.outbox[0].body and "quantum" in mail.outbox[0].body


def test_a_gap_can_become_an_alias_of_an_existing_entry_in_its_draft(
    client: Any, alpha: Namespace, editor: Any, logging_on: None
) -> None:
    ask(client, "alpha", "zeppelin hangar fuel")
    written()
    gap = KnowledgeGap.objects.get()
    client.force_login(editor)
    page = client.get(f"/admin/knowledge/knowledgegap/{gap.pk}/attach/")
    assert page.status_code == 200 and "zeppelin hangar fuel" in page.content.decode()
    refused = client.post(f"/admin/knowledge/knowledgegap/{gap.pk}/attach/", {"entry_id": "BE-001"})
    assert refused.status_code == 200 and "not a live entry of alpha" in refused.content.decode()
    done = client.post(f"/admin/knowledge/knowledgegap/{gap.pk}/attach/", {"entry_id": "al-001"})
    draft = EntryVersion.objects.get(entry__public_id="AL-001", state=VersionState.DRAFT)
    assert done["Location"] == f"/admin/knowledge/entryversion/{draft.pk}/change/"
    assert "zeppelin hangar fuel" in draft.aliases
    gap.refresh_from_db()
    assert gap.status == GapStatus.DRAFTED


def test_gap_terms_prefer_rare_and_specific_words_and_close_topics_join_one_gap() -> None:
    from knowledge.retrieval.analysis import AnalyzerConfig
    from knowledge.retrieval.gaps import gap_match, gap_terms

    idf = {"price": 0.5, "zeppelin": 2.0, "fuel": 2.0, "hangar": 2.0, "burn": 2.0, "much": 2.0}
    terms = gap_terms(
        "How much fuel does a zeppelin burn?", analyzer=AnalyzerConfig(), idf_of=lambda t: idf.get(t, 2.0)
    )
    assert terms == ("burn", "fuel", "zeppelin")
    groups = [("fuel hangar zeppelin", frozenset({"fuel", "hangar", "zeppelin"})), ("price", frozenset({"price"}))]
    assert gap_match(terms, groups) == "fuel hangar zeppelin"
    assert gap_match(("price",), groups) == "price"
    assert gap_match(("burn", "much"), groups) is None


def test_attaching_a_gap_keeps_every_field_of_the_entry_it_drafts_from(
    client: Any, alpha: Namespace, editor: Any, logging_on: None
) -> None:
    """The draft once kept only title, text, tags, confidence and links: an entry scoped to paths, held
    internal or due to expire went back to review unscoped, public and open-ended."""
    EntryVersion.objects.filter(entry__public_id="AL-001", state=VersionState.PUBLISHED).update(
        paths=["src/billing/*.py"], sensitivity="internal", valid_until=date(2031, 1, 31)
    )
    ask(client, "alpha", "zeppelin hangar fuel")
    written()
    client.force_login(editor)
    client.post(f"/admin/knowledge/knowledgegap/{KnowledgeGap.objects.get().pk}/attach/", {"entry_id": "AL-001"})
    draft = EntryVersion.objects.get(entry__public_id="AL-001", state=VersionState.DRAFT)
    assert "zeppelin hangar fuel" in draft.aliases
    assert (draft.paths, draft.sensitivity, draft.valid_until) == (["src/billing/*.py"], "internal", date(2031, 1, 31))
