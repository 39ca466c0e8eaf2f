"""Budget packing (seed §4): whole entries in rank order, skip-and-continue, never over budget."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.retrieval.packing import MAX_SKIPS, OMITTED_LISTED, Pack, clamp_budget, pack_to_budget
from knowledge.retrieval.ranking import Hit


def pack(costs: list[int], budget: int, limit: int | None = None) -> Pack:
    ranked = [Hit(position=i, score=float(len(costs) - i)) for i in range(len(costs))]
    return pack_to_budget(
        ranked, tokens_of=costs.__getitem__, budget=budget, min_tokens=min(costs, default=None), limit=limit
    )


def test_it_clamps_the_budget_to_the_seed_range() -> None:
    assert [clamp_budget(b) for b in (None, -5, 0, 199, 200, 2000, 8000, 8001, 10**9)] == [
        2000,
        200,
        200,
        200,
        200,
        2000,
        8000,
        8000,
        8000,
    ]


def test_an_entry_that_does_not_fit_is_skipped_and_the_next_one_tried() -> None:
    result = pack([150, 300, 120, 500, 30], 310)

    assert [h.position for h in result.packed] == [0, 2, 4]
    assert result.used_tokens == 300
    assert result.truncated is True
    assert [h.position for h in result.omitted] == [1, 3]


def test_everything_fits_means_not_truncated() -> None:
    result = pack([100, 100], 200)

    assert (len(result.packed), result.used_tokens, result.truncated, result.omitted) == (2, 200, False, ())


def test_the_pack_is_empty_only_below_the_cheapest_hit() -> None:
    assert pack([500, 400, 250], 240).packed == ()
    assert [h.position for h in pack([500, 400, 250], 250).packed] == [2]


def test_limit_caps_entries_without_claiming_truncation() -> None:
    result = pack([10, 10, 10], 1000, limit=2)

    assert len(result.packed) == 2
    assert result.truncated is False


def test_skipping_stops_after_a_bounded_number_of_refusals() -> None:
    costs = [100] + [1000] * (MAX_SKIPS + 10) + [1]
    result = pack(costs, 150)

    assert [h.position for h in result.packed] == [0]
    assert len(result.omitted) == OMITTED_LISTED
    assert result.truncated is True


@settings(max_examples=300, deadline=None)
@given(
    costs=st.lists(st.integers(min_value=1, max_value=3000), max_size=60),
    budget=st.integers(min_value=200, max_value=8000),
)
def test_packing_never_exceeds_the_budget_and_is_deterministic(costs: list[int], budget: int) -> None:
    first = pack(costs, budget)
    again = pack(costs, budget)

    assert first == again
    assert first.used_tokens == sum(costs[h.position] for h in first.packed) <= budget
    assert [h.position for h in first.packed] == sorted(h.position for h in first.packed)
    if costs and min(costs) <= budget:
        assert first.packed
    leftover = budget - first.used_tokens
    assert all(costs[h.position] > leftover for h in first.omitted)
    assert first.truncated == (len(first.packed) < len(costs))


def test_a_full_pack_still_names_the_matching_hits_it_left_out() -> None:
    """QA: once the leftover budget was below the cheapest hit the scan stopped, so `omitted` (and
    `truncated`) missed hits after it, one of them the very entry the hint quoted the price of."""
    result = pack([150, 300, 100, 60], budget=200)

    assert [hit.position for hit in result.packed] == [0]
    assert [hit.position for hit in result.omitted] == [1, 2, 3]
    assert result.truncated


def test_omitted_stops_at_the_listed_number() -> None:
    result = pack([200, *[300] * 40], budget=200)

    assert len(result.omitted) == OMITTED_LISTED and result.truncated
