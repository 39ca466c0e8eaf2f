"""Propose, review and publish through the API: four eyes, optimistic locking, transitions, audit, filters."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import AuditRecord, EntryVersion, VersionState
from tests.manage_api.routes import BASE

pytestmark = pytest.mark.django_db


def test_propose_review_publish_and_the_audit_names_each_person(world: Any) -> None:
    editor, reviewer = world.callers["editor_a"], world.callers["reviewer_a"]
    created = editor.post(BASE + "entries/", {"category": "rule", "title": "Quote exactly", "body": "Quote figures."})
    assert created.status_code == 201
    entry = created.json()
    assert entry["id"] == "AL-201"  # the next number of the rule block (AL-200 is the world's draft)
    version = entry["versions"][0]["id"]
    assert editor.post(BASE + f"versions/{version}/submit/", {"note": "ready"}).json()["state"] == "in_review"
    approved = reviewer.post(BASE + f"versions/{version}/approve/", {"note": "ok"})
    assert approved.json()["state"] == "approved"
    assert approved.json()["reviewer"] == "rita"
    published = reviewer.post(BASE + f"versions/{version}/publish/")
    assert published.json()["state"] == "published"
    trail = AuditRecord.objects.filter(version_id=version).order_by("pk").values_list("action", "actor__username")
    assert list(trail) == [("create", "edna"), ("submit", "edna"), ("approve", "rita"), ("publish", "rita")]


def test_four_eyes_hold_through_the_api(world: Any) -> None:
    """The admin of alpha is editor and reviewer: they cannot approve what they wrote; rita can."""
    admin, reviewer = world.callers["admin_a"], world.callers["reviewer_a"]
    created = admin.post(BASE + "entries/", {"category": "fact", "title": "Mine", "body": "Written by the admin."})
    version = created.json()["versions"][0]["id"]
    admin.post(BASE + f"versions/{version}/submit/")
    refused = admin.post(BASE + f"versions/{version}/approve/")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "four_eyes"
    assert EntryVersion.objects.get(pk=version).state == VersionState.IN_REVIEW
    assert reviewer.post(BASE + f"versions/{version}/approve/").status_code == 200


def test_a_draft_is_edited_only_with_the_etag_it_was_read_with(world: Any) -> None:
    editor, admin = world.callers["editor_a"], world.callers["admin_a"]
    path = BASE + f"versions/{world.draft.pk}/"
    read = editor.get(path)
    etag = read["ETag"]
    assert read.json()["etag"] == etag
    missing = editor.patch(path, {"title": "No precondition"})
    assert missing.status_code == 428
    assert missing.json()["error"]["code"] == "if_match_required"
    first = admin.patch(path, {"summary": "The admin's summary."}, HTTP_IF_MATCH=etag)
    assert first.status_code == 200
    assert first["ETag"] != etag
    stale = editor.patch(path, {"title": "Edna's title"}, HTTP_IF_MATCH=etag)
    assert stale.status_code == 412
    assert stale.json()["error"]["code"] == "stale_version"
    draft = EntryVersion.objects.get(pk=world.draft.pk)
    assert (draft.title, draft.summary) == ("Cite every fact", "The admin's summary.")
    again = editor.patch(path, {"title": "Edna's title", "tags": ["cite", "rule"]}, HTTP_IF_MATCH=first["ETag"])
    assert again.status_code == 200
    assert again.json()["title"] == "Edna's title"
    assert again.json()["summary"] == "The admin's summary."  # untouched fields keep their value


def test_bad_input_names_the_field_and_changes_nothing(world: Any) -> None:
    editor = world.callers["editor_a"]
    before = AuditRecord.objects.count()
    cases = [
        ({"category": "fact", "title": "x", "body": "y", "confidence": 2}, 400, "invalid_parameter", "confidence"),
        ({"category": "nope", "title": "x", "body": "y"}, 400, "invalid_parameter", "category"),
        ({"category": "fact", "body": "y"}, 400, "invalid_parameter", "title"),
        ({"category": "fact", "title": "x", "body": "y", "id": "AL-000"}, 422, "invalid", None),
        ({"category": "fact", "title": "x", "body": "y", "tags": "not a list"}, 400, "invalid_parameter", "tags"),
    ]
    for body, status, code, param in cases:
        response = editor.post(BASE + "entries/", body)
        assert response.status_code == status, (body, response.content)
        assert response.json()["error"]["code"] == code
        assert response.json()["error"]["param"] == param
    broken = editor.client.post(BASE + "entries/", "{not json", content_type="application/json")
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == "invalid_json"
    assert AuditRecord.objects.count() == before


def test_transitions_the_table_forbids_are_409(world: Any) -> None:
    reviewer = world.callers["reviewer_a"]
    response = reviewer.post(BASE + f"versions/{world.draft.pk}/approve/")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "invalid_transition"
    reject = reviewer.post(BASE + f"versions/{world.draft.pk}/reject/", {})
    assert reject.status_code == 400
    assert reject.json()["error"]["param"] == "note"


def test_lists_filter_and_page(world: Any) -> None:
    caller = world.callers["readonly_a"]
    ids = lambda response: [row["id"] for row in response.json()["results"]]  # noqa: E731
    assert ids(caller.get(BASE + "entries/?state=draft")) == ["AL-200"]
    assert ids(caller.get(BASE + "entries/?state=published")) == ["AL-000"]
    assert ids(caller.get(BASE + "entries/?category=rule")) == ["AL-200"]
    assert ids(caller.get(BASE + "entries/?tag=cite")) == ["AL-200"]
    assert ids(caller.get(BASE + "entries/?q=cite")) == ["AL-200"]
    assert ids(caller.get(BASE + "entries/?q=al-000")) == ["AL-000"]
    assert ids(caller.get(BASE + "entries/?reviewer=rita")) == ["AL-000"]
    assert ids(caller.get(BASE + "entries/?author=edna&ordering=-number")) == ["AL-200", "AL-000"]
    assert ids(caller.get(BASE + "entries/?confidence_min=0.96")) == []
    assert ids(caller.get(BASE + "entries/?stale=true")) == []
    assert ids(caller.get(BASE + "entries/?updated_before=2026-01-01")) == []
    assert ids(caller.get(BASE + "entries/?published=true")) == ["AL-000"]
    bad = caller.get(BASE + "entries/?state=bogus")
    assert bad.status_code == 400
    assert bad.json()["error"] == {
        "code": "invalid_parameter",
        "message": bad.json()["error"]["message"],
        "param": "state",
    }
    assert caller.get(BASE + "entries/?updated_after=yesterday").json()["error"]["param"] == "updated_after"
    page = caller.get(BASE + "entries/?limit=1")
    assert len(page.json()["results"]) == 1
    rest = caller.client.get(page.json()["next"])
    assert [row["id"] for row in rest.json()["results"]] == ["AL-200"]
    versions = caller.get(BASE + "versions/?state=published&entry=al-000").json()["results"]
    assert [(v["entry"], v["number"]) for v in versions] == [("AL-000", 1)]
    feedback = caller.get(BASE + "feedback/?status=open&kind=outdated").json()["results"]
    assert [f["entry"] for f in feedback] == ["AL-000"]
    audit = caller.get(BASE + "audit/?action=approve&actor=rita").json()["results"]
    assert [a["entry"] for a in audit] == ["AL-000"]
    EntryVersion.objects.filter(pk=world.draft.pk).update(sensitivity="internal")
    assert ids(caller.get(BASE + "entries/?sensitivity=internal")) == ["AL-200"]
    assert ids(caller.get(BASE + "entries/?sensitivity=public&sensitivity=restricted")) == ["AL-000"]
    drafts = caller.get(BASE + "versions/?sensitivity=internal").json()["results"]
    assert [(v["entry"], v["state"]) for v in drafts] == [("AL-200", "draft")]
    assert caller.get(BASE + "entries/?sensitivity=secret").json()["error"]["param"] == "sensitivity"


SAMPLES = {
    "CharFilter": "cite",
    "DateFilter": "2026-01-01",
    "TimeFilter": "2026-01-01T00:00:00Z",
    "IdFilter": "1",
    "NumberFilter": "0.5",
    "StrictBooleanFilter": "true",
    "StatesFilter": "draft",
    "MultipleChoiceFilter": None,  # the first choice
}


def test_every_filter_of_every_list_answers(world: Any) -> None:
    """Each declared filter, with a value of its type, narrows the list (never an error, never more rows)."""
    from manage_api.urls import router

    caller = world.callers["admin_a"]
    for prefix, viewset, _ in router.registry:
        filterset = getattr(viewset, "filterset_class", None)
        if filterset is None:
            continue
        everything = caller.get(f"{BASE}{prefix}/?limit=200")
        assert everything.status_code == 200, prefix
        all_rows = {str(row.get("id")) for row in everything.json()["results"]}
        for name, declared in filterset.base_filters.items():
            value = SAMPLES[type(declared).__name__]
            if value is None:
                value = declared.extra["choices"][0][0]
            response = caller.client.get(f"{BASE}{prefix}/", {name: value, "limit": 200})
            assert response.status_code == 200, (prefix, name, response.content)
            assert {str(row.get("id")) for row in response.json()["results"]} <= all_rows, (prefix, name)


def test_synonyms_are_proposed_reviewed_with_four_eyes_and_published(world: Any) -> None:
    editor, reviewer, admin = world.callers["editor_a"], world.callers["reviewer_a"], world.callers["admin_a"]
    created = admin.post(BASE + "synonym-sets/", {"name": "protocol", "phrases": ["MCP", "Model Context Protocol"]})
    assert created.status_code == 201
    version = created.json()["versions"][0]["id"]
    admin.post(BASE + f"synonym-versions/{version}/submit/")
    refused = admin.post(BASE + f"synonym-versions/{version}/approve/")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "four_eyes")
    assert reviewer.post(BASE + f"synonym-versions/{version}/approve/").json()["state"] == "approved"
    assert reviewer.post(BASE + f"synonym-versions/{version}/publish/").json()["state"] == "published"
    too_few = editor.post(BASE + f"synonym-sets/{created.json()['id']}/propose/", {"phrases": ["MCP", "MCP "]})
    assert (too_few.status_code, too_few.json()["error"]["code"]) == (422, "synonyms.too_few")


def test_path_globs_are_edited_through_the_api_and_checked(world: Any) -> None:
    editor = world.callers["editor_a"]
    path = BASE + f"versions/{world.draft.pk}/"
    etag = editor.get(path)["ETag"]

    refused = editor.patch(path, {"paths": ["../outside/*.py"]}, HTTP_IF_MATCH=etag)
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "paths"
    saved = editor.patch(path, {"paths": ["src/api/**/*.py", "*.sql"]}, HTTP_IF_MATCH=etag)
    assert saved.status_code == 200, saved.content
    assert saved.json()["paths"] == ["src/api/**/*.py", "*.sql"]
    kept = editor.patch(path, {"title": "Cite every fact, everywhere"}, HTTP_IF_MATCH=saved["ETag"])
    assert kept.json()["paths"] == ["src/api/**/*.py", "*.sql"]  # untouched globs keep their value
