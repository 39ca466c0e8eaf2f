"""The role matrix's world and its expectations, written independently of the admin code they check.

Three namespaces with one of everything the admin shows, a cast of people holding different roles
in different namespaces, and the policy: which role each model, action and custom URL needs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.apps import apps
from django.contrib.auth.models import Group
from django.db.models import Model
from django.test import RequestFactory

from knowledge.models import (
    ApiKey,
    AuditRecord,
    BuildRequest,
    Category,
    CitationCheck,
    DocPage,
    DueItem,
    Entry,
    EntryVersion,
    EvaluationRun,
    Feedback,
    GoldenQuestion,
    KnowledgeGap,
    Membership,
    Namespace,
    NamespaceHost,
    PromptPack,
    Release,
    ReleaseActivation,
    ReleaseBuild,
    RequestLog,
    ReviewedText,
    ReviewItem,
    Role,
    SynonymSet,
    SynonymVersion,
    TextKind,
    TextVersion,
    WebhookDelivery,
    WebhookEndpoint,
)
from knowledge.services.api_keys import api_key_create
from knowledge.services.entries import entry_create
from knowledge.services.feedback import feedback_submit
from knowledge.services.releases import release_build
from knowledge.services.synonyms import (
    SynonymContent,
    synonym_approve,
    synonym_draft,
    synonym_publish,
    synonym_set_create,
    synonym_submit,
)
from knowledge.services.texts import text_draft, text_publish_as_system
from knowledge.services.versions import version_approve, version_draft_for_entry, version_publish, version_submit
from tests.factories import NamespaceFactory, UserFactory, content, membership

EDITOR, REVIEWER, ADMIN = Role.EDITOR, Role.REVIEWER, Role.ADMIN
ANY = "any role"  # any membership in the object's namespace
SUPER = "superuser"  # superusers only
NOBODY = "nobody"  # not offered to anyone, superusers included

SLUGS = ("aardvark", "bison", "cobra")

# Who holds what where (implied roles are added by `holds`). "root" is a superuser, "nobody" staff only.
CAST: dict[str, dict[str, set[str]]] = {
    "edith": {"aardvark": {EDITOR}},
    "rhea": {"aardvark": {REVIEWER}},
    "mallory": {"bison": {ADMIN}, "aardvark": {EDITOR}},
    "rufus": {"bison": {REVIEWER}},
    "otto": {"cobra": {EDITOR, REVIEWER, ADMIN}},
    "nobody": {},
    "root": {},
}

# model: (role to view, role to change, role to add). The admin must never grant more than this.
POLICY: dict[type[Model], tuple[str, str, str]] = {
    Namespace: (ANY, ADMIN, SUPER),
    Category: (ANY, ADMIN, ADMIN),
    Membership: (ADMIN, ADMIN, ADMIN),
    ApiKey: (ADMIN, NOBODY, ADMIN),
    Entry: (ANY, NOBODY, EDITOR),
    EntryVersion: (ANY, EDITOR, NOBODY),
    ReviewItem: (REVIEWER, NOBODY, NOBODY),
    DueItem: (ANY, NOBODY, NOBODY),
    Release: (ANY, NOBODY, NOBODY),
    ReleaseBuild: (ANY, NOBODY, NOBODY),
    BuildRequest: (ANY, NOBODY, NOBODY),
    AuditRecord: (ANY, NOBODY, NOBODY),
    EvaluationRun: (ANY, NOBODY, NOBODY),
    DocPage: (ANY, NOBODY, NOBODY),
    PromptPack: (ANY, NOBODY, NOBODY),
    ReviewedText: (ANY, NOBODY, EDITOR),
    TextVersion: (ANY, EDITOR, NOBODY),
    GoldenQuestion: (ANY, EDITOR, EDITOR),
    SynonymSet: (ANY, EDITOR, EDITOR),
    SynonymVersion: (ANY, EDITOR, NOBODY),
    Feedback: (ANY, EDITOR, NOBODY),
    ReleaseActivation: (ANY, NOBODY, NOBODY),
    WebhookEndpoint: (ADMIN, ADMIN, ADMIN),
    WebhookDelivery: (ADMIN, NOBODY, NOBODY),
    CitationCheck: (ANY, NOBODY, NOBODY),
    RequestLog: (REVIEWER, NOBODY, NOBODY),
    KnowledgeGap: (ANY, NOBODY, NOBODY),
    apps.get_model("auth", "User"): (SUPER, SUPER, SUPER),
    Group: (SUPER, SUPER, SUPER),
}
# Objects that only some states let anyone change: a version is edited while it is a draft, never after.
CHANGEABLE_STATE: dict[type[Model], Any] = {
    EntryVersion: lambda obj: obj.state == "draft",
    TextVersion: lambda obj: obj.state == "draft",
    SynonymVersion: lambda obj: obj.state == "draft",
}
DELETABLE: dict[type[Model], str] = {Membership: ADMIN, apps.get_model("auth", "User"): SUPER, Group: SUPER}

ACTION_ROLES: dict[tuple[type[Model], str], str] = {
    (Namespace, "build_release"): REVIEWER,
    (Membership, "remove"): ADMIN,
    (ApiKey, "revoke"): ADMIN,
    (EntryVersion, "bulk_submit"): EDITOR,
    (EntryVersion, "bulk_withdraw"): EDITOR,
    (EntryVersion, "bulk_approve"): REVIEWER,
    (EntryVersion, "bulk_publish"): REVIEWER,
    (ReviewItem, "bulk_approve"): REVIEWER,
    (ReviewedText, "start_drafts"): EDITOR,
    (TextVersion, "bulk_submit"): EDITOR,
    (TextVersion, "bulk_withdraw"): EDITOR,
    (TextVersion, "bulk_approve"): REVIEWER,
    (TextVersion, "bulk_publish"): REVIEWER,
    (DueItem, "start_rereview"): EDITOR,
    (Release, "rollback"): REVIEWER,
    (Release, "evaluate_golden_questions"): REVIEWER,
    (GoldenQuestion, "evaluate_active_release"): EDITOR,
    (SynonymSet, "open_drafts"): EDITOR,
    (Feedback, "mark_done"): EDITOR,
    (Feedback, "mark_dismissed"): EDITOR,
    (WebhookEndpoint, "send_test"): ADMIN,
    (WebhookEndpoint, "rotate_secret"): ADMIN,
    (WebhookEndpoint, "enable"): ADMIN,
    (WebhookDelivery, "retry_now"): ADMIN,
    (KnowledgeGap, "dismiss"): EDITOR,
    (KnowledgeGap, "reopen"): EDITOR,
}
# Custom admin URLs (name → role, or per value of the URL's `action` argument).
CUSTOM_URLS: dict[str, str | dict[str, str]] = {
    "knowledge_entry_edit": EDITOR,
    "knowledge_entry_compare": ANY,
    "knowledge_entryversion_compare": ANY,
    "knowledge_entryversion_comment": ANY,
    "knowledge_entryversion_revise": EDITOR,
    "knowledge_textversion_compare": ANY,
    "knowledge_textversion_comment": ANY,
    "knowledge_textversion_revise": EDITOR,
    "knowledge_textversion_livepreview": EDITOR,
    "knowledge_synonymversion_compare": ANY,
    "knowledge_synonymversion_comment": ANY,
    "knowledge_synonymversion_revise": EDITOR,
    "knowledge_entryversion_livepreview": EDITOR,
    "knowledge_category_livepreview": EDITOR,
    "knowledge_feedback_draft": EDITOR,
    "knowledge_entry_retire": REVIEWER,
    "knowledge_release_activate": REVIEWER,
    "knowledge_requestlog_replay": REVIEWER,
    "knowledge_knowledgegap_draft": EDITOR,
    "knowledge_knowledgegap_attach": EDITOR,
    "knowledge_entryversion_transition": {
        "submit": EDITOR,
        "withdraw": EDITOR,
        "approve": REVIEWER,
        "reject": REVIEWER,
        "publish": REVIEWER,
    },
    "knowledge_synonymversion_transition": {
        "submit": EDITOR,
        "withdraw": EDITOR,
        "approve": REVIEWER,
        "reject": REVIEWER,
        "publish": REVIEWER,
    },
    "knowledge_textversion_transition": {
        "submit": EDITOR,
        "withdraw": EDITOR,
        "approve": REVIEWER,
        "reject": REVIEWER,
        "publish": REVIEWER,
    },
}


def holds(person: str, slug: str | None, role: str) -> bool:
    """The test's own answer to "may `person` act as `role` on an object of namespace `slug`?"."""
    if person == "root":
        return role != NOBODY
    if role in (SUPER, NOBODY) or slug is None:
        return False
    held = CAST[person].get(slug, set())
    if ADMIN in held:
        held = held | {EDITOR, REVIEWER}
    return bool(held) if role == ANY else role in held


