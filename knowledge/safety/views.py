"""Normalised views of a text that remember, per character, where it came from in the original.

Attackers hide phrases behind look-alike letters, invisible characters, spacing, case, HTML
entities and tags. Rules match on views that undo those tricks; `View.span` maps a match back to
the exact original offsets so the review page highlights what the author actually wrote.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from knowledge.safety.lookalikes import confusable_letter, simplified

# Characters that render as nothing or only steer layout; they are dropped from every view.
INVISIBLE = frozenset(
    [
        *(0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFEFF, 0xFFA0),
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2070),
        *range(0xFE00, 0xFE10),
        *range(0xE0000, 0xE0080),
        *range(0xE0100, 0xE01F0),
    ]
)
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# HTML tags, comment markers and Markdown emphasis inside words ("ig**no**re", "ig<b></b>nore").
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,400}>|<!--|-->|(?<=\w)[*_~`]+(?=\w)")
_WORD = re.compile(r"[^\W_]+")
# Leetspeak digits read as letters, and "l" as "i" because look-alike tables map "І" and "|" to "l".
_LEET = (("0", "o"), ("1", "i"), ("3", "e"), ("4", "a"), ("5", "s"), ("7", "t"), ("8", "b"), ("9", "g"), ("l", "i"))


def _read_leet(text: str) -> str:
    """str.replace per pair: far faster than str.translate on CJK text, where a dict misses each character."""
    for digit, letter in _LEET:
        if digit in text:
            text = text.replace(digit, letter)
    return text


@cache
def _fold_char(ch: str) -> str:
    """One character as rules see it: compatibility form, no accents, Latin look-alikes, lower case,
    simplified Chinese. May be empty (invisible) or longer than one character (ligatures)."""
    code = ord(ch)
    if code in INVISIBLE:
        return ""
    category = unicodedata.category(ch)
    if category in {"Mn", "Me", "Cf"}:
        return ""
    out = []
    for part in unicodedata.normalize("NFD", unicodedata.normalize("NFKC", ch)):
        if unicodedata.category(part) == "Mn":
            continue
        out.append(confusable_letter(part) or part)
    folded = unicodedata.normalize("NFC", "".join(out)).casefold()
    return "".join(simplified(c) for c in folded)


class View:
    """`text`, and for each of its characters the offset of the original character it came from."""

    __slots__ = ("origin", "source_length", "text")

    def __init__(self, text: str, origin: list[int] | None, source_length: int) -> None:
        self.text = text
        self.origin = origin  # None: the identity (text is the original's folded twin, same length)
        self.source_length = source_length

    def at(self, index: int) -> int:
        return index if self.origin is None else self.origin[index]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original offsets covering view characters [start, end)."""
        if end <= start:
            point = self.at(start) if start < len(self.text) else self.source_length
            return point, point
        return self.at(start), self.at(end - 1) + 1

    def keep(self, ranges: Iterable[tuple[int, int]]) -> View:
        """Only the given ranges of this view, in order."""
        pieces: list[str] = []
        origin: list[int] = []
        for start, end in ranges:
            pieces.append(self.text[start:end])
            origin.extend(range(start, end) if self.origin is None else self.origin[start:end])
        return View("".join(pieces), origin, self.source_length)


class RunView(View):
    """The runs of `parent` that `pattern` matches, joined by `joiner`, leetspeak read as letters.

    The text is built at C speed; where each run came from is worked out only when a rule
    matches and asks for a span, because most scanned texts match nothing.
    """

    __slots__ = ("joiner", "parent", "pattern", "runs")

    def __init__(self, parent: View, pattern: re.Pattern[str], joiner: str) -> None:
        super().__init__(_read_leet(joiner.join(pattern.findall(parent.text))), None, parent.source_length)
        self.parent, self.pattern, self.joiner = parent, pattern, joiner
        self.runs: tuple[list[int], list[int]] | None = None

    def at(self, index: int) -> int:
        if self.runs is None:
            offsets, starts, position = [], [], 0
            for match in self.pattern.finditer(self.parent.text):
                offsets.append(position)
                starts.append(match.start())
                position += match.end() - match.start() + len(self.joiner)
            self.runs = offsets, starts
        offsets, starts = self.runs
        run = max(0, bisect.bisect_right(offsets, index) - 1)
        end = offsets[run + 1] - len(self.joiner) if run + 1 < len(offsets) else len(self.text)
        within = min(index - offsets[run], max(0, end - offsets[run] - 1))  # a joiner maps to its run's end
        return self.parent.at(starts[run] + within)


