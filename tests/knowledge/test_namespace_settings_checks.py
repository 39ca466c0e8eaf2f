"""Namespace settings that the site would serve wrongly or ignore are refused, on the admin form's fields too."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse

from knowledge.errors import InvalidInputError
from knowledge.models import AuditRecord, Namespace, Role
from knowledge.services.namespace_settings import (
    THRESHOLD_MAX,
    namespace_create,
    namespace_settings_clean,
    namespace_update,
)
from knowledge.services.namespaces import namespace_apply_spec
from tests.factories import UserFactory, membership
from tests.knowledge.adminforms import admin_form, as_user

pytestmark = pytest.mark.django_db

BAD_SETTINGS = [
    ("match_threshold", "5", "Enter a number from 0 to 1.649"),
    ("match_threshold", "-1", "Enter a number from 0 to 1.649"),
    ("rate_limit", "abc", "“abc” is not a rate limit"),
    ("rate_limit", "120/minn", "“120/minn” is not a rate limit"),
    ("rate_limit", "120/0min", "“120/0min” is not a rate limit"),
    ("base_url", "ftp://x.example.com", "Enter the public http:// or https:// address"),
    ("base_url", "https://user:pw@x.example.com", "Enter the public http:// or https:// address"),
    ("base_url", "https://x.example.com/?a=1", "Enter the public http:// or https:// address"),
    ("language", "not a language!!", "“not a language!!” is not a language tag"),
    ("license", "CC\u0001BY", "Control characters (such as U+0001) are not allowed here"),
    ("name", "Al\u0007pha", "Control characters (such as U+0007) are not allowed here"),
    ("match_threshold_note", "by\u001bhand", "Control characters (such as U+001B) are not allowed here"),
    ("knowledge_version", "one", "“one” is not a version"),
]


@pytest.fixture
def root(db: Any) -> Any:
    return UserFactory(username="root", is_superuser=True)


@pytest.fixture
def keeper(ns_a: Namespace) -> Any:
    return membership(UserFactory(username="kim"), ns_a, Role.ADMIN)


def _page(ns: Namespace) -> str:
    return reverse("admin:knowledge_namespace_change", args=[ns.pk])


@pytest.mark.parametrize(("field", "value", "message"), BAD_SETTINGS)
def test_the_settings_form_shows_a_nonsense_value_on_its_field_and_stores_nothing(
    ns_a: Namespace, root: Any, field: str, value: str, message: str
) -> None:
    client = as_user(root)
    data = admin_form(client, _page(ns_a))
    data[field] = [value]

    response = client.post(_page(ns_a), data)

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == [field]
    assert message in errors[field][0]
    assert Namespace.objects.get(pk=ns_a.pk).match_threshold is None
    assert not AuditRecord.objects.filter(action="namespace-setting").exists()


@pytest.mark.parametrize(("field", "value", "message"), BAD_SETTINGS)
def test_the_service_refuses_a_nonsense_value_naming_the_field(
    ns_a: Namespace, keeper: Any, field: str, value: str, message: str
) -> None:
    typed: Any = float(value) if field == "match_threshold" else value

    with pytest.raises(InvalidInputError, match=f"^{field}: .*{re.escape(message)}"):
        namespace_update(namespace=ns_a, actor=keeper, changes={field: typed})

    fresh = Namespace.objects.get(pk=ns_a.pk)
    assert getattr(fresh, field) == getattr(ns_a, field)


def test_sensible_values_are_stored_as_the_site_reads_them(ns_a: Namespace, keeper: Any) -> None:
    changes = {
        "match_threshold": THRESHOLD_MAX,
        "rate_limit": " 30/10s ",
        "base_url": "http://docs.alpha.example:8080/t/alpha/",
        "language": "zh-Hans-CN",
        "license": "CC-BY-4.0 or MIT",
        "knowledge_version": "2.10.0",
    }

    updated = namespace_update(namespace=ns_a, actor=keeper, changes=changes)

    assert (updated.match_threshold, updated.rate_limit, updated.base_url) == (
        THRESHOLD_MAX,
        "30/10s",
        "http://docs.alpha.example:8080/t/alpha",
    )
    assert (updated.language, updated.knowledge_version) == ("zh-Hans-CN", "2.10.0")
    assert namespace_settings_clean({"match_threshold": 0, "rate_limit": "", "language": "en"}) == {
        "match_threshold": 0.0,
        "rate_limit": "",
        "language": "en",
    }
    assert namespace_settings_clean({"match_threshold": None, "rate_limit": "0"})["match_threshold"] is None


def test_an_infinite_or_boolean_threshold_is_refused(ns_a: Namespace, keeper: Any) -> None:
    for value in (float("inf"), float("nan"), True, "0.5"):
        with pytest.raises(InvalidInputError, match=r"^match_threshold: Enter a number from 0"):
            namespace_update(namespace=ns_a, actor=keeper, changes={"match_threshold": value})


def test_creating_a_namespace_goes_through_the_same_checks(root: Any) -> None:
    fields = {"slug": "gamma", "name": "Gamma", "prefix": "GA", "base_url": "ftp://g.example", "language": "??"}

    with pytest.raises(InvalidInputError) as refused:
        namespace_create(actor=root, fields=fields)

    assert "base_url: Enter the public http:// or https:// address" in str(refused.value)
    assert "language: “??” is not a language tag" in str(refused.value)
    assert not Namespace.objects.filter(slug="gamma").exists()


def test_the_add_form_shows_the_errors_on_its_fields(root: Any) -> None:
    add = reverse("admin:knowledge_namespace_add")
    client = as_user(root)
    data = admin_form(client, add)
    data.update(slug=["gamma"], name=["Gamma"], prefix=["GA"], base_url=["ftp://g.example"], rate_limit=["120/minn"])

    response = client.post(add, data)

    assert response.status_code == 200
    assert set(response.context["adminform"].form.errors) == {"base_url", "rate_limit"}
    assert not Namespace.objects.filter(slug="gamma").exists()


@pytest.mark.django_db
def test_a_namespace_specification_goes_through_the_same_checks() -> None:
    """load_demo and import_entries --create-namespace write settings from a file (namespace_apply_spec)."""
    spec = {"slug": "spec", "name": "Spec", "prefix": "SP", "base_url": "ftp://x.example.com"}

    with pytest.raises(InvalidInputError, match="the file: base_url: Enter the public http"):
        namespace_apply_spec(spec=spec, source="the file")

    assert not Namespace.objects.filter(slug="spec").exists()
