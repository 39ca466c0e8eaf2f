"""Synonym sets kept by editors: reviewed like entries, part of the release, applied at query time."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from gateway.cache import reply_cache_clear
from knowledge.errors import InvalidInputError, NotAllowedError
from knowledge.models import AuditRecord, Namespace, SynonymSet, SynonymVersion, VersionState
from knowledge.retrieval.synonyms import SynonymSet as SynonymRule
from knowledge.selectors.serving import serving_caches_clear
from knowledge.selectors.snapshots import published_synonyms, snapshot_read
from knowledge.services.entries import entry_create
from knowledge.services.releases import release_build
from knowledge.services.synonyms import (
    SynonymContent,
    SynonymError,
    synonym_approve,
    synonym_draft,
    synonym_publish,
    synonym_reject,
    synonym_save,
    synonym_set_create,
    synonym_sets_apply,
    synonym_submit,
)
from knowledge.services.versions import version_approve, version_publish, version_submit
from knowledge.workflow import TransitionError
from tests.factories import content

pytestmark = pytest.mark.django_db

RATE_LIMIT = SynonymContent.build(phrases=["rate limit", "限流"])


def create(ns: Namespace, editor: Any, phrases: SynonymContent = RATE_LIMIT) -> SynonymVersion:
    return synonym_set_create(namespace=ns, name="rate limit", content=phrases, actor=editor)[1]


def publish(version: SynonymVersion, editor: Any, reviewer: Any) -> SynonymVersion:
    synonym_submit(version=version, actor=editor)
    synonym_approve(version=version, actor=reviewer)
    return synonym_publish(version=version, actor=reviewer)


def chinese_entry(ns: Namespace, editor: Any, reviewer: Any) -> None:
    version = entry_create(
        namespace=ns,
        category=ns.categories.get(slug="fact"),
        content=content(title="限流规则", summary="每个密钥每分钟一百二十次请求。", body="超过限流返回 429。", tags=[]),
        actor=editor,
    )
    version_submit(version=version, actor=editor)
    version_approve(version=version, actor=reviewer)
    version_publish(version=version, actor=reviewer)


def test_a_set_goes_live_only_through_review_and_is_audited(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    version = create(ns_a, editor)
    assert published_synonyms(namespace=ns_a) == ()  # a draft serves nobody
    synonym_submit(version=version, actor=editor)
    synonym_approve(version=version, actor=reviewer)
    assert published_synonyms(namespace=ns_a) == ()  # approved is not yet published
    synonym_publish(version=version, actor=reviewer)
    assert snapshot_read(namespace=ns_a).synonyms == (SynonymRule(phrases=("rate limit", "限流"), two_way=True),)
    trail = list(
        AuditRecord.objects.filter(namespace=ns_a, field="synonym_set")
        .order_by("pk")
        .values_list("action", "from_state", "to_state")
    )
    assert trail == [
        ("synonyms_create", "", "draft"),
        ("synonyms_submit", "draft", "in_review"),
        ("synonyms_approve", "in_review", "approved"),
        ("synonyms_publish", "approved", "published"),
    ]


def test_the_author_cannot_approve_their_own_set(ns_a: Namespace, editor: Any) -> None:
    editor.memberships.create(namespace=ns_a, role="reviewer")
    version = create(ns_a, editor)
    synonym_submit(version=version, actor=editor)
    with pytest.raises(NotAllowedError, match="four eyes"):
        synonym_approve(version=version, actor=editor)
    version.refresh_from_db()
    assert version.state == VersionState.IN_REVIEW


def test_an_editor_cannot_publish_and_a_published_version_cannot_be_edited(
    ns_a: Namespace, editor: Any, reviewer: Any
) -> None:
    version = create(ns_a, editor)
    synonym_submit(version=version, actor=editor)
    synonym_approve(version=version, actor=reviewer)
    with pytest.raises(NotAllowedError, match="reviewer"):
        synonym_publish(version=version, actor=editor)
    live = synonym_publish(version=version, actor=reviewer)
    with pytest.raises(InvalidInputError, match="only drafts"):
        synonym_save(version=live, content=SynonymContent.build(phrases=["a b", "c d"]), actor=editor)
    with pytest.raises(TransitionError):
        synonym_submit(version=live, actor=editor)


def test_a_change_in_review_leaves_the_live_version_serving_until_it_is_published(
    ns_a: Namespace, editor: Any, reviewer: Any
) -> None:
    live = publish(create(ns_a, editor), editor, reviewer)
    draft = synonym_draft(synonym_set=live.synonym_set, actor=editor)
    assert draft.number == 2 and draft.phrases == live.phrases
    synonym_save(version=draft, content=SynonymContent.build(phrases=["rate limit", "限流", "频率限制"]), actor=editor)
    synonym_submit(version=draft, actor=editor)
    assert published_synonyms(namespace=ns_a)[0].phrases == ("rate limit", "限流")
    synonym_reject(version=draft, actor=reviewer, note="频率限制 is not used in our entries")
    assert published_synonyms(namespace=ns_a)[0].phrases == ("rate limit", "限流")
    again = synonym_draft(synonym_set=live.synonym_set, actor=editor)
    synonym_save(
        version=again, content=SynonymContent.build(phrases=["rate limit", "限流"], enabled=False), actor=editor
    )
    publish(again, editor, reviewer)
    live.refresh_from_db()
    assert live.state == VersionState.SUPERSEDED
    assert published_synonyms(namespace=ns_a) == ()  # switched off, through review


@pytest.mark.parametrize(
    ("phrases", "code"),
    [
        (["rate limit"], "synonyms.too_few"),
        (["rate limit", " rate   limit "], "synonyms.too_few"),
        (["rate limit", "the of and"], "synonyms.no_terms"),
        (["rate limit", "x" * 201], "synonyms.too_long"),
        ([f"phrase {i}" for i in range(21)], "synonyms.too_many"),
    ],
)
def test_bad_sets_are_refused_with_a_code_and_write_nothing(
    ns_a: Namespace, editor: Any, phrases: list[str], code: str
) -> None:
    with pytest.raises(SynonymError) as refused:
        synonym_set_create(namespace=ns_a, name="bad", content=SynonymContent.build(phrases=phrases), actor=editor)
    assert refused.value.code == code
    assert not SynonymSet.objects.exists()


def test_a_published_set_reaches_agents_with_the_next_release(
    client: Any, ns_a: Namespace, editor: Any, reviewer: Any
) -> None:
    chinese_entry(ns_a, editor, reviewer)
    release_build(namespace_id=ns_a.pk)
    before = client.get("/t/alpha/api/context", {"topic": "rate limit", "explain": "1"}).json()
    assert before["matched"] is False
    assert before["explain"]["matching"]["mode"] == "fallback"  # no entry shares a word with the English topic
    assert before["explain"]["analysis"]["synonyms"] == []

    publish(create(ns_a, editor), editor, reviewer)
    release_build(namespace_id=ns_a.pk)
    serving_caches_clear()  # the namespace's release is cached in-process for a second
    reply_cache_clear()
    after = client.get("/t/alpha/api/context", {"topic": "rate limit", "explain": "1"}).json()
    assert [e["title"] for e in after["entries"]][:1] == ["限流规则"]
    assert after["explain"]["matching"]["mode"] in ("match", "weak")  # found by its words now
    assert after["explain"]["analysis"]["synonyms"] == [{"terms": "rate limit", "alsoSearched": ["限流"]}]


def test_applying_a_file_publishes_once_and_again_changes_nothing(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    sets = [("rate limit", RATE_LIMIT), ("mcp", SynonymContent.build(phrases=["MCP", "Model Context Protocol"]))]
    assert synonym_sets_apply(namespace=ns_a, sets=sets, author=editor, reviewer=reviewer) == 2
    assert synonym_sets_apply(namespace=ns_a, sets=sets, author=editor, reviewer=reviewer) == 0
    assert [s.phrases for s in published_synonyms(namespace=ns_a)] == [
        ("MCP", "Model Context Protocol"),
        ("rate limit", "限流"),
    ]


def test_the_admin_creates_a_draft_and_moves_it_through_review(
    client: Any, ns_a: Namespace, editor: Any, reviewer: Any
) -> None:
    editor.is_staff = reviewer.is_staff = True
    editor.save()
    reviewer.save()
    client.force_login(editor)
    response = client.post(
        reverse("admin:knowledge_synonymset_add"),
        {"namespace": ns_a.pk, "name": "rate limit", "phrases": "rate limit\n限流", "two_way": "on", "enabled": "True"},
    )
    version = SynonymVersion.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:knowledge_synonymversion_change", args=[version.pk])
    page = client.get(response["Location"]).content.decode()
    assert "限流" in page and "Submit for review" in page
    transition = "admin:knowledge_synonymversion_transition"
    client.post(reverse(transition, args=[version.pk, "submit"]))
    client.post(reverse(transition, args=[version.pk, "approve"]))  # the author may not: refused, nothing changes
    version.refresh_from_db()
    assert version.state == VersionState.IN_REVIEW
    client.force_login(reviewer)
    client.post(reverse(transition, args=[version.pk, "approve"]))
    client.post(reverse(transition, args=[version.pk, "publish"]))
    version.refresh_from_db()
    assert version.state == VersionState.PUBLISHED
    assert version.synonym_set.live_version_id == version.pk


def test_the_admin_refuses_a_set_with_one_phrase_as_a_form_error(client: Any, ns_a: Namespace, editor: Any) -> None:
    editor.is_staff = True
    editor.save()
    client.force_login(editor)
    response = client.post(
        reverse("admin:knowledge_synonymset_add"),
        {"namespace": ns_a.pk, "name": "lonely", "phrases": "rate limit", "two_way": "on"},
    )
    assert response.status_code == 200
    assert "at least two different phrases" in response.content.decode()
    assert not SynonymSet.objects.exists()
