"""Text analysis shared by indexing and querying: NFKC folding, CJK segmentation, stemming, stopwords."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

import Stemmer

from knowledge.retrieval.stopwords import is_function_word, is_stopword

# Han ideographs (BMP, compatibility and the supplementary planes). Everything else that is a
# letter or digit forms "word" runs: Latin, Greek, Cyrillic, kana, hangul.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_HAN_RUN = re.compile(f"[{_HAN}]+")
_WORD = rf"[^\W{_HAN}]+"  # letters, digits and underscores, not Han
# Operators that carry meaning in technical questions ("what does += do"); `->` is a return annotation.
_OPERATOR = r"(?:\*\*|//|<<|>>|[-+*/%&|^@<>!=:])=|->"
# The runs analysis cuts text into, in order: a Han run; a --flag; a word, maybe joined to the next
# by dots or hyphens (dotted.names, version numbers 3.11.2, IDs EG-202, x-ray); an operator.
_TOKENS = re.compile(rf"([{_HAN}]+)|((?<![\w-])--[^\W\d_{_HAN}][\w-]*)|({_WORD}(?:[.\-]{_WORD})*)|({_OPERATOR})")
# Where a compound token splits into parts: dots, hyphens, underscores, dashes of a flag.
_SEPARATORS = re.compile(r"[._\-]+")
# Inside one piece: camelCase humps, ACRONYMS before a capitalised word, digit runs, other letters.
_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")
# A plain ASCII word needs none of the work below (ASCII case folding is lower()).
_ASCII_COMPOUND = re.compile(r"[._\-]|[a-z][A-Z]|[A-Z]{2}[a-z]|[A-Za-z]\d|\d[A-Za-z]")
_MIXED = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]|[^\W\d_]\d|\d[^\W\d_]")
_LATIN = re.compile(r"[a-z]+")
# Before code-aware analysis: IDs (letters, a dash, digits) were the only compounds kept whole.
_ID_SHAPE = re.compile(r"[^\W\d_][^\W_]*-\d+")
_PROSE_COMPOUND = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
_PLAIN = re.compile(rf"[^\W_{_HAN}]+")
# English clitics ("what's", "isn't", "we'll"): the letters after the apostrophe are not words.
_CLITIC = re.compile(r"(?<=[^\W\d_])['’](?:s|t|d|ll|re|ve|m)\b", re.IGNORECASE)
# With `contractions`, a negative contraction gives back its verb: "doesn't" -> "does", "isn't" ->
# "is" (stop words, like the "not" it stands for), not the fragments `doesn`, `isn`, `don` the clitic
# rule alone leaves, which are terms no question means. "can't", "won't", "shan't" and "cannot" are
# irregular.
_NEGATIVE = re.compile(
    r"\b(?:(ca)n['’]t|(wo)n['’]t|(sha)n['’]t|(ai)n['’]t|(can)not)\b|(?<=[^\W\d_])n['’]t\b", re.IGNORECASE
)
_IRREGULAR_NEGATIVES = ("can", "will", "shall", "is", "can")  # the verb of each of _NEGATIVE's groups, in order
# A cheap test first: _NEGATIVE alone costs analysis half as much again, and few texts have a negative.
_NEGATIVE_HINT = re.compile(r"[nN](?:['’][tT]|[nN][oO][tT])")
# Sentence ends: CJK and Latin terminators, semicolons, line breaks. A split never cuts a term
# (terms are runs of letters and digits, and `!=` stays whole), so a field's terms are its
# sentences' terms in order.
_SENTENCE_END = re.compile(r"(?<=[。！？；;\n])|(?<=[!?])(?!=)|(?<=[.．]\s)")

TAG_PREFIX = "#"
TERMS_KEPT = 50_000  # runs and Chinese words whose terms analyze_text remembers, per analyzer
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
    # Keep code tokens whole as well as cut into parts (__getattr__, snake_case, CamelCase, dotted
    # names, --flags, version numbers, error codes) and index operators (+=, ==, ->).
    code_aware: bool = True
    # With code_aware: each name of a dotted name is a term whole too, besides its words, so
    # `mark_safe` finds `django.utils.safestring.mark_safe` by the whole name it ends with (pylibs dev
    # nDCG@10 0.840 -> 0.847, Cranfield and CMRC unchanged). Indexes compiled before it keep it off.
    dotted_names: bool = True
    # Negative contractions ("doesn't", "won't", "cannot") analysed as their verb (a stop word), not as
    # the fragment (`doesn`, `won`) left by dropping the clitic. Indexes compiled before it keep it off.
    contractions: bool = True
    # "full": function words and question filler (anyone, possible, papers, information …);
    # "function": function words only.
    stopwords: str = "full"

    @classmethod
    def from_meta(cls, meta: dict[str, object]) -> AnalyzerConfig:
        """The configuration an index or analysis cache recorded; what it predates, it did without."""
        return cls(**{"code_aware": False, "dotted_names": False, "contractions": False, **meta})  # type: ignore[arg-type]


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


def split_words(text: str, config: AnalyzerConfig) -> Iterator[tuple[str, bool, bool]]:
    """Yield (word, is_cjk, is_part) triples of text in order, folded, before stopwords and stemming.

    A compound token (`__getattr__`, `snake_case`, `CamelCase`, `dotted.names`, `--flags`, `3.11.2`,
    `EG-202`) is one word, followed by its parts (`is_part`), so a question matches it whole and by
    its parts (with `dotted_names`, a dotted name's parts include each of its compound names whole:
    `mark_safe`, `QuerySet`); with `code_aware` off, only IDs (letters-digits) stay whole and words split at
    punctuation. Operators such as `+=` are words of their own when `code_aware` is on.
    """
    for han, flag, word, operator in _tokens(text, config):
        if han:
            for piece in _han_words(han, config):
                yield piece, True, False
        else:
            yield from _token_words(flag, word, operator, config)


def _tokens(text: str, config: AnalyzerConfig) -> list[tuple[str, str, str, str]]:
    """The runs of a text (_TOKENS' groups: Han, flag, word, operator; one is not empty)."""
    text = unicodedata.normalize("NFKC", text)
    if config.contractions and _NEGATIVE_HINT.search(text):
        text = _NEGATIVE.sub(_negative_verb, text)
    found: list[tuple[str, str, str, str]] = _TOKENS.findall(_CLITIC.sub("", text))
    return found


def _negative_verb(match: re.Match[str]) -> str:
    """The verb of a negative contraction ("" for the regular `n't`, whose verb precedes the match)."""
    for group, verb in enumerate(_IRREGULAR_NEGATIVES, start=1):
        if match.group(group):
            return verb
    return ""


def _han_words(han: str, config: AnalyzerConfig) -> list[str]:
    segment = _segment_function(config.segmenter, config.cjk_mode, config.hmm)
    return [piece for piece in segment(normalize_text(han)) if piece.strip()]


def _token_words(flag: str, word: str, operator: str, config: AnalyzerConfig) -> Iterator[tuple[str, bool, bool]]:
    """split_words of one run that is not Han."""
    if config.code_aware:
        token = flag or word or operator
        if token.isascii() and _ASCII_COMPOUND.search(token) is None:
            yield token.lower(), False, False  # the common case: a plain ASCII word, folded
        else:
            yield from _compound(token, dotted_names=config.dotted_names)
    else:
        yield from _legacy_words(flag or word)


def _compound(token: str, *, dotted_names: bool) -> Iterator[tuple[str, bool, bool]]:
    whole = normalize_text(token)
    if not _SEPARATORS.search(token) and not _MIXED.search(token):
        yield whole, False, False  # a plain word (or an operator): nothing to split
        return
    if _PROSE_COMPOUND.fullmatch(token):
        # boundary-layer, two-dimensional: prose writes these with a hyphen or a space, so only
        # their words are terms (a whole term would miss every question that uses the space).
        for part in token.split("-"):
            yield normalize_text(part), False, False
        return
    yield whole, False, False
    names = token.split(".") if dotted_names else [token]
    for name in names:
        if len(names) > 1:
            yield from _dotted_name(name, whole)
        for piece in _SEPARATORS.split(name):
            parts = _HUMPS.findall(piece) if _MIXED.search(piece) else [piece]
            for part in parts:
                folded = normalize_text(part)
                # A lone letter (the `e` of E501, the `v` of v2) says nothing on its own.
                if folded and folded != whole and (len(folded) > 1 or folded.isdigit()):
                    yield folded, False, True


def _dotted_name(name: str, whole: str) -> Iterator[tuple[str, bool, bool]]:
    """One name of a dotted name (`mark_safe`, `QuerySet`, `__getattr__`) as a part, whole, when it is a
    compound itself; its words follow it as the dotted name's other parts."""
    folded = normalize_text(name)
    compound = _SEPARATORS.search(name) is not None or _MIXED.search(name) is not None
    if compound and folded != whole and len(folded.strip("_-")) > 1 and not _PROSE_COMPOUND.fullmatch(name):
        yield folded, False, True


def _legacy_words(token: str) -> Iterator[tuple[str, bool, bool]]:
    """Words as indexes compiled before code-aware analysis cut them: IDs whole, else split at punctuation."""
    folded = normalize_text(token)
    if _ID_SHAPE.fullmatch(folded):
        yield folded, False, False
        for part in folded.split("-"):
            yield part, False, True
        return
    for part in _PLAIN.findall(folded):
        yield part, False, False


def split_sentences(text: str) -> list[str]:
    """The sentences of a text, in order (empty ones dropped): the passages coverage is measured on."""
    return [part for part in _SENTENCE_END.split(text) if part.strip()]


def _stem_word(word: str, config: AnalyzerConfig) -> str:
    if config.stem and _LATIN.fullmatch(word):
        return str(_stemmer().stemWord(word))
    return word


@cache
def _remembered(config: AnalyzerConfig) -> dict[object, tuple[str, ...]]:
    """The terms of runs and Chinese words analysed lately with `config` (runs: _TOKENS' groups)."""
    return {}


def analyze_text(text: str, config: AnalyzerConfig) -> list[str]:
    """The terms of a text, in order, with duplicates: what both entries and topics become.

    The terms of split_words' words less stopwords, stemmed. Each run that is not Han, and each word
    the segmenter cuts from a Han run, is analysed once and remembered (up to TERMS_KEPT of them):
    topics and texts repeat their words.
    """
    stop = is_stopword if config.stopwords == "full" else is_function_word
    remembered = _remembered(config)
    if len(remembered) >= TERMS_KEPT:
        remembered.clear()
    terms: list[str] = []
    for run in _tokens(text, config):
        if run[0]:
            for piece in _han_words(run[0], config):
                found = remembered.get(piece)
                if found is None:
                    found = remembered[piece] = () if stop(piece) else (_stem_word(piece, config),)
                terms += found
            continue
        found = remembered.get(run)
        if found is None:
            words = _token_words(run[1], run[2], run[3], config)
            found = remembered[run] = tuple(_stem_word(word, config) for word, _, _ in words if not stop(word))
        terms += found
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
        key = _join_words(_whole_words(tag, config))
        if key:
            terms.append(TAG_PREFIX + key)
            terms.extend(analyze_text(tag, config))
    return terms


def _whole_words(text: str, config: AnalyzerConfig) -> list[tuple[str, bool]]:
    """The words of a text without the parts of compounds: what exact tag keys are made of."""
    return [(word, is_cjk) for word, is_cjk, is_part in split_words(text, config) if not is_part]


def _join_words(words: list[tuple[str, bool]]) -> str:
    """Words back into one key: Chinese words touch, everything else is separated by a space."""
    joined = ""
    for offset, (word, is_cjk) in enumerate(words):
        previous_cjk = offset > 0 and words[offset - 1][1]
        joined += word if offset == 0 or (is_cjk and previous_cjk) else " " + word
    return joined


def exact_tag_candidates(topic: str, config: AnalyzerConfig, *, longest: int = 4) -> set[str]:
    """Tag keys a topic could name exactly: every run of up to `longest` of its words."""
    words = _whole_words(topic, config)
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
