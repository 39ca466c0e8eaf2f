"""bench.drf compares like with like: the DRF variant's serializer accepts and refuses what the plain view does."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from django.http import QueryDict

from bench.drf_context import ContextParameters
from gateway.errors import BadParameterError
from gateway.params import context_query_from_string

CATEGORIES = ["fact", "rule"]
QUERIES = [
    urlencode({"topic": "token 预算", "budget": 2000}),
    urlencode({"topic": " budget ", "budget": "600.0", "category": "rule", "budgetMode": "payload"}),
    "paths=src/a.py&paths=docs/b.md&topic=",
    "",
]
REFUSED = ["budget=12.5", "category=nonsense", "topic=a&topic=b", "budgetMode=all", "paths=/etc/passwd"]


def _serializer(query: str) -> dict[str, Any]:
    parameters = ContextParameters(data=QueryDict(query), context={"categories": CATEGORIES, "default_budget": 2000})
    parameters.is_valid(raise_exception=True)
    return dict(parameters.validated_data)


@pytest.mark.parametrize("query", QUERIES)
def test_the_serializer_reads_a_query_as_the_declared_parsers_do(query: str) -> None:
    plain = context_query_from_string(query, categories=CATEGORIES, default_budget=2000)
    valid = _serializer(query)

    assert (valid["topic"], valid["budget"], valid["category"]) == (plain.topic, plain.budget, plain.category)
    assert (valid["budgetMode"] or "entries", tuple(valid["paths"] or ())) == (plain.budget_mode, plain.paths)


@pytest.mark.parametrize("query", REFUSED)
def test_the_serializer_refuses_with_the_declared_code(query: str) -> None:
    with pytest.raises(BadParameterError) as plain:
        context_query_from_string(query, categories=CATEGORIES, default_budget=2000)
    with pytest.raises(BadParameterError) as drf:
        _serializer(query)

    assert (drf.value.code, drf.value.param) == (plain.value.code, plain.value.param)
