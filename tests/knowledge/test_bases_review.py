"""Base namespaces are reviewed like every other text (issue 16 §4): proposed, approved by someone else, then live.

The cast: an editor and a reviewer of the product (the namespace that builds on a base), a reviewer
of the company (the base) and an outsider. A list of bases is checked when it is saved, submitted,
approved and published, so a cycle or a lost membership that appears in between is refused then.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse

from knowledge.actors import SYSTEM_USERNAME
from knowledge.errors import SELF_APPROVAL, InvalidInputError, NotAllowedError
from knowledge.models import (
    AuditRecord,
    Membership,
    Namespace,
    NamespaceBase,
    ReviewedText,
    Role,
    TextKind,
    TextVersion,
    VersionState,
)
from knowledge.selectors.layers import bases_list
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.releases import release_build
from knowledge.services.texts import text_approve, text_draft, text_publish, text_save, text_submit
from tests.factories import NamespaceFactory, UserFactory, membership
from tests.knowledge.adminforms import admin_form, as_user
from tests.servingfixtures import bases_declare, publish

pytestmark = pytest.mark.django_db

FACT = {"category": "fact", "summary": "A fact.", "confidence": 0.9, "updated": "2026-08-01"}


@pytest.fixture
def company(db: Any) -> Namespace:
    return publish(
        NamespaceFactory.create(slug="company", prefix="CO", name="Company"),
        [{**FACT, "id": "CO-101", "title": "Support hours", "body": "Support answers on weekdays."}],
    )


@pytest.fixture
def product(ns_a: Namespace) -> Namespace:
    """The namespace that builds on the company: alpha, with the shared cast's editor and reviewer."""
    return publish(ns_a, [{**FACT, "id": "AL-001", "title": "Product fact", "body": "The product ships weekly."}])


@pytest.fixture
def bee(company: Namespace) -> Any:
    """A reviewer of the base, and of nothing else."""
    return membership(UserFactory(username="bee"), company, Role.REVIEWER)


def propose(namespace: Namespace, slugs: list[str], actor: Any) -> TextVersion:
    """The editor's draft of the namespace's bases, saved and submitted."""
    draft = text_draft(namespace=namespace, kind=TextKind.BASES, actor=actor)
    draft = text_save(version=draft, content={"bases": slugs}, expected_lock_version=draft.lock_version, actor=actor)
    return text_submit(version=draft, actor=actor)


def served_ids(namespace: Namespace) -> list[str]:
    release_build(namespace_id=namespace.pk)
    serving_caches_clear()
    return [entry["id"] for entry in Client().get(f"/t/{namespace.slug}/context.json").json()["entries"]]


def test_a_proposed_base_is_served_only_after_another_person_approves_it(
    product: Namespace, company: Namespace, editor: Any, reviewer: Any
) -> None:
    version = propose(product, ["company"], editor)
    assert served_ids(product) == ["AL-001"]  # in review: nothing changes
    assert not NamespaceBase.objects.filter(namespace=product).exists()
    with pytest.raises(NotAllowedError):  # an editor holds no reviewer role
        text_approve(version=version, actor=editor)

    text_approve(version=version, actor=reviewer)
    text_publish(version=version, actor=reviewer)

    assert [base.slug for base in bases_list(namespace=product)] == ["company"]
    assert served_ids(product) == ["AL-001", "CO-101"]  # with the next release
    record = AuditRecord.objects.get(namespace=product, action="namespace-bases")
    assert (record.old_value, record.new_value, record.actor) == ([], ["company"], reviewer)


def test_whoever_wrote_the_list_cannot_approve_it(
    product: Namespace, company: Namespace, editor: Any, reviewer: Any
) -> None:
    membership(reviewer, product, Role.EDITOR)
    draft = text_draft(namespace=product, kind=TextKind.BASES, actor=editor)
    draft = text_save(version=draft, content={"bases": ["company"]}, expected_lock_version=0, actor=reviewer)
    text_submit(version=draft, actor=editor)

    with pytest.raises(NotAllowedError) as refused:
        text_approve(version=draft, actor=reviewer)

    assert str(refused.value) == SELF_APPROVAL
    assert TextVersion.objects.get(pk=draft.pk).state == VersionState.IN_REVIEW


