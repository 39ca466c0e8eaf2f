"""/api/context's explain takes only the values /api/schema/ lists, once (issue 15 §5: no drift)."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Namespace

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("value", ["yes", "2", "TRUE", "on", " 1"])
def test_an_explain_outside_the_enum_is_refused(client: Any, alpha: Namespace, no_rate_limit: None, value: str) -> None:
    response = client.get("/t/alpha/api/context", {"topic": "alpha", "explain": value})

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_explain", "explain")


@pytest.mark.parametrize("query", ["explain=1&explain=0", "explain=1&explain=1", "why=AL-001&why=AL-002"])
def test_a_repeated_explain_or_why_is_a_repeated_parameter(
    client: Any, alpha: Namespace, no_rate_limit: None, query: str
) -> None:
    response = client.get(f"/t/alpha/api/context?topic=alpha&{query}")

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("repeated_parameter", query.split("=", 1)[0])


@pytest.mark.parametrize(
    ("value", "explained"), [("1", True), ("true", True), ("0", False), ("false", False), ("", False)]
)
def test_the_enum_values_still_answer(
    client: Any, alpha: Namespace, no_rate_limit: None, value: str, explained: bool
) -> None:
    response = client.get("/t/alpha/api/context", {"topic": "alpha", "explain": value})

    assert response.status_code == 200, response.content
    assert ("explain" in response.json()) is explained
