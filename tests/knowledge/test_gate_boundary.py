"""A publish unrelated to a golden question does not hold the demo's release because that question
sat on the `matched` boundary (issue 11 follow-up): the flip is listed as borderline, the release serves.

The reproduction of the held worker-kill publish (0b6229b): the demo with EG-003 retired, then one new
fact entry about token budgets. eg-q-064 ("What share of the tokens on an ordinary web page are useful
facts?", EG-301) was answered with its best entry's coverage 0.0007 above the coverage floor; the new
entry lowers the idf of "token" and the entry falls 0.0034 below it.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from knowledge.models import Entry, GateStatus, Namespace, Release
from knowledge.retrieval.gate import BORDERLINE_BAND
from knowledge.services.entries import entry_retire
from knowledge.services.releases import release_build
from tests.knowledge.test_publish_gate import publish_new, serving
from tests.servingfixtures import clean_serving_state, demo  # noqa: F401  # fixtures

pytestmark = pytest.mark.django_db
BORDERLINE = "eg-q-064"
QUESTION = "What share of the tokens on an ordinary web page are useful facts?"


def test_an_unrelated_publish_is_not_held_for_a_question_on_the_boundary(demo: Namespace) -> None:  # noqa: F811
    users = get_user_model().objects
    editor, reviewer = users.get(username="editor"), users.get(username="reviewer")
    entry_retire(
        entry=Entry.objects.get(namespace=demo, public_id="EG-003"),
        actor=None,
        reason="Merged into the endpoint list.",
        replaced_by="EG-101",
        check_permission=False,
    )
    release_build(namespace_id=demo.pk)
    before = serving(demo)
    answered = Client().get("/t/evergreen/api/context", {"topic": QUESTION}).json()
    assert answered["matched"] and "EG-301" in [entry["id"] for entry in answered["entries"]]

    publish_new(demo, editor, reviewer, title="Published just before the crash")

    release = serving(demo)
    assert release.sequence == before.sequence + 1 and release == Release.objects.latest("sequence")
    assert release.gate.status == GateStatus.PASSED and release.gate.regressions == 0
    question = next(q for q in release.gate.report["questions"] if q["key"] == BORDERLINE)
    assert question["borderline"] and question["regression"] is None
    assert 0 <= question["before"]["margin"] < BORDERLINE_BAND
    assert -BORDERLINE_BAND <= question["after"]["margin"] < 0
    assert any(note.startswith(BORDERLINE) for note in release.gate.report["borderline"])
