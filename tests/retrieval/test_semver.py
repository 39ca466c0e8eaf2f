"""knowledge.retrieval.semver and calibration.entries_changed: what changed between two {id: hash} maps
(pure), checked against their definitions in sets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from knowledge.retrieval.calibration import entries_changed
from knowledge.retrieval.semver import bump_knowledge_version

maps = st.dictionaries(st.sampled_from([f"EG-{n}" for n in range(8)]), st.sampled_from("abc"), max_size=8)


@given(before=maps, after=maps)
def test_the_version_bump_is_major_on_a_removal_minor_on_an_addition_else_a_patch(
    before: dict[str, str], after: dict[str, str]
) -> None:
    if set(before) - set(after):
        expected = "3.0.0"
    elif set(after) - set(before):
        expected = "2.5.0"
    else:
        expected = "2.4.8"
    assert bump_knowledge_version("2.4.7", before=before, after=after) == expected


@given(before=maps, after=maps)
def test_entries_changed_counts_each_added_removed_or_edited_entry_once(
    before: dict[str, str], after: dict[str, str]
) -> None:
    edited = {key for key in set(before) & set(after) if before[key] != after[key]}
    assert entries_changed(before, after) == len(set(before) ^ set(after)) + len(edited)
