"""Base namespaces and themes through the management API (issue 16 §4): the admin's services, roles and four eyes."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from knowledge.models import AuditRecord, TextVersion, VersionState
from knowledge.selectors.layers import bases_list
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.releases import release_build
from tests.factories import NamespaceFactory
from tests.manage_api.routes import BASE
from tests.servingfixtures import bases_declare

pytestmark = pytest.mark.django_db


def _propose_bases(world: Any, *slugs: str) -> int:
    """The editor proposes and submits a list of bases; the version's id."""
    editor = world.callers["editor_a"]
    proposed = editor.post(BASE + "bases/propose/", {"bases": list(slugs)})
    assert proposed.status_code == 200, proposed.content
    version = proposed.json()["id"]
    assert editor.post(BASE + f"text-versions/{version}/submit/").status_code == 200
    return version


def test_a_list_of_bases_is_proposed_then_approved_by_someone_else(world: Any) -> None:
    version = _propose_bases(world, "beta")
    assert bases_list(namespace=world.alpha) == []

    editor_tries = world.callers["editor_a"].post(BASE + f"text-versions/{version}/approve/")
    approved = world.callers["reviewer_a"].post(BASE + f"text-versions/{version}/approve/", {"note": "Fine."})
    published = world.callers["reviewer_a"].post(BASE + f"text-versions/{version}/publish/")

    assert editor_tries.status_code == 403 and editor_tries.json()["error"]["code"] == "forbidden"
    assert approved.status_code == 200 and approved.json()["reviewer"] == "rita"
    assert published.json()["state"] == VersionState.PUBLISHED
    listed = world.callers["readonly_a"].get(BASE + "bases/").json()
    assert listed["bases"] == ["beta"] and [v["id"] for v in listed["versions"]] == [version]
    record = AuditRecord.objects.get(namespace=world.alpha, action="namespace-bases")
    assert record.new_value == ["beta"] and record.actor == world.callers["reviewer_a"].user


def test_whoever_proposed_the_list_cannot_approve_it(world: Any) -> None:
    admin = world.callers["admin_a"]  # editor, reviewer and admin of alpha
    version = admin.post(BASE + "bases/propose/", {"bases": ["beta"]}).json()["id"]
    admin.post(BASE + f"text-versions/{version}/submit/")

    refused = admin.post(BASE + f"text-versions/{version}/approve/")

    assert refused.status_code == 403 and refused.json()["error"]["code"] == "four_eyes"
    assert TextVersion.objects.get(pk=version).state == VersionState.IN_REVIEW


@pytest.mark.parametrize(
    ("bases", "code", "message"),
    [
        (["nowhere"], "layers.unknown_namespace", "No namespace nowhere that every writer of this list can read."),
        (["alpha"], "layers.self", "A namespace cannot build on itself."),
        (["beta", "beta"], "layers.twice", "beta is listed twice."),
    ],
)
def test_a_list_that_cannot_be_declared_is_refused_with_its_rule(
    world: Any, bases: list[str], code: str, message: str
) -> None:
    refused = world.callers["editor_a"].post(BASE + "bases/propose/", {"bases": bases})

    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == code and refused.json()["error"]["message"] == message
    assert not TextVersion.objects.filter(text__namespace=world.alpha, lock_version__gt=0).exists()


def test_a_private_namespace_nobody_writing_the_list_can_read_is_refused_like_a_missing_one(world: Any) -> None:
    NamespaceFactory.create(slug="vault", prefix="VA", name="Vault", is_public=False)

    private = world.callers["editor_a"].post(BASE + "bases/propose/", {"bases": ["vault"]}).json()["error"]
    missing = world.callers["editor_a"].post(BASE + "bases/propose/", {"bases": ["vaulx"]}).json()["error"]

    assert private["code"] == missing["code"] == "layers.unknown_namespace"
    assert private["message"] == missing["message"].replace("vaulx", "vault")


def test_a_cycle_that_appeared_during_review_is_refused_at_approval(world: Any) -> None:
    version = _propose_bases(world, "beta")
    bases_declare(world.beta, world.alpha)  # meanwhile beta came to build on alpha

    refused = world.callers["reviewer_a"].post(BASE + f"text-versions/{version}/approve/")

    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["code"] == "layers.cycle" and "(beta → alpha)" in error["message"]
    assert TextVersion.objects.get(pk=version).state == VersionState.IN_REVIEW


def test_another_namespaces_people_see_and_review_nothing_of_alpha(world: Any) -> None:
    version = _propose_bases(world, "beta")
    bases_declare(world.beta)
    for name in ("reviewer_b", "outsider"):
        caller = world.callers[name]
        assert caller.get(BASE + "bases/").status_code == 404
        assert caller.post(BASE + f"text-versions/{version}/approve/").status_code == 404
        assert caller.post(BASE + "bases/propose/", {"bases": []}).status_code == 404
        # their own namespace's text versions never include alpha's
        assert caller.get(f"/t/beta/api/manage/text-versions/{version}/").status_code == 404
    for name in ("editor_a", "reviewer_a"):
        assert world.callers[name].get("/t/beta/api/manage/bases/").status_code == 404
    assert TextVersion.objects.get(pk=version).state == VersionState.IN_REVIEW


def test_a_theme_is_created_reviewed_and_listed_in_llms_txt(world: Any) -> None:
    editor, reviewer = world.callers["editor_a"], world.callers["reviewer_a"]
    entry = world.live.entry.public_id
    created = editor.post(BASE + "themes/", {"key": "budgets", "title": "Budgets", "entries": [entry.lower()]})
    assert created.status_code == 201 and created.json()["content"]["entries"] == [entry]
    again = editor.post(BASE + "themes/", {"key": "budgets", "title": "Budgets", "entries": []})
    assert again.status_code == 400 and again.json()["error"]["param"] == "key"
    version = editor.post(
        BASE + "themes/budgets/propose/", {"title": "Token budgets", "summary": "How big a pack.", "entries": [entry]}
    ).json()["id"]
    editor.post(BASE + f"text-versions/{version}/submit/")
    assert editor.post(BASE + f"text-versions/{version}/approve/").status_code == 403
    reviewer.post(BASE + f"text-versions/{version}/approve/")
    reviewer.post(BASE + f"text-versions/{version}/publish/")

    theme = world.callers["readonly_a"].get(BASE + "themes/budgets/").json()
    release_build(namespace_id=world.alpha.pk)
    serving_caches_clear()

    assert theme["live_version"] == 1 and theme["live"]["title"] == "Token budgets"
    assert "[Token budgets](" in Client().get("/t/alpha/llms.txt").text
    kinds = {v["kind"] for v in reviewer.get(BASE + "text-versions/?kind=theme").json()["results"]}
    assert kinds == {"theme"}
