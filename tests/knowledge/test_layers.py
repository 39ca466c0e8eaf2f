"""Overlays (issue 16 §1): a product namespace built on a company namespace, from declaration to every read."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from gateway.cache import reply_cache_clear
from knowledge.admin.finding import paths_finding_html
from knowledge.admin.preview import OVERRIDES_NOTHING, override_warnings
from knowledge.errors import InvalidInputError
from knowledge.models import BuildRequest, Entry, Namespace, NamespaceBase, Role, TextKind, TokenScope
from knowledge.selectors.layers import bases_list
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.api_keys import api_key_create
from knowledge.services.entries import entry_create, entry_retire
from knowledge.services.layers import layers_declaration_check
from knowledge.services.namespace_settings import namespace_update
from knowledge.services.personal_tokens import personal_token_create
from knowledge.services.releases import release_build
from knowledge.services.rollback import release_rollback
from knowledge.services.texts import text_publish_as_system
from tests.factories import NamespaceFactory, UserFactory, content, membership
from tests.knowledge.adminforms import as_user
from tests.servingfixtures import bases_declare, publish

pytestmark = pytest.mark.django_db

COMPANY = [
    {
        "id": "CO-101",
        "category": "fact",
        "title": "Support hours",
        "summary": "Support answers on weekdays.",
        "body": "Support answers tickets on weekdays from 08:00 to 18:00.",
        "confidence": 0.9,
        "updated": "2026-08-01",
    },
    {
        "id": "CO-102",
        "category": "fact",
        "title": "Legacy status page",
        "summary": "The old status page.",
        "body": "The old status page lived at status-old.example.com.",
        "confidence": 0.8,
        "updated": "2026-08-01",
    },
    {
        "id": "CO-201",
        "category": "rule",
        "title": "SQL migrations are reversible",
        "summary": "Every migration has a reverse step.",
        "body": "Every SQL migration has a tested reverse step.",
        "paths": ["*.sql", "src/**/*.py"],
        "confidence": 0.99,
        "updated": "2026-08-01",
    },
]
PRODUCT = [
    {
        "id": "PR-001",
        "category": "fact",
        "title": "Round the clock support",
        "summary": "Product support answers around the clock.",
        "body": "Product support answers tickets around the clock, every day.",
        "overrides": "CO-101",
        "confidence": 0.95,
        "updated": "2026-08-01",
    },
    {
        "id": "PR-201",
        "category": "rule",
        "title": "API handlers validate input",
        "summary": "Handlers validate input.",
        "body": "Every API handler validates its input.",
        "paths": ["src/api/**/*.py"],
        "confidence": 0.7,
        "updated": "2026-08-01",
    },
]


@pytest.fixture
def boss(db: Any) -> Any:
    """A superuser: declares bases of any namespace."""
    return UserFactory(username="boss", is_superuser=True, is_staff=True)


@pytest.fixture
def company(db: Any) -> Namespace:
    return publish(NamespaceFactory.create(slug="company", prefix="CO", name="Company"), COMPANY)


@pytest.fixture
def product(company: Namespace) -> Namespace:
    product = NamespaceFactory.create(slug="product", prefix="PR", name="Product")
    return publish(bases_declare(product, company), PRODUCT)


def rebuild(namespace: Namespace) -> None:
    """Build the namespace's release and forget what this process serves from memory."""
    release_build(namespace_id=namespace.pk)
    serving_caches_clear()
    reply_cache_clear()


def get(path: str, **headers: str) -> Any:
    return Client().get(path, headers=headers)


def test_a_release_holds_its_own_entries_then_its_bases_each_with_its_own_id_and_layer(product: Namespace) -> None:
    knowledge = get("/t/product/context.json").json()

    assert [(e["id"], e["layer"]) for e in knowledge["entries"]] == [
        ("PR-001", "product"),
        ("PR-201", "product"),
        ("CO-102", "company"),
        ("CO-201", "company"),
    ]
    entry = get("/t/product/api/entries/CO-201").json()
    assert entry["layer"] == "company" and entry["url"].endswith("/api/entries/CO-201")
    pack = get("/t/product/api/context?topic=status%20page").json()
    assert pack["entries"][0]["id"] == "CO-102" and pack["entries"][0]["layer"] == "company"
    assert pack["citations"][0]["marker"] == "[CO-102]"


