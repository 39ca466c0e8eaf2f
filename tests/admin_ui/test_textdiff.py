"""The review diff's engine: lines matched first, then words inside a changed line (CJK character by character)."""

from __future__ import annotations

from knowledge.admin.textdiff import ADDED, CHANGED, REMOVED, SAME, Piece, field_diff, line_diff, word_diff


def changed_text(pieces: tuple[Piece, ...]) -> list[str]:
    return [piece.text for piece in pieces if piece.changed]


def test_a_changed_word_is_marked_inside_an_otherwise_equal_line() -> None:
    old, new = word_diff("Agents cite the entry ID.", "Agents quote the entry ID.")
    assert changed_text(old) == ["cite"]
    assert changed_text(new) == ["quote"]
    assert "".join(p.text for p in old) == "Agents cite the entry ID."
    assert "".join(p.text for p in new) == "Agents quote the entry ID."


def test_chinese_changes_are_marked_per_character_not_per_sentence() -> None:
    old, new = word_diff("预算纪律很重要", "预算规则很重要")
    assert changed_text(old) == ["纪律"]
    assert changed_text(new) == ["规则"]


def test_lines_are_kept_added_removed_or_changed_in_order() -> None:
    rows = line_diff(["one", "two", "three"], ["one", "TWO", "three", "four"])
    assert [row.kind for row in rows] == [SAME, CHANGED, SAME, ADDED]
    assert [(row.old_number, row.new_number) for row in rows] == [(1, 1), (2, 2), (3, 3), (None, 4)]
    removed = line_diff(["keep", "drop"], ["keep"])
    assert [row.kind for row in removed] == [SAME, REMOVED]
    assert removed[1].new is None


def test_a_new_field_is_all_added_and_an_equal_field_is_unchanged() -> None:
    new = field_diff("body", None, "first\nsecond")
    assert new.changed and new.added == 2 and new.removed == 0
    same = field_diff("title", "Same", "Same")
    assert not same.changed
