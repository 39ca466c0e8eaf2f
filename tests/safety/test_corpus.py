"""The scanner's labelled corpus: its size and variety, and its rates pinned above issue 12's targets."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from knowledge.safety.corpus import Corpus, half_of, load_corpus
from knowledge.safety.evaluation import KINDS, Rates, by_half, scan_samples
from knowledge.safety.obfuscation import TRANSFORMS

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / "scanner_corpus"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(CORPUS, demo=ROOT / "knowledge" / "demo")


@pytest.fixture(scope="module")
def report(corpus: Corpus) -> dict[str, Rates]:
    return by_half(scan_samples([*corpus.attacks, *corpus.benign]))


def test_the_corpus_is_large_varied_and_bilingual(corpus: Corpus) -> None:
    assert len(corpus.attacks) >= 200 and len(corpus.benign) >= 200
    bases = {sample.id for sample in corpus.attacks if not sample.variant}
    assert len(bases) >= 150, "at least 150 hand-written payloads, not variants of a few"
    assert len({sample.fields[next(iter(sample.fields))] for sample in corpus.attacks}) == len(corpus.attacks)
    languages = Counter(sample.lang for sample in corpus.attacks)
    assert languages["en"] >= 80 and languages["zh"] >= 80
    assert {sample.variant for sample in corpus.attacks if sample.variant} == set(TRANSFORMS)
    labelled = Counter(kind for sample in corpus.attacks for kind in sample.kinds)
    assert all(labelled[kind] >= 10 for kind in KINDS), labelled
    sources = Counter(sample.source.split("/")[0] for sample in corpus.benign)
    assert sources["hand-written"] >= 100 and sources["knowledge"] >= 30 and sources["shared"] >= 60


def test_halves_split_by_base_id_so_variants_stay_with_their_payload(corpus: Corpus) -> None:
    for sample in corpus.attacks:
        assert sample.half == half_of(sample.id.split("~")[0])
    assert Counter(sample.half for sample in corpus.attacks).keys() == {"tune", "holdout"}


@pytest.mark.parametrize("half", ["tune", "holdout", "all"])
def test_rates_stay_above_the_targets_with_margin(report: dict[str, Rates], half: str) -> None:
    """Targets: detection >= 95 %, false positives <= 2 %. Measured (2026-12-01): tune 100 % / 0 %,
    held-out 96.2 % / 1.4 %, all 98.2 % / 0.7 %. A change that lowers them must say why: on
    2026-12-01 six payloads aimed at prompt packs, doc pages and FAQs were added; the held-out one
    that hides its override in ordinary words ("discard the citation rules above", en-117) and its
    two variants are missed, which took held-out detection from 98.4 % to 96.2 %."""
    rates = report[half]
    assert rates.detection >= 0.96
    assert rates.false_positives <= 0.02
    assert report["all"].false_positives <= 0.01


def test_the_command_prints_rates_per_kind_and_per_half() -> None:
    out = io.StringIO()
    call_command("evaluate_scanner", stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    for word in ("tune", "holdout", "overall", *KINDS):
        assert word in text
    assert "holdout  detection" in text and "MISS" not in text


def test_the_command_explains_a_missing_corpus(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="No scanner corpus"):
        call_command("evaluate_scanner", corpus=tmp_path, stdout=io.StringIO(), stderr=io.StringIO())
