"""Line and word differences between two versions' fields, as plain values the review templates lay out.

Lines are matched first; a changed line is then compared word by word (each CJK character counts as a
word, since Chinese has no spaces), so a reviewer sees which words changed inside a paragraph. No
wrapping or width is decided here: the page wraps long lines itself, so both sides always fit.
A character nobody sees (a control character, a noncharacter) is shown by its code point, ⟨U+0001⟩.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest

from knowledge.services.content import REFUSED_IN_TEXT

SAME, ADDED, REMOVED, CHANGED = "same", "added", "removed", "changed"
# Words, runs of space, single CJK characters, single punctuation marks.
_TOKENS = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]|[^\W\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+|\s+|.")


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of text inside a line; `changed` marks words inserted (new side) or deleted (old side)."""

    text: str
    changed: bool = False


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One row of a diff: the old and new line numbers and text (None on the side where it is absent)."""

    kind: str
    old_number: int | None
    new_number: int | None
    old: tuple[Piece, ...] | None
    new: tuple[Piece, ...] | None


@dataclass(frozen=True, slots=True)
class FieldDiff:
    name: str
    lines: tuple[DiffLine, ...]

    @property
    def changed(self) -> bool:
        return any(line.kind != SAME for line in self.lines)

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.new is not None and line.kind != SAME)

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.old is not None and line.kind != SAME)


def _words(text: str) -> list[str]:
    return _TOKENS.findall(text)


def _merge(pieces: list[Piece]) -> tuple[Piece, ...]:
    merged: list[Piece] = []
    for piece in pieces:
        if merged and merged[-1].changed == piece.changed:
            merged[-1] = Piece(merged[-1].text + piece.text, piece.changed)
        elif piece.text:
            merged.append(piece)
    return tuple(merged)


def word_diff(old: str, new: str) -> tuple[tuple[Piece, ...], tuple[Piece, ...]]:
    """The two lines cut into unchanged and changed runs of words."""
    a, b = _words(old), _words(new)
    before: list[Piece] = []
    after: list[Piece] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            before.append(Piece("".join(a[i1:i2])))
            after.append(Piece("".join(b[j1:j2])))
            continue
        before.append(Piece("".join(a[i1:i2]), changed=True))
        after.append(Piece("".join(b[j1:j2]), changed=True))
    return _merge(before), _merge(after)


def line_diff(old: Sequence[str], new: Sequence[str]) -> tuple[DiffLine, ...]:
    """Every line of both sides in order: unchanged, removed, added, or changed (paired old and new)."""
    rows: list[DiffLine] = []
    matcher = difflib.SequenceMatcher(None, list(old), list(new), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(
                DiffLine(SAME, i + 1, j + 1, (Piece(old[i]),), (Piece(new[j]),))
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            )
            continue
        for i, j in zip_longest(range(i1, i2), range(j1, j2)):
            if i is None:
                rows.append(DiffLine(ADDED, None, j + 1, None, (Piece(new[j]),)))
            elif j is None:
                rows.append(DiffLine(REMOVED, i + 1, None, (Piece(old[i]),), None))
            else:
                before, after = word_diff(old[i], new[j])
                rows.append(DiffLine(CHANGED, i + 1, j + 1, before, after))
    return tuple(rows)


def shown(text: str) -> str:
    """`text` with each invisible character a reviewer must see written as its code point (QA: a title's U+0001
    made no visible change in the diff). Content saved since is refused them; older content may hold them."""
    return REFUSED_IN_TEXT.sub(lambda found: f"⟨U+{ord(found.group()):04X}⟩", text)


def field_diff(name: str, old: str | None, new: str) -> FieldDiff:
    """A field's diff; `old` None means the field did not exist before (a new entry)."""
    old_lines = [] if old is None else shown(old).splitlines() or [""]
    return FieldDiff(name=name, lines=line_diff(old_lines, shown(new).splitlines() or [""]))