def test_an_override_is_served_instead_of_the_base_entry(product: Namespace) -> None:
    pack = get("/t/product/api/context?topic=support%20hours").json()
    served = [e["id"] for e in pack["entries"]]

    assert "PR-001" in served and "CO-101" not in served
    assert pack["entries"][served.index("PR-001")]["overrides"] == "CO-101"
    gone = get("/t/product/api/entries/CO-101")
    assert gone.status_code == 410
    assert gone.json()["replacedBy"] == "PR-001" and "Overridden in Product by PR-001" in gone.json()["reason"]
    # The company itself still serves its own entry.
    assert get("/t/company/api/entries/CO-101").status_code == 200


def test_a_base_retirement_reaches_the_dependant_with_its_next_release(product: Namespace, company: Namespace) -> None:
    assert get("/t/product/api/entries/CO-102").status_code == 200
    entry_retire(entry=Entry.objects.get(public_id="CO-102"), actor=None, reason="Replaced.", check_permission=False)
    rebuild(company)
    assert get("/t/company/api/entries/CO-102").status_code == 410
    assert get("/t/product/api/entries/CO-102").status_code == 200  # until the product's next release

    rebuild(product)

    gone = get("/t/product/api/entries/CO-102")
    assert gone.status_code == 410 and gone.json()["reason"] == "Replaced."


def test_a_base_entry_the_dependant_overrides_keeps_pointing_at_the_override_once_retired(
    product: Namespace, company: Namespace
) -> None:
    co_101 = Entry.objects.get(public_id="CO-101")
    entry_retire(entry=co_101, actor=None, reason="Merged.", replaced_by="CO-102", check_permission=False)
    rebuild(company)
    assert get("/t/company/api/entries/CO-101").json()["replacedBy"] == "CO-102"

    rebuild(product)

    gone = get("/t/product/api/entries/CO-101")
    assert gone.status_code == 410
    assert gone.json()["replacedBy"] == "PR-001"  # QA: the product serves its own override, not CO-102
    assert gone.json()["reason"].startswith("Overridden in Product by PR-001")


def test_a_base_rollback_reaches_the_dependant_with_its_next_release(product: Namespace, company: Namespace) -> None:
    first = company.active_release
    assert first is not None
    publish(company, [{"id": "CO-103", "category": "fact", "title": "Status page", "body": "status.example.com"}])
    rebuild(product)
    assert get("/t/product/api/entries/CO-103").status_code == 200
    reviewer = membership(UserFactory(username="rolf"), company, Role.REVIEWER)
    queued = BuildRequest.objects.filter(namespace=product, reason="base-release", built_at=None)
    assert not queued.exists()

    outcome = release_rollback(namespace=company, release=first, actor=reviewer, note="QA: CO-103 was early.")

    assert outcome.activated  # the company serves its first release again, without a build of its own
    assert queued.exists()  # QA: only a build's switch asked the namespaces built on it to follow
    rebuild(product)
    assert get("/t/product/api/entries/CO-103").status_code == 404


def test_an_earlier_version_of_a_base_entry_reads_through_the_dependant(product: Namespace, company: Namespace) -> None:
    publish(company, [{**COMPANY[1], "body": "The old status page moved to status.example.com."}])
    rebuild(product)
    assert get("/t/product/api/entries/CO-102").json()["version"] == 2

    first = get("/t/product/api/entries/CO-102?version=1")

    assert first.status_code == 200, first.content  # QA: 400 unknown_version, looked up among the product's own
    assert first.json()["version"] == 1 and first.json()["layer"] == "company"
    assert "status-old.example.com" in first.json()["body"]


def test_with_paths_the_own_layer_comes_before_the_bases(product: Namespace) -> None:
    pack = get("/t/product/api/context?paths=src/api/users.py").json()

    # CO-201 has the higher confidence, but the product's own rule has priority over its base's.
    assert [(e["id"], e["layer"]) for e in pack["entries"]] == [("PR-201", "product"), ("CO-201", "company")]


def test_other_namespaces_never_see_a_layer_they_do_not_build_on(product: Namespace, ns_b: Namespace) -> None:
    publish(ns_b, [{**COMPANY[0], "id": "BE-001", "title": "Beta hours"}])

    assert get("/t/beta/api/entries/CO-201").status_code == 404
    assert all(e["id"].startswith("BE-") for e in get("/t/beta/context.json").json()["entries"])
    assert get("/t/company/api/entries/PR-001").status_code == 404  # nothing flows down to a base
    assert "layer" not in get("/t/company/api/entries/CO-201").json()  # a namespace without bases has no layers