def member_of(person: str) -> set[str]:
    return set(SLUGS) if person == "root" else set(CAST[person])


def namespace_of(obj: Model) -> str | None:
    """The slug of the namespace an object belongs to, by the data model (not by the admin's code)."""
    if isinstance(obj, Namespace):
        return obj.slug
    for path in (
        "namespace",
        "entry__namespace",
        "category__namespace",
        "endpoint__namespace",
        "synonym_set__namespace",
        "text__namespace",
    ):
        target: Any = obj
        try:
            for hop in path.split("__"):
                target = getattr(target, hop)
        except AttributeError:
            continue
        return str(target.slug)
    return None


@dataclass
class World:
    people: dict[str, Any]
    namespaces: dict[str, Namespace]
    objects: dict[type[Model], list[Model]] = field(default_factory=dict)


def _tenant(slug: str, writer: Any, checker: Any) -> None:
    """One of everything: entries in each state, two releases, key, host, docs, questions, feedback."""
    ns = NamespaceFactory.create(slug=slug, prefix=slug[:3].upper(), name=slug.title())
    membership(writer, ns, EDITOR)
    membership(checker, ns, REVIEWER)
    NamespaceHost.objects.create(namespace=ns, host=f"{slug}.example.org")
    fact = ns.categories.get(slug="fact")

    def entry(title: str) -> EntryVersion:
        return entry_create(namespace=ns, category=fact, content=content(title=f"{title} of {slug}"), actor=writer)

    live = entry("Published")
    version_submit(version=live, actor=writer)
    version_approve(version=live, actor=checker)
    version_publish(version=live, actor=checker)
    release_build(namespace_id=ns.pk)
    version_submit(version=version_draft_for_entry(entry=live.entry, actor=writer), actor=writer)  # in review
    entry("Draft")
    approved = entry("Approved")
    version_submit(version=approved, actor=writer)
    version_approve(version=approved, actor=checker)
    second = entry("Second live")
    version_submit(version=second, actor=writer)
    version_approve(version=second, actor=checker)
    version_publish(version=second, actor=checker)
    EntryVersion.objects.filter(pk=second.pk).update(review_by=date(2020, 1, 1))  # due for re-review
    release = release_build(namespace_id=ns.pk).release
    api_key_create(namespace=ns, name=f"{slug} agent", actor=None, check_permission=False)
    doc = {"title": f"{slug} guide", "body": "Read this.", "position": 0}
    text_publish_as_system(namespace=ns, kind=TextKind.DOC, key="guide", content=doc, note="Role matrix.")
    pack = {"template": "Use ${base_url}."}
    text_publish_as_system(namespace=ns, kind=TextKind.PROMPT, key="chat", content=pack, note="Role matrix.")
    text_draft(namespace=ns, kind=TextKind.DOC, key="notes", actor=writer)
    GoldenQuestion.objects.create(namespace=ns, key=f"{slug}-q1", text="published?", relevant={})
    synonyms, first = synonym_set_create(
        namespace=ns, name="mcp", content=SynonymContent.build(phrases=["MCP", "Model Context Protocol"]), actor=writer
    )
    synonym_submit(version=first, actor=writer)
    synonym_approve(version=first, actor=checker)
    synonym_publish(version=first, actor=checker)
    synonym_draft(synonym_set=synonyms, actor=writer)
    feedback_submit(namespace=ns, kind="outdated", message=f"{slug} entry is old")
    EvaluationRun.objects.create(namespace=ns, release=release, metrics={"ndcg_at_10": 0.5}, results=[])
    hook = WebhookEndpoint.objects.create(namespace=ns, url=f"https://{slug}.example.org/hook", secret="whsec_eA==")
    WebhookDelivery.objects.create(endpoint=hook, message_id=f"msg_{slug}", event="webhook.test", payload="{}")
    CitationCheck.objects.create(namespace=ns, release=release, channel="rest", citations=2, valid=1, problems={})
    RequestLog.objects.create(
        namespace=ns, release=release, at=release.built_at, channel="rest", route="context", topic="why", matched=False
    )
    KnowledgeGap.objects.create(
        namespace=ns, key="why", terms=["why"], example="why", first_seen=release.built_at, last_seen=release.built_at
    )