class _FoldTable(dict[int, str]):
    """`str.translate` table filled on first use; remembers which characters do not fold to one."""

    def __init__(self) -> None:
        super().__init__()
        self.uneven: set[str] = set()

    def __missing__(self, code: int) -> str:
        folded = _fold_char(chr(code))
        if len(folded) != 1:
            self.uneven.add(chr(code))
        self[code] = folded
        return folded


_TABLE = _FoldTable()


def fold(text: str) -> View:
    """The text with entities decoded, invisible characters dropped and every character folded."""
    if "&" in text and _ENTITY.search(text):
        return _fold_with_entities(text)
    if text.isascii():
        return View(text.lower(), None, len(text))
    folded = text.translate(_TABLE)
    if _TABLE.uneven.isdisjoint(text):
        return View(folded, None, len(text))
    pieces: list[str] = []
    origin: list[int] = []
    _fold_range(text, 0, len(text), pieces, origin)
    return View("".join(pieces), origin, len(text))


def _fold_with_entities(text: str) -> View:
    pieces: list[str] = []
    origin: list[int] = []
    position = 0
    for match in _ENTITY.finditer(text):
        _fold_range(text, position, match.start(), pieces, origin)
        decoded = html.unescape(match[0])
        folded = "".join(_fold_char(ch) for ch in decoded) if decoded != match[0] else match[0].lower()
        pieces.append(folded)
        origin.extend([match.start()] * len(folded))
        position = match.end()
    _fold_range(text, position, len(text), pieces, origin)
    return View("".join(pieces), origin, len(text))


def _fold_range(text: str, start: int, end: int, pieces: list[str], origin: list[int]) -> None:
    for index in range(start, end):
        folded = _TABLE[ord(text[index])]
        if folded:
            pieces.append(folded)
            origin.extend([index] * len(folded))


def markup_free(view: View) -> View:
    """The view without HTML tags, comment markers and in-word emphasis (comments' text stays: it hides)."""
    if not any(mark in view.text for mark in "<>*_~`"):
        return view
    ranges, position = [], 0
    for match in _TAG.finditer(view.text):
        ranges.append((position, match.start()))
        position = match.end()
    ranges.append((position, len(view.text)))
    return view.keep((s, e) for s, e in ranges if e > s)


def words(view: View) -> View:
    """Letter and digit runs separated by one space (punctuation, Markdown and line breaks vanish),
    leetspeak and l/I look-alikes read as letters, so rules are written through `loosen`."""
    return RunView(view, _WORD, " ")


def compact(view: View) -> View:
    """Letters and digits only, leetspeak read as letters: defeats s p a c i n g and i.n.s.e.r.t.s."""
    return RunView(view, _WORD, "")


def loosen(pattern: str) -> str:
    """A pattern written in plain lower-case words, in the alphabet of the `words` and `compact` views.

    Only "l" changes: patterns hold no digits outside quantifiers and no escape that uses "l".
    """
    return pattern.replace("l", "i")


@dataclass(frozen=True)
class Views:
    """The views every rule family shares, built once per scan."""

    original: str
    folded: View
    words: View
    compact: View


def build_views(text: str, folded: View | None = None) -> Views:
    clean = markup_free(folded or fold(text))
    return Views(text, clean, words(clean), compact(clean))