def test_cycles_are_refused_naming_the_chain(product: Namespace, company: Namespace, boss: Any) -> None:
    with pytest.raises(InvalidInputError, match=r"company cannot build on product: .*product → company"):
        layers_declaration_check(namespace=company, slugs=["product"], declarers=[boss])
    third = bases_declare(NamespaceFactory.create(slug="third", prefix="TH", name="Third"), product)
    with pytest.raises(InvalidInputError, match="third → product → company"):
        layers_declaration_check(namespace=company, slugs=[third.slug], declarers=[boss])
    with pytest.raises(InvalidInputError, match="itself"):
        layers_declaration_check(namespace=company, slugs=["company"], declarers=[boss])
    assert not NamespaceBase.objects.filter(namespace=company).exists()


def test_a_public_namespace_cannot_build_on_a_private_one(company: Namespace, boss: Any) -> None:
    secret = NamespaceFactory.create(slug="secret", prefix="SE", name="Secret", is_public=False)
    public = NamespaceFactory.create(slug="open", prefix="OP", name="Open")

    with pytest.raises(InvalidInputError, match="public namespace open cannot build on the private namespace"):
        layers_declaration_check(namespace=public, slugs=[secret.slug], declarers=[boss])
    bases_declare(public, company)
    with pytest.raises(InvalidInputError, match="cannot become private while public namespaces build on it: open"):
        namespace_update(namespace=company, actor=boss, changes={"is_public": False})
    assert Namespace.objects.get(pk=company.pk).is_public is True


def test_a_private_product_on_a_private_base_serves_it_only_with_its_own_key(boss: Any) -> None:
    base = publish(
        NamespaceFactory.create(slug="inner", prefix="IN", name="Inner", is_public=False),
        [{**COMPANY[0], "id": "IN-101"}],
    )
    base_key = api_key_create(namespace=base, name="inner", actor=None, check_permission=False)[1]
    vault = NamespaceFactory.create(slug="vault", prefix="VA", name="Vault", is_public=False)
    outsider = membership(UserFactory(username="outsider"), vault, Role.ADMIN)

    with pytest.raises(InvalidInputError, match="No namespace inner that every writer"):
        layers_declaration_check(namespace=vault, slugs=[base.slug], declarers=[outsider])
    membership(outsider, base, Role.EDITOR)
    layers_declaration_check(namespace=vault, slugs=[base.slug], declarers=[outsider])
    bases_declare(vault, base)
    publish(vault, [{**PRODUCT[1], "id": "VA-201"}])
    key = api_key_create(namespace=vault, name="vault", actor=None, check_permission=False)[1]

    assert get("/t/vault/api/entries/IN-101").status_code == 404  # no key: like a namespace that does not exist
    assert get("/t/vault/api/entries/IN-101", Authorization=f"Bearer {base_key}").status_code == 404
    entry = get("/t/vault/api/entries/IN-101", Authorization=f"Bearer {key}").json()
    assert entry["layer"] == "inner"
    with pytest.raises(InvalidInputError, match="cannot become public while it builds on private namespaces"):
        namespace_update(namespace=vault, actor=boss, changes={"is_public": True})


def test_a_base_with_the_same_id_prefix_is_refused(company: Namespace, boss: Any) -> None:
    twin = NamespaceFactory.create(slug="twin", prefix="CO", name="Twin")

    with pytest.raises(InvalidInputError, match="uses the ID prefix CO"):
        layers_declaration_check(namespace=twin, slugs=[company.slug], declarers=[boss])


def test_load_demo_ships_a_company_and_two_products_one_private(db: Any) -> None:
    out = StringIO()
    call_command("load_demo", stdout=out)
    call_command("load_demo", stdout=out)  # again: nothing changes

    cloud, payments = Namespace.objects.get(slug="acme-cloud"), Namespace.objects.get(slug="acme-payments")
    assert [base.slug for base in bases_list(namespace=cloud)] == ["acme"]
    assert [base.slug for base in bases_list(namespace=payments)] == ["acme"]
    assert cloud.is_public and not payments.is_public
    assert cloud.active_release is not None
    served = {item["id"] for item in cloud.active_release.manifest["entries"]}
    assert {"CL-001", "CL-101", "AC-102", "AC-201"} <= served and "AC-101" not in served
    assert cloud.releases.count() == 1 and "Layered demo namespace “acme-cloud” ready" in out.getvalue()


