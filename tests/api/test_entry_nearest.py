"""An unknown ID answers its three nearest IDs (seed §6), also when it is mistyped (QA).

The asked ID is normalised before ranking: case, the separator (EG202, EG_202), stray characters after
the number (EG-202x) and an extra digit (EG-2020) do not hide EG-202; a well-formed unknown ID keeps the
numeric neighbours. An ID with control characters is refused as /api/context refuses such a topic.
"""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.selectors import serving

pytestmark = pytest.mark.django_db

DEMO = [(n, f"EG-{n:03}") for n in (1, 2, 3, 101, 102, 201, 202, 301, 302, 303, 304, 401, 402, 403, 501)]


@pytest.mark.parametrize("asked", ["EG202", "EG_202", "eg202", "EG-202x", "EG%20202", "EG.202", "EG-2020", "EG-2202"])
def test_a_mistyped_id_suggests_the_id_it_meant_first(client: Any, demo: Any, asked: str) -> None:
    response = client.get(f"/api/entries/{asked}")

    assert response.status_code == 404
    assert response.json()["nearest"][0] == "EG-202"
    assert len(response.json()["nearest"]) == 3


def test_a_well_formed_unknown_id_keeps_its_numeric_neighbours(client: Any, demo: Any) -> None:
    assert client.get("/api/entries/EG-203").json()["nearest"] == ["EG-202", "EG-201", "EG-301"]
    assert client.get("/api/entries/EG-999").json()["nearest"] == ["EG-501", "EG-403", "EG-402"]
    assert client.get("/api/entries/EG-0202").json()["nearest"][0] == "EG-202"


@pytest.mark.parametrize("asked", ["EG-202\x00", "EG-202\x07", "eg202\u0085", "\x00EG-202"])
def test_the_ranking_ignores_control_characters(asked: str) -> None:
    """What MCP and A2A pass through (JSON text may hold them) ranks like the ID without them."""
    assert serving.ids_nearest(DEMO, asked, width=3)[0] == "EG-202"


def test_text_without_a_number_gets_the_first_ids() -> None:
    assert serving.ids_nearest(DEMO, "EG-", width=3) == ("EG-001", "EG-002", "EG-003")
    assert serving.ids_nearest([], "EG-202", width=3) == ()


@pytest.mark.parametrize("route", ["api/entries/{}", "api/entries/{}.md", "entries/{}", "entries/{}.md"])
def test_an_id_with_control_characters_is_refused_not_echoed(client: Any, demo: Any, route: str) -> None:
    response = client.get("/" + route.format("EG-202%00"))

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_id", "id")
    assert "\x00" not in error["message"]
