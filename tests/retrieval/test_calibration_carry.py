"""A release's calibration carried forward: no calibration search while the collection barely changed,
recalibrated past the tolerance, and a recalibration within the band keeps the threshold it had."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, cast

import pytest

from knowledge.retrieval.calibration import (
    CALIBRATED,
    CARRIED,
    CARRY_CHANGED_SHARE,
    KEPT,
    PROBES_REFUSED,
    Lineage,
    calibration_basis,
    carried,
    entries_changed,
    gate_scores,
    matching_summary,
    probe_quantile,
    probe_quantile_error,
    probe_questions,
    threshold_automatic,
)
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.render import release as render
from knowledge.retrieval.snapshot import RankingSettings, Snapshot
from tests.retrieval.helpers import demo_documents, make_document


class Snap:
    """The part of a snapshot with_matching reads."""

    def __init__(self, ranking: RankingSettings) -> None:
        self.ranking = ranking


def snapshot_of(ranking: RankingSettings) -> Snapshot:
    return cast(Snapshot, Snap(ranking))


AUTOMATIC = snapshot_of(RankingSettings())


def collection() -> list[Any]:
    """The demo's entries and enough others that one changed entry is within the tolerance."""
    extra = [
        make_document(f"EG-8{n:02d}", f"Workshop note {n}", body=f"Workshop {n} keeps lathe {n} and drill press {n}.")
        for n in range(45)
    ]
    return [*demo_documents(), *extra]


def matched_index(documents: list[Any], lineage: Lineage | None = None, sequence: int = 1) -> SearchIndex:
    index = SearchIndex.compile(documents)
    return render.with_matching(
        index,
        documents,
        AUTOMATIC,
        analyze=render.analyze_fields,
        lineage=lineage,
        sequence=sequence,
    )


def recorded(index: SearchIndex) -> dict[str, Any]:
    """The record as /metrics.json keeps it."""
    return {"threshold": index.match_threshold, **index.matching}


def test_entries_changed_counts_added_removed_and_edited() -> None:
    assert entries_changed({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "9", "d": "4"}) == 3
    assert entries_changed({"a": "1"}, {"a": "1"}) == 0


def test_a_build_calibrates_and_records_where_and_on_how_many_entries() -> None:
    documents = collection()
    index = matched_index(documents, sequence=7)
    record = index.matching
    assert (record["provenance"], record["calibrated_in"], record["changed_since"]) == (CALIBRATED, 7, 0)
    assert record["calibrated_entries"] == len(documents)
    assert record["basis"] == calibration_basis(index) and record["standard_error"] > 0
    assert "calibrated in release #7" in matching_summary(recorded(index))