def test_a_reviewer_of_the_base_or_an_outsider_reviews_nothing_here(
    product: Namespace, company: Namespace, editor: Any, bee: Any, outsider: Any
) -> None:
    version = propose(product, ["company"], editor)

    for person in (bee, outsider):
        with pytest.raises(NotAllowedError):
            text_approve(version=version, actor=person)
        with pytest.raises(NotAllowedError):
            text_draft(namespace=product, kind=TextKind.BASES, actor=person)
    assert TextVersion.objects.get(pk=version.pk).state == VersionState.IN_REVIEW


@pytest.mark.parametrize(
    ("slugs", "refusal"),
    [
        (["nowhere"], "No namespace nowhere that every writer of this list can read."),
        (["alpha"], "A namespace cannot build on itself."),
        (["company", "company"], "company is listed twice."),
        (["secret"], "No namespace secret that every writer of this list can read."),  # not a member: as if missing
        (["twin"], "twin uses the ID prefix AL, as alpha does"),
        (["third"], "alpha cannot build on third: third already builds on alpha (third → alpha)"),
        (["Bad slug!"], "must list namespace slugs"),
    ],
)
def test_a_list_that_cannot_be_declared_is_refused_when_proposed(
    product: Namespace, company: Namespace, editor: Any, slugs: list[str], refusal: str
) -> None:
    NamespaceFactory.create(slug="secret", prefix="SE", name="Secret", is_public=False)
    NamespaceFactory.create(slug="twin", prefix="AL", name="Twin")
    bases_declare(NamespaceFactory.create(slug="third", prefix="TH", name="Third"), product)
    draft = text_draft(namespace=product, kind=TextKind.BASES, actor=editor)

    with pytest.raises(InvalidInputError) as refused:
        text_save(version=draft, content={"bases": slugs}, expected_lock_version=0, actor=editor)

    assert refusal in str(refused.value)
    assert TextVersion.objects.get(pk=draft.pk).lock_version == 0  # nothing saved


def test_a_cycle_that_appeared_during_review_is_refused_at_approval(
    product: Namespace, company: Namespace, editor: Any, reviewer: Any
) -> None:
    version = propose(product, ["company"], editor)
    bases_declare(company, product)  # meanwhile the company came to build on the product

    with pytest.raises(InvalidInputError, match=r"alpha cannot build on company: .*\(company → alpha\)"):
        text_approve(version=version, actor=reviewer)
    assert TextVersion.objects.get(pk=version.pk).state == VersionState.IN_REVIEW


def test_a_cycle_that_appeared_after_approval_is_refused_at_publish(
    product: Namespace, company: Namespace, editor: Any, reviewer: Any
) -> None:
    version = text_approve(version=propose(product, ["company"], editor), actor=reviewer)
    bases_declare(company, product)

    with pytest.raises(InvalidInputError, match="company → alpha"):
        text_publish(version=version, actor=reviewer)
    assert TextVersion.objects.get(pk=version.pk).state == VersionState.APPROVED
    assert bases_list(namespace=product) == []


def test_a_private_base_needs_every_writer_to_stay_its_member_until_approval(editor: Any, reviewer: Any) -> None:
    vault = NamespaceFactory.create(slug="vault", prefix="VA", name="Vault", is_public=False)
    inner = NamespaceFactory.create(slug="inner", prefix="IN", name="Inner", is_public=False)
    membership(editor, vault, Role.EDITOR)
    membership(reviewer, vault, Role.REVIEWER)
    draft = text_draft(namespace=vault, kind=TextKind.BASES, actor=editor)
    with pytest.raises(InvalidInputError, match="No namespace inner that every writer"):
        text_save(version=draft, content={"bases": ["inner"]}, expected_lock_version=0, actor=editor)
    membership(editor, inner, Role.EDITOR)
    version = propose(vault, ["inner"], editor)

    Membership.objects.filter(user=editor, namespace=inner).delete()

    with pytest.raises(InvalidInputError, match="No namespace inner that every writer"):
        text_approve(version=version, actor=reviewer)


def test_a_base_that_turned_private_during_review_is_refused_at_approval(
    product: Namespace, company: Namespace, editor: Any, reviewer: Any
) -> None:
    membership(editor, company, Role.EDITOR)  # a writer who may read it: else it is refused as unknown
    version = propose(product, ["company"], editor)
    Namespace.objects.filter(pk=company.pk).update(is_public=False)

    with pytest.raises(InvalidInputError, match="cannot build on the private namespace company"):
        text_approve(version=version, actor=reviewer)


