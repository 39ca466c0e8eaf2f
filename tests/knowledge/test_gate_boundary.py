"""A publish unrelated to a golden question leaves it matched (issue 11 follow-up): coverage enters
the gate score smoothly, so the small move every publish makes in every idf cannot flip it.

The reproduction of the held worker-kill publish (0b6229b): the demo with EG-003 retired, then one new
fact entry about token budgets. eg-q-064 ("What share of the tokens on an ordinary web page are useful
facts?", EG-301) sat on the old fixed coverage floor (0.35): its best entry's coverage was 0.3507 and the
new entry, which lowers the idf of "token", put it at 0.3466, so the release was held (later: listed as
borderline) and the question refused. With the coverage penalty it stays matched, by a clear margin.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from knowledge.models import Entry, GateStatus, Namespace, Release
from knowledge.services.entries import entry_retire
from knowledge.services.releases import release_build
from tests.knowledge.test_publish_gate import publish_new, serving
from tests.servingfixtures import clean_serving_state, demo  # noqa: F401  # fixtures

pytestmark = pytest.mark.django_db
QUESTION_KEY = "eg-q-064"
QUESTION = "What share of the tokens on an ordinary web page are useful facts?"
CLEAR = 0.045


def answered(topic: str) -> bool:
    pack = Client().get("/t/evergreen/api/context", {"topic": topic}).json()
    return bool(pack["matched"]) and "EG-301" in [entry["id"] for entry in pack["entries"]]


def test_an_unrelated_publish_leaves_a_clearly_covered_golden_question_matched(demo: Namespace) -> None:  # noqa: F811
    users = get_user_model().objects
    editor, reviewer = users.get(username="editor"), users.get(username="reviewer")
    assert answered(QUESTION)  # the demo as loaded (the fixed floor refused it here: 0.3482 < 0.35)
    entry_retire(
        entry=Entry.objects.get(namespace=demo, public_id="EG-003"),
        actor=None,
        reason="Merged into the endpoint list.",
        replaced_by="EG-101",
        check_permission=False,
    )
    release_build(namespace_id=demo.pk)
    before = serving(demo)
    assert answered(QUESTION)

    publish_new(demo, editor, reviewer, title="Published just before the crash")

    release = serving(demo)
    assert release.sequence == before.sequence + 1 and release == Release.objects.latest("sequence")
    assert release.gate.status == GateStatus.PASSED and release.gate.regressions == 0
    assert answered(QUESTION)
    question = next(q for q in release.gate.report["questions"] if q["key"] == QUESTION_KEY)
    assert question["after"]["matched"] and not question["borderline"] and question["regression"] is None
    # Clear of the boundary on both sides of the publish (0.097 and 0.069), where the fixed floor left
    # it 0.0007 above and 0.0034 below: five times the old floor's p99 move of a margin (0.009).
    assert question["before"]["margin"] > CLEAR and question["after"]["margin"] > CLEAR
    assert not release.gate.report["borderline"]
