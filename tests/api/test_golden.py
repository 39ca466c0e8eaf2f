"""Golden files of the demo namespace (built at a fixed time): context.json, llms.txt, one /api/context answer.

Regenerate after an intended change with `EVERGREEN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/api/test_golden.py`.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.golden.golden import assert_golden

pytestmark = pytest.mark.django_db


def test_context_json_matches_its_golden_file(client: Any, demo: Any) -> None:
    assert_golden("context.json", client.get("/context.json").content)


def test_llms_txt_matches_its_golden_file(client: Any, demo: Any) -> None:
    assert_golden("llms.txt", client.get("/llms.txt").content)


def test_the_seed_example_context_response_matches_its_golden_file(client: Any, demo: Any) -> None:
    response = client.get("/api/context", {"topic": "token 预算", "budget": 2000})
    assert_golden("api-context-token-budget.json", response.content)
