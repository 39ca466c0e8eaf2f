"""The management API's world: namespaces alpha and beta, a cast with different roles, and their tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from knowledge.models import EntryVersion, Namespace, Role, TokenScope
from knowledge.services.entries import entry_create
from knowledge.services.feedback import feedback_submit
from knowledge.services.personal_tokens import personal_token_create
from knowledge.services.releases import release_build
from knowledge.services.synonyms import SynonymContent, synonym_set_create
from knowledge.services.versions import version_approve, version_publish, version_submit
from tests.factories import NamespaceFactory, UserFactory, content, membership


@dataclass
class Caller:
    """A person (or their token) calling the API with Django's test client."""

    name: str
    user: Any
    token: str

    def __post_init__(self) -> None:
        self.client = Client(HTTP_AUTHORIZATION=f"Bearer {self.token}")

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.client.get(path, **kwargs)

    def post(self, path: str, data: Any = None, **kwargs: Any) -> Any:
        return self.client.post(path, data if data is not None else {}, content_type="application/json", **kwargs)

    def patch(self, path: str, data: Any, **kwargs: Any) -> Any:
        return self.client.patch(path, data, content_type="application/json", **kwargs)


def token_for(user: Any, *namespaces: Namespace, scope: str) -> str:
    _, raw = personal_token_create(
        user=user, name=f"{user.username} {scope}", namespaces=namespaces, scope=scope, expires_at=None
    )
    return raw


@dataclass
class World:
    alpha: Namespace
    beta: Namespace
    live: EntryVersion  # a published entry of alpha
    draft: EntryVersion  # a draft of alpha written by the editor
    beta_live: EntryVersion
    synonyms: Any  # a draft synonym set version of alpha, written by the editor
    callers: dict[str, Caller]


@pytest.fixture
def world(db: Any) -> World:
    alpha = NamespaceFactory.create(slug="alpha", prefix="AL", name="Alpha")
    beta = NamespaceFactory.create(slug="beta", prefix="BE", name="Beta")
    edna = membership(UserFactory(username="edna"), alpha, Role.EDITOR)
    rita = membership(UserFactory(username="rita"), alpha, Role.REVIEWER)
    adam = membership(UserFactory(username="adam"), alpha, Role.ADMIN)
    rufus = membership(UserFactory(username="rufus"), beta, Role.REVIEWER, Role.EDITOR)
    otto = membership(UserFactory(username="otto"), beta, Role.EDITOR)

    def published(ns: Namespace, author: Any, checker: Any, title: str) -> EntryVersion:
        version = entry_create(
            namespace=ns, category=ns.categories.get(slug="fact"), content=content(title=title), actor=author
        )
        version_submit(version=version, actor=author)
        version_approve(version=version, actor=checker)
        return version_publish(version=version, actor=checker)

    live = published(alpha, edna, rita, "Token budget discipline")
    release_build(namespace_id=alpha.pk)
    rufus_writer = membership(UserFactory(username="bert"), beta, Role.EDITOR)
    beta_live = published(beta, rufus_writer, rufus, "Beta fact")
    release_build(namespace_id=beta.pk)
    draft = entry_create(
        namespace=alpha,
        category=alpha.categories.get(slug="rule"),
        content=content(title="Cite every fact", tags=["cite"]),
        actor=edna,
    )
    feedback_submit(
        namespace=alpha, kind="outdated", message="The budget entry is old", entry_public_id=live.entry.public_id
    )
    feedback_submit(namespace=beta, kind="missing", message="Beta lacks a fact")
    _, synonyms = synonym_set_create(
        namespace=alpha, name="budget", content=SynonymContent.build(phrases=["token budget", "预算"]), actor=edna
    )
    callers = {
        "editor_a": Caller("editor_a", edna, token_for(edna, alpha, scope=TokenScope.EDITOR)),
        "reviewer_a": Caller("reviewer_a", rita, token_for(rita, alpha, scope=TokenScope.REVIEWER)),
        "admin_a": Caller("admin_a", adam, token_for(adam, alpha, scope=TokenScope.ADMIN)),
        "reviewer_b": Caller("reviewer_b", rufus, token_for(rufus, beta, scope=TokenScope.ADMIN)),
        "outsider": Caller("outsider", otto, token_for(otto, beta, scope=TokenScope.ADMIN)),
        "readonly_a": Caller("readonly_a", edna, token_for(edna, alpha, scope=TokenScope.READ)),
    }
    return World(
        alpha=alpha, beta=beta, live=live, draft=draft, beta_live=beta_live, synonyms=synonyms, callers=callers
    )