def test_a_one_entry_publish_carries_the_threshold_without_a_calibration_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    documents = collection()
    first = matched_index(documents, sequence=1)
    added = [*documents, make_document("EG-990", "Harbour opening hours", body="Boats leave the harbour at dawn.")]

    def no_search(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a carried calibration searches nothing")

    monkeypatch.setattr(render, "threshold_automatic", no_search)
    monkeypatch.setattr(render, "packing_automatic", no_search)
    second = matched_index(added, Lineage(sequence=1, matching=recorded(first), changed=1), sequence=2)

    assert second.match_threshold == first.match_threshold
    assert second.options.pack_best_share == first.options.pack_best_share
    record = second.matching
    assert (record["provenance"], record["carried_from"], record["calibrated_in"]) == (CARRIED, 1, 1)
    assert record["changed_since"] == 1
    assert "carried from release #1 (calibrated in #1; 1 of" in matching_summary(recorded(second))


def test_changes_add_up_until_the_tolerance_and_then_it_calibrates_again() -> None:
    documents = collection()
    first = recorded(matched_index(documents))
    basis = first["basis"]
    allowed = int(CARRY_CHANGED_SHARE * len(documents))
    step = carried(Lineage(sequence=1, matching=first, changed=allowed), source="automatic", basis=basis)
    assert step is not None and step["changed_since"] == allowed
    assert carried(Lineage(sequence=2, matching=step, changed=1), source="automatic", basis=basis) is None
    assert carried(Lineage(sequence=1, matching=first, changed=allowed + 1), source="automatic", basis=basis) is None


def test_another_basis_or_source_calibrates_again_and_a_replay_keeps_the_record() -> None:
    first = recorded(matched_index(collection()))
    assert carried(Lineage(sequence=1, matching=first), source="automatic", basis="other") is None
    assert carried(Lineage(sequence=1, matching=first), source="namespace", basis=first["basis"]) is None
    assert carried(None, source="automatic", basis=first["basis"]) is None
    replayed = carried(
        Lineage(sequence=1, matching=first, changed=500, replay=True), source="automatic", basis=first["basis"]
    )
    assert replayed == first


def test_a_recalibration_within_the_band_keeps_the_threshold_it_had() -> None:
    documents = demo_documents()
    index = SearchIndex.compile(documents)
    scores = gate_scores(index, probe_questions())
    error = probe_quantile_error(scores, PROBES_REFUSED)
    fresh = threshold_automatic(index, documents)
    near = round(fresh.threshold + 0.4 * error, 4)
    far = round(fresh.threshold + 0.6 * error, 4)

    kept = threshold_automatic(index, documents, keep=near)
    moved = threshold_automatic(index, documents, keep=far)

    assert error > 0 and not fresh.bounded_by_pseudo_questions
    assert fresh.threshold == math.ceil(probe_quantile(scores, PROBES_REFUSED) * 10_000) / 10_000
    assert (kept.threshold, kept.calibrated) == (near, fresh.threshold)
    assert (moved.threshold, moved.calibrated) == (fresh.threshold, None)
    line = matching_summary({**kept.to_meta(), "provenance": KEPT, "calibrated_in": 3})
    assert f"found {fresh.threshold}" in line and "so it stays" in line


def test_the_namespace_threshold_carries_the_pack_floor_and_follows_the_namespace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    documents = collection()
    own = snapshot_of(RankingSettings(match_threshold=0.2, threshold_note="by hand"))
    index = SearchIndex.compile(documents)
    first = render.with_matching(index, documents, own, analyze=render.analyze_fields, sequence=1)
    monkeypatch.setattr(render, "packing_automatic", lambda *a, **k: pytest.fail("carried"))
    changed = snapshot_of(replace(own.ranking, match_threshold=0.25, threshold_note="calibrated"))
    lineage = Lineage(sequence=1, matching=recorded(first), changed=1)
    second = render.with_matching(index, documents, changed, analyze=render.analyze_fields, lineage=lineage, sequence=2)
    assert second.match_threshold == 0.25 and second.matching["note"] == "calibrated"
    assert second.matching["provenance"] == CARRIED and second.matching["crowding"] == first.matching["crowding"]


def crowded_collection() -> list[Any]:
    """Sixty abstracts that share their words in overlapping runs: every question has many close competitors."""
    words = ["laminar", "turbulent", "boundary", "layer", "plate", "friction", "heat", "transfer", "mach", "shock"]
    documents = []
    for n in range(60):
        run = [words[(n + k) % len(words)] for k in range(6)]
        body = ". ".join(f"The {run[k]} {run[(k + 1) % 6]} {run[(k + 2) % 6]} flow was measured" for k in range(6))
        documents.append(make_document(f"CR-{n:03d}", f"{run[0]} {run[1]} study", body=body + "."))
    return documents


def test_a_crowded_collection_ranks_with_feedback_and_a_carried_build_keeps_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert not matched_index(collection()).options.feedback  # the demo and its workshop notes are not crowded

    documents = crowded_collection()
    first = matched_index(documents, sequence=1)
    assert first.options.feedback and first.matching["feedback"] is True
    assert first.options.pack_best_share == 0.0  # the same switch turns the share floor off
    assert "ranks with feedback" in matching_summary(recorded(first))

    monkeypatch.setattr(render, "threshold_automatic", lambda *args, **kwargs: pytest.fail("carried"))
    edited = [*documents[:-1], replace(documents[-1], title="laminar study, revised")]
    second = matched_index(edited, Lineage(sequence=1, matching=recorded(first), changed=1), sequence=2)
    assert second.options.feedback and second.matching["provenance"] == CARRIED