def test_llms_txt_names_the_layer_of_each_entry(product: Namespace) -> None:
    index = get("/t/product/llms.txt").text
    full = get("/t/product/llms-full.txt").text

    assert "CO-201 SQL migrations are reversible" in index and "layer company)" in index
    assert "layer product)" in index
    assert "· layer company" in full


def test_an_override_of_nothing_is_an_authoring_warning(product: Namespace) -> None:
    live = Entry.objects.get(public_id="PR-001").live_version
    assert live is not None and override_warnings(live) == []

    live.overrides = "CO-999"
    assert override_warnings(live) == [OVERRIDES_NOTHING.format(id="CO-999", bases="company")]


def test_the_management_api_root_names_the_bases_in_priority_order(product: Namespace) -> None:
    keeper = membership(UserFactory(username="kim"), product, Role.EDITOR)
    raw = personal_token_create(user=keeper, name="k", namespaces=[product], scope=TokenScope.READ, expires_at=None)[1]

    root = Client(HTTP_AUTHORIZATION=f"Bearer {raw}").get("/t/product/api/manage/").json()

    assert root["bases"] == ["company"]


def test_the_markdown_of_an_entry_names_its_layer_override_and_paths(product: Namespace) -> None:
    own = get("/t/product/api/entries/PR-001.md").text
    base = get("/t/product/api/entries/CO-201.md").text

    assert "- layer: `product` · overrides [CO-101]" in own
    assert "- layer: `company`" in base and "- paths: `*.sql`, `src/**/*.py`" in base


def test_a_base_theme_reaches_the_dependants_llms_txt_without_the_overridden_entry(
    product: Namespace, company: Namespace, ns_b: Namespace
) -> None:
    support = {"title": "Support", "summary": "How support works.", "entries": ["CO-101", "CO-102"], "position": 0}
    hours = {"title": "Hours", "summary": "", "entries": ["CO-101"], "position": 1}
    for key, theme in (("support", support), ("hours", hours)):
        text_publish_as_system(namespace=company, kind=TextKind.THEME, key=key, content=theme, note="test")
    rebuild(company)
    rebuild(product)
    publish(ns_b, [{**COMPANY[0], "id": "BE-001", "title": "Beta hours"}])

    index = get("/t/product/llms.txt").text
    line = next(line for line in index.splitlines() if line.startswith("- [Support]"))
    theme = get("/t/product/themes/company/support.md")

    assert "(https://product.example.com/themes/company/support.md)" in line and "(1 entries, " in line
    assert line.endswith("; layer company)") and "- [Hours]" not in index  # Hours held only the overridden entry
    assert theme.status_code == 200 and "## [CO-102]" in theme.text and "CO-101" not in theme.text
    assert "## [CO-101]" in get("/t/company/themes/support.md").text  # the company serves its theme whole
    assert "(2 entries, " in next(line for line in get("/t/company/llms.txt").text.splitlines() if "[Support]" in line)
    assert get("/t/product/themes/company/hours.md").status_code == 404
    assert get("/t/beta/themes/company/support.md").status_code == 404  # not built on the company


def test_the_agent_preview_says_what_an_agent_on_a_matching_path_gets_from_every_layer(product: Namespace) -> None:
    editor = membership(UserFactory(username="ed"), product, Role.EDITOR)
    live = Entry.objects.get(public_id="PR-201").live_version
    assert live is not None
    draft = entry_create(
        namespace=product,
        category=product.categories.get(slug="rule"),
        content=content(title="SQL style", paths=["*.sql"]),
        actor=editor,
    )

    page = as_user(editor).get(reverse("admin:knowledge_entryversion_change", args=[live.pk])).text
    new = paths_finding_html(draft)

    assert (
        "With <code>paths=src/api/x.py</code> an agent gets (release #1, no topic): <code>PR-201</code> API handlers "
        "validate input (layer product), <code>CO-201</code> SQL migrations are reversible (layer company). "
        "This entry is among them."
    ) in page
    assert "With <code>paths=x.sql</code> an agent gets" in new and "<code>CO-201</code>" in new
    assert "This entry is not among them yet" in new  # a draft: the serving release has no version of it