def test_removing_every_base_is_reviewed_too(
    product: Namespace, company: Namespace, editor: Any, reviewer: Any
) -> None:
    bases_declare(product, company)
    version = propose(product, [], editor)
    assert [base.slug for base in bases_list(namespace=product)] == ["company"]

    text_publish(version=text_approve(version=version, actor=reviewer), actor=reviewer)

    assert bases_list(namespace=product) == []


def test_the_admin_proposes_bases_one_slug_a_line_and_shows_a_refusal_at_approval(
    product: Namespace, company: Namespace, editor: Any, reviewer: Any
) -> None:
    editor = as_user(editor)
    added = editor.post(
        reverse("admin:knowledge_reviewedtext_add"), {"namespace": product.pk, "kind": TextKind.BASES, "key": ""}
    )
    draft = TextVersion.objects.get(text__namespace=product, text__kind=TextKind.BASES)
    assert added.status_code == 302 and added["Location"].endswith(f"/{draft.pk}/change/")
    page = reverse("admin:knowledge_textversion_change", args=[draft.pk])
    data = admin_form(editor, page)
    data["bases"] = ["nowhere"]
    assert "No namespace nowhere that every writer of this list can read." in editor.post(page, data, follow=True).text
    data["bases"] = ["company\n"]
    assert editor.post(page, data).status_code == 302
    editor.post(reverse("admin:knowledge_textversion_transition", args=[draft.pk, "submit"]))
    editor.post(reverse("admin:knowledge_textversion_transition", args=[draft.pk, "approve"]))
    assert TextVersion.objects.get(pk=draft.pk).state == VersionState.IN_REVIEW  # an editor does not approve

    bases_declare(company, product)
    reviewer = as_user(reviewer)
    approve = reverse("admin:knowledge_textversion_transition", args=[draft.pk, "approve"])
    refused = reviewer.post(approve, follow=True)
    assert "alpha cannot build on company: company already builds on alpha" in refused.text
    bases_declare(company)
    reviewer.post(approve)
    reviewer.post(reverse("admin:knowledge_textversion_transition", args=[draft.pk, "publish"]))

    assert [base.slug for base in bases_list(namespace=product)] == ["company"]


def test_the_namespace_page_shows_the_bases_and_links_their_reviewed_text(
    product: Namespace, company: Namespace
) -> None:
    keeper = membership(UserFactory(username="kim"), product, Role.ADMIN)
    bases_declare(product, company)
    text = ReviewedText.objects.get(namespace=product, kind=TextKind.BASES)

    page = as_user(keeper).get(reverse("admin:knowledge_namespace_change", args=[product.pk])).text

    assert "company (with its internal entries)" in page  # set up from files: every base's entries come along
    assert reverse("admin:knowledge_reviewedtext_change", args=[text.pk]) in page
    assert 'name="bases"' not in page  # no longer a setting applied at once


def test_the_migration_turns_declared_bases_into_a_published_version(product: Namespace, company: Namespace) -> None:
    NamespaceBase.objects.create(namespace=product, base=company, position=0)
    migration = importlib.import_module("knowledge.migrations.0025_bases_reviewed")

    migration.forwards(apps, None)
    migration.forwards(apps, None)  # again: nothing more

    text = ReviewedText.objects.select_related("live_version").get(namespace=product, kind=TextKind.BASES)
    assert text.live_version is not None and text.live_version.content == {"bases": ["company"]}
    assert text.live_version.state == VersionState.PUBLISHED and text.versions.count() == 1
    assert text.live_version.author is not None and text.live_version.author.username == SYSTEM_USERNAME
    assert not ReviewedText.objects.filter(namespace=company, kind=TextKind.BASES).exists()


def test_the_review_page_shows_each_base_and_whether_approval_would_pass(
    product: Namespace, company: Namespace, editor: Any, reviewer: Any
) -> None:
    version = propose(product, ["company"], editor)
    page = reverse("admin:knowledge_textversion_change", args=[version.pk])
    shown = as_user(reviewer).get(page).text

    bases_declare(company, product)
    refused = as_user(reviewer).get(page).text

    assert "Builds on now: nothing." in shown and "<code>company</code>: public, IDs CO-…, 1 entries" in shown
    assert "approving it would pass; from the first release after it is published, alpha serves its own" in shown
    assert "Approving it now would be refused: alpha cannot build on company: company already builds on" in refused
