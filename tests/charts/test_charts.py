"""Charts are SVG a browser and a screen reader can read: well-formed, named, scaled and escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from knowledge.charts.bars import Bar, bar_chart
from knowledge.charts.measures import RunPoint, budget_scan_chart, context_shape_chart, quality_trend_chart
from knowledge.charts.svg import Frame

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def child(svg: ET.Element, tag: str) -> ET.Element:
    found = svg.find(f"{NS}{tag}")
    assert found is not None
    return found


def bar_widths(svg: ET.Element, colour: str) -> list[float]:
    return [float(r.get("width", 0)) for r in svg.iter(f"{NS}rect") if r.get("fill") == colour]


def test_a_chart_names_itself_for_screen_readers() -> None:
    svg = parse(budget_scan_chart([{"budget": 800, "entryCount": 3, "usedTokens": 790, "truncated": True}]))

    assert svg.get("role") == "img"
    labelled = svg.get("aria-labelledby", "").split()
    assert [child(svg, "title").get("id"), child(svg, "desc").get("id")] == labelled
    assert "790 tokens used, 3 entries · truncated" in str(child(svg, "desc").text)


def test_bars_are_proportional_on_a_linear_axis() -> None:
    svg = parse(bar_chart(Frame("t", "T", "S"), [Bar("a", 100), Bar("b", 400)], unit="x"))

    a, b = bar_widths(svg, "#1f6f47")
    assert b == 4 * a


def test_a_log_axis_keeps_small_channels_visible() -> None:
    shape = [
        {"source": "llmsTxt", "tokens": 700, "bytes": 2800},
        {"source": "llmsFullTxt", "tokens": 500_000, "bytes": 1_900_000},
    ]
    svg = parse(context_shape_chart(shape))

    small, large = bar_widths(svg, "#1f6f47")
    assert small > large / 10  # on a linear axis it would be 1/700 of the large one
    texts = [t.text for t in svg.iter(f"{NS}text")]
    assert "llms.txt" in texts and "500,000 tokens" in texts


def test_labels_are_escaped() -> None:
    svg = bar_chart(Frame("t", "<b>", "&"), [Bar("<script>alert(1)</script>", 1)], unit="")

    assert "<script>" not in svg
    assert child(parse(svg), "title").text == "<b>"


def test_the_quality_trend_draws_one_line_per_metric_present() -> None:
    runs = [
        RunPoint("#1 v1.0.0", {"ndcg_at_10": 0.5, "hit_rate": 0.6}),
        RunPoint("#2 v1.1.0", {"ndcg_at_10": 0.7, "hit_rate": 0.8}),
    ]
    svg = parse(quality_trend_chart(runs))

    assert len(list(svg.iter(f"{NS}polyline"))) == 2
    assert "latest #2 v1.1.0: nDCG@10 0.700, Hit rate 0.800" in str(child(svg, "desc").text)


def test_a_chart_without_data_still_renders() -> None:
    assert child(parse(quality_trend_chart([])), "desc").text == "No evaluation yet."
    assert parse(budget_scan_chart([])).get("role") == "img"
