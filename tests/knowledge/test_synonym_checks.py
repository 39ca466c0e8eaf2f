"""Synonym sets that would change nothing, repeat another set, or hold control characters are refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.models import Namespace, SynonymSet, SynonymVersion, TokenScope
from knowledge.services.personal_tokens import personal_token_create
from knowledge.services.synonyms import (
    SynonymContent,
    SynonymError,
    synonym_draft,
    synonym_save,
    synonym_set_create,
)
from tests.knowledge.adminforms import as_user

pytestmark = pytest.mark.django_db

ADD = "admin:knowledge_synonymset_add"


def build(*phrases: str, two_way: bool = True) -> SynonymContent:
    return SynonymContent.build(phrases=list(phrases), two_way=two_way)


def create(ns: Namespace, editor: Any, name: str, content: SynonymContent) -> SynonymVersion:
    return synonym_set_create(namespace=ns, name=name, content=content, actor=editor)[1]


def refusal(call: Any) -> SynonymError:
    with pytest.raises(SynonymError) as refused:
        call()
    return refused.value


def test_phrases_that_are_the_same_to_search_do_not_make_a_set() -> None:
    same = refusal(lambda: build("Abc", "abc"))
    plural = refusal(lambda: build("Token budget", "token budgets", "TOKEN BUDGET!"))

    assert same.code == plural.code == "synonyms.too_few"
    assert "“Abc” and “abc” are the same phrase to search" in str(same)
    assert "“Token budget” and “token budgets”" in str(plural)
    assert build("entry", "entries", "条目").phrases == ("entry", "entries", "条目")  # two differ: kept


@pytest.mark.parametrize(
    ("phrase", "char"),
    [("x\u0000y", "U+0000"), ("rate\u0007limit", "U+0007"), ("rate\tlimit", "U+0009"), ("a\u009fb", "U+009F")],
)
def test_a_phrase_with_a_control_character_is_refused(phrase: str, char: str) -> None:
    refused = refusal(lambda: build(phrase, "zz"))

    assert refused.code == "synonyms.control_characters"
    assert f"contains a control character ({char})" in str(refused)


def test_a_name_with_a_control_character_is_refused(ns_a: Namespace, editor: Any) -> None:
    refused = refusal(lambda: create(ns_a, editor, "rate\u0001limit", build("rate limit", "限流")))

    assert refused.code == "synonyms.control_characters"
    assert "The name contains a control character (U+0001)" in str(refused)
    assert not SynonymSet.objects.exists()


def test_a_set_with_the_phrases_of_another_set_is_refused_naming_it(ns_a: Namespace, editor: Any) -> None:
    create(ns_a, editor, "rate limit", build("rate limit", "限流"))

    again = refusal(lambda: create(ns_a, editor, "throttling", build("限流", "Rate Limits")))

    assert again.code == "synonyms.duplicate"
    assert "The synonym set “rate limit” of alpha already has these phrases (two-way" in str(again)
    assert list(SynonymSet.objects.values_list("name", flat=True)) == ["rate limit"]


def test_the_same_phrases_in_another_direction_or_namespace_are_a_different_set(
    ns_a: Namespace, ns_b: Namespace, editor: Any, outsider: Any
) -> None:
    create(ns_a, editor, "rate limit", build("rate limit", "限流"))

    create(ns_a, editor, "rate limit one-way", build("rate limit", "限流", two_way=False))
    create(ns_b, outsider, "rate limit", build("rate limit", "限流"))

    assert SynonymSet.objects.count() == 3


def test_editing_a_draft_into_a_copy_of_another_set_is_refused(ns_a: Namespace, editor: Any) -> None:
    create(ns_a, editor, "rate limit", build("rate limit", "限流"))
    other = create(ns_a, editor, "budget", build("token budget", "预算"))

    refused = refusal(lambda: synonym_save(version=other, content=build("限流", "rate limit"), actor=editor))
    kept = synonym_save(version=other, content=build("token budget", "Token 预算"), actor=editor)  # its own: fine

    assert refused.code == "synonyms.duplicate"
    assert kept.phrases == ["token budget", "Token 预算"]
    assert synonym_draft(synonym_set=other.synonym_set, actor=editor).pk == other.pk


def test_the_admin_shows_each_refusal_on_its_field(ns_a: Namespace, editor: Any) -> None:
    create(ns_a, editor, "rate limit", build("rate limit", "限流"))
    client = as_user(editor)

    def add(name: str, phrases: str) -> Any:
        data = {"namespace": ns_a.pk, "name": name, "phrases": phrases, "two_way": "on", "enabled": "True"}
        response = client.post(reverse(ADD), data)
        assert response.status_code == 200
        return response.context["adminform"].form.errors

    assert "already has these phrases" in add("throttling", "Rate limit\n限流")["phrases"][0]
    assert "are the same phrase to search" in add("abc", "Abc\nabc")["phrases"][0]
    assert "control character (U+0000)" in add("nul", "x\u0000y\nzz")["phrases"][0]
    assert "control character (U+0001)" in add("a\u0001b", "token budget\n预算")["name"][0]
    assert list(SynonymSet.objects.values_list("name", flat=True)) == ["rate limit"]


def test_the_draft_page_refuses_a_copy_of_another_set_on_the_phrases_field(ns_a: Namespace, editor: Any) -> None:
    create(ns_a, editor, "rate limit", build("rate limit", "限流"))
    other = create(ns_a, editor, "budget", build("token budget", "预算"))
    page = reverse("admin:knowledge_synonymversion_change", args=[other.pk])

    response = as_user(editor).post(page, {"phrases": "限流\nrate limit", "two_way": "on", "enabled": "on"})

    assert response.status_code == 200
    assert "already has these phrases" in response.context["adminform"].form.errors["phrases"][0]
    other.refresh_from_db()
    assert other.phrases == ["token budget", "预算"]


def test_the_management_api_answers_422_with_the_code_not_503(ns_a: Namespace, editor: Any) -> None:
    _, token = personal_token_create(
        user=editor, name="edna", namespaces=[ns_a], scope=TokenScope.EDITOR, expires_at=None
    )
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    url = "/t/alpha/api/manage/synonym-sets/"

    def post(body: dict[str, Any]) -> tuple[int, str]:
        response = api.post(url, body, content_type="application/json")
        return response.status_code, response.json()["error"]["code"]

    assert api.post(url, {"name": "rate limit", "phrases": ["rate limit", "限流"]}, content_type="application/json")
    assert post({"name": "nul", "phrases": ["x\u0001y", "zz"]}) == (422, "synonyms.control_characters")
    assert post({"name": "a\u0002b", "phrases": ["token budget", "预算"]}) == (422, "synonyms.control_characters")
    assert post({"name": "copy", "phrases": ["限流", "rate limits"]}) == (422, "synonyms.duplicate")
    assert post({"name": "abc", "phrases": ["Abc", "abc"]}) == (422, "synonyms.too_few")
    assert SynonymSet.objects.count() == 1
