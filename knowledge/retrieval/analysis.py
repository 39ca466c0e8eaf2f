"""Text analysis shared by indexing and querying: NFKC folding, CJK segmentation, stemming, stopwords."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

import Stemmer

from knowledge.retrieval.stopwords import is_stopword

# Han ideographs (BMP, compatibility and the supplementary planes). Everything else that is a
# letter or digit forms "word" runs: Latin, Greek, Cyrillic, kana, hangul.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_RUNS = re.compile(rf"([{_HAN}]+)|([^\W_{_HAN}]+(?:-\d+)?)")
# Public IDs such as EG-202 or CRAN-0001 (after folding): letters, a dash, digits.
_HAN_RUN = re.compile(f"[{_HAN}]+")
_ID_SHAPE = re.compile(r"[^\W\d_][^\W_]*-\d+")
_LATIN = re.compile(r"[a-z]+")
# English clitics ("what's", "isn't", "we'll"): the letters after the apostrophe are not words.
_CLITIC = re.compile(r"(?<=[^\W\d_])['’](?:s|t|d|ll|re|ve|m)\b")
# Sentence ends: CJK and Latin terminators, semicolons, line breaks. A split never cuts a term
# (terms are runs of letters and digits), so a field's terms are its sentences' terms in order.
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;\n])|(?<=[.．]\s)")

TAG_PREFIX = "#"
BIGRAM_PREFIX = "~"
SEGMENTERS = ("rjieba", "jieba")
DEFAULT_SEGMENTER = "rjieba"


@dataclass(frozen=True, slots=True)
class AnalyzerConfig:
    """How text becomes terms; stored in the index so queries are analysed exactly like entries."""

    segmenter: str = DEFAULT_SEGMENTER
    # "words": the segmenter's precise mode; "search": also the shorter words inside long ones.
    cjk_mode: str = "words"
    stem: bool = True
    # Let the segmenter guess unknown words (HMM). Off keeps names as single characters, which
    # segments the same name the same way in any context.
    hmm: bool = False
    # Also index overlapping character bigrams of Chinese text, prefixed with BIGRAM_PREFIX.
    cjk_bigrams: bool = False


def normalize_text(text: str) -> str:
    """Fold full-width forms and compatibility characters (NFKC) and case, so ＥＧ－２０２ == eg-202."""
    # Casefolding can produce characters NFKC would change again (e.g. ẞ -> ss is fine, but
    # some compatibility forms are not), so fold, then normalize once more: idempotent.
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def normalize_key(text: str) -> str:
    """The exact-match key of an ID or tag: folded, inner whitespace collapsed to one space."""
    return " ".join(normalize_text(text).split())


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@cache
def _segment_function(segmenter: str, cjk_mode: str, hmm: bool) -> Callable[[str], list[str]]:
    # Imported lazily: loading a dictionary costs tens of milliseconds (rjieba) to half a second
    # (jieba), which only processes that actually analyse Chinese should pay.
    if segmenter == "rjieba":
        import rjieba  # noqa: PLC0415  # lazy: see above

        cut = rjieba.cut_for_search if cjk_mode == "search" else rjieba.cut
        return lambda text: cut(text, hmm)
    if segmenter == "jieba":
        import jieba  # noqa: PLC0415  # lazy: see above

        # A private tokenizer: other code may add words to jieba's global one, and the index
        # must see the same segmentation at compile and at query time.
        tokenizer = jieba.Tokenizer()
        jieba.setLogLevel(60)
        tokenizer.initialize()
        if cjk_mode == "search":
            return lambda text: list(tokenizer.cut_for_search(text, HMM=hmm))
        return lambda text: list(tokenizer.cut(text, HMM=hmm))
    raise ValueError(f"unknown segmenter {segmenter!r}; expected one of {SEGMENTERS}")


def split_words(text: str, config: AnalyzerConfig) -> Iterator[tuple[str, bool]]:
    """Yield (word, is_cjk) pairs of folded text in order, before stopwords and stemming."""
    segment = None
    for han, other in _RUNS.findall(_CLITIC.sub("", normalize_text(text))):
        if han:
            segment = segment or _segment_function(config.segmenter, config.cjk_mode, config.hmm)
            for word in segment(han):
                if word.strip():
                    yield word, True
        elif _ID_SHAPE.fullmatch(other):
            # An ID is one term, and its parts are words too ("eg-202" -> eg-202, eg, 202).
            yield other, False
            for part in other.split("-"):
                yield part, False
        else:
            yield other, False


def split_sentences(text: str) -> list[str]:
    """The sentences of a text, in order (empty ones dropped): the passages coverage is measured on."""
    return [part for part in _SENTENCE_END.split(text) if part.strip()]


def _stem_word(word: str, config: AnalyzerConfig) -> str:
    if config.stem and _LATIN.fullmatch(word):
        return str(_stemmer().stemWord(word))
    return word


def analyze_text(text: str, config: AnalyzerConfig) -> list[str]:
    """The terms of a text, in order, with duplicates: what both entries and topics become."""
    terms = [_stem_word(word, config) for word, _ in split_words(text, config) if not is_stopword(word)]
    if config.cjk_bigrams:
        terms.extend(han_bigrams(text))
    return terms


def han_bigrams(text: str) -> list[str]:
    """Overlapping character bigrams of each Han run (a lone character stands for itself)."""
    bigrams: list[str] = []
    for run in _HAN_RUN.findall(normalize_text(text)):
        if len(run) == 1:
            bigrams.append(BIGRAM_PREFIX + run)
        bigrams.extend(BIGRAM_PREFIX + run[i : i + 2] for i in range(len(run) - 1))
    return bigrams


def analyze_tags(tags: tuple[str, ...], config: AnalyzerConfig) -> list[str]:
    """Tag terms: each tag's exact key (prefixed so it cannot collide) plus its analysed words."""
    terms: list[str] = []
    for tag in tags:
        key = _join_words(list(split_words(tag, config)))
        if key:
            terms.append(TAG_PREFIX + key)
            terms.extend(analyze_text(tag, config))
    return terms


def _join_words(words: list[tuple[str, bool]]) -> str:
    """Words back into one key: Chinese words touch, everything else is separated by a space."""
    joined = ""
    for offset, (word, is_cjk) in enumerate(words):
        previous_cjk = offset > 0 and words[offset - 1][1]
        joined += word if offset == 0 or (is_cjk and previous_cjk) else " " + word
    return joined


def exact_tag_candidates(topic: str, config: AnalyzerConfig, *, longest: int = 4) -> set[str]:
    """Tag keys a topic could name exactly: every run of up to `longest` of its words."""
    words = list(split_words(topic, config))
    return {
        TAG_PREFIX + _join_words(words[start : start + length])
        for start in range(len(words))
        for length in range(1, longest + 1)
        if start + length <= len(words)
    }


def is_han_word(term: str) -> bool:
    """Whether a term is all Han characters (a Chinese word, not a bigram, tag, ID or Latin word)."""
    return _HAN_RUN.fullmatch(term) is not None


def is_coverage_term(term: str, config: AnalyzerConfig) -> bool:
    """Whether a term counts when measuring how much of a topic an entry covers.

    With bigrams on, Chinese is measured on bigrams only: segmenters split unknown names
    differently in a question and in a passage, bigrams of the same name always agree.
    """
    if not config.cjk_bigrams:
        return True
    return term.startswith(BIGRAM_PREFIX) or _HAN_RUN.match(term) is None