def world_build() -> World:
    writer = UserFactory(username="writer")
    checker = UserFactory(username="checker")
    for slug in SLUGS:
        _tenant(slug, writer, checker)
    namespaces = {ns.slug: ns for ns in Namespace.objects.all()}
    people: dict[str, Any] = {"root": UserFactory(username="root", is_superuser=True)}
    for name, roles in CAST.items():
        if name == "root":
            continue
        person = UserFactory(username=name)
        for slug, held in roles.items():
            membership(person, namespaces[slug], *sorted(held))
        people[name] = person
    Group.objects.create(name="operators")
    return World(people=people, namespaces=namespaces)


def sample(model_admin: Any, root: Any, per_namespace: int = 1) -> list[Model]:
    """Objects of each namespace (and of none, for auth models) that the admin lists, to aim requests at."""
    request = RequestFactory().get("/admin/")
    request.user = root
    chosen: dict[str | None, list[Model]] = {}
    for obj in model_admin.get_queryset(request).order_by("pk"):
        bucket = chosen.setdefault(namespace_of(obj), [])
        if len(bucket) < per_namespace:
            bucket.append(obj)
    return [obj for bucket in chosen.values() for obj in bucket]


def fingerprint() -> str:
    """A digest of every row the admin could change (knowledge, auth, the admin's log)."""
    digest = hashlib.sha256()
    for config in ("knowledge", "auth", "admin"):
        for model in apps.get_app_config(config).get_models():
            if model._meta.proxy:
                continue
            for row in model._default_manager.order_by("pk").values_list():
                digest.update(repr(row).encode())
    return digest.hexdigest()
