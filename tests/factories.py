"""factory_boy factories for the knowledge domain."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import factory
from django.contrib.auth import get_user_model

from knowledge.models import Category, IdBlock, Membership, Namespace
from knowledge.services.content import VersionContent

CATEGORY_BLOCKS = {
    "fact": [(0, 99), (500, 599)],
    "protocol": [(100, 199)],
    "rule": [(200, 299)],
    "principle": [(300, 399)],
    "workflow": [(400, 499)],
}


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"person{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct horse battery staple")
    is_staff = True


class NamespaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Namespace
        django_get_or_create = ("slug",)
        skip_postgeneration_save = True

    slug = factory.Sequence(lambda n: f"ns{n}")
    name = factory.LazyAttribute(lambda ns: ns.slug.title())
    prefix = factory.LazyAttribute(lambda ns: ns.slug[:2].upper())
    title = factory.LazyAttribute(lambda ns: f"{ns.name} knowledge")
    summary = "Facts for agents."
    contact = "agents@example.com"
    base_url = factory.LazyAttribute(lambda ns: f"https://{ns.slug}.example.com")
    language = "en"
    rules = ["Cite every fact with its entry ID, e.g. [XX-001]."]

    @factory.post_generation
    def categories(self: Namespace, create: bool, extracted: Any, **kwargs: Any) -> None:
        if not create:
            return
        for position, (slug, blocks) in enumerate(CATEGORY_BLOCKS.items()):
            category, _ = Category.objects.get_or_create(
                namespace=self, slug=slug, defaults={"name": slug.title(), "position": position}
            )
            for start, end in blocks:
                IdBlock.objects.get_or_create(category=category, start=start, defaults={"end": end})


def membership(user: Any, namespace: Namespace, *roles: str) -> Any:
    for role in roles:
        Membership.objects.get_or_create(user=user, namespace=namespace, role=role)
    return user


def content(**overrides: Any) -> VersionContent:
    """Valid version content; override any field."""
    fields: dict[str, Any] = {
        "title": "Token budget discipline",
        "summary": "Agents ask for a token budget and get whole entries that fit.",
        "body": "Ask for 2000 tokens by default; raise the budget when truncated is true.",
        "tags": ["token", "budget"],
        "confidence": Decimal("0.95"),
        "links": [],
        "updated": date(2026, 8, 25),
    }
    fields.update(overrides)
    return VersionContent.build(**fields)


def committed() -> Any:
    """Run the on-commit callbacks (release builds) registered inside the block, as a commit would."""
    from django.test import TestCase

    return TestCase.captureOnCommitCallbacks(execute=True)
