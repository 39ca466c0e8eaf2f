"""Deterministic obfuscations the evaluation corpus applies to hand-written attacks.

Each transform returns the disguised text and the kinds the disguise itself adds (zero-width
characters are hidden text, for instance). Only injection and mimicry survive a disguise as
labels: a homoglyph in a URL or a key changes what the text is, not how it hides.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

_CYRILLIC = dict(zip("aceopxyiABCEHKMOPTXsj", "асеорхуіАВСЕНКМОРТХѕј", strict=True))
_GREEK = dict(zip("oivAEHIKMNOTXYZ", "οινΑΕΗΙΚΜΝΟΤΧΥΖ", strict=True))
_LEET = str.maketrans(
    {
        "a": "4",
        "e": "3",
        "i": "1",
        "o": "0",
        "s": "5",
        "t": "7",
        "A": "4",
        "E": "3",
        "I": "1",
        "O": "0",
        "S": "5",
        "T": "7",
    }
)
_ZERO_WIDTH = ("\u200b", "\u200c", "\u2060", "\u200d")


def _is_cjk(char: str) -> bool:
    return 0x3400 <= ord(char) <= 0x9FFF


def homoglyph(text: str) -> str:
    out = []
    for index, char in enumerate(text):
        table = _CYRILLIC if index % 3 else _GREEK
        out.append(table.get(char, char) if index % 2 == 0 else char)
    return "".join(out)


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else ("\u3000" if c == " " else c) for c in text)


def zero_width(text: str) -> str:
    out = []
    for index, char in enumerate(text):
        out.append(char)
        following = text[index + 1 : index + 2]
        if char.isalnum() and following.isalnum():
            out.append(_ZERO_WIDTH[index % len(_ZERO_WIDTH)])
    return "".join(out)


def spacing(text: str) -> str:
    return "   ".join(" ".join(word) for word in text.split(" "))


def punctuation(text: str) -> str:
    return " ".join(".".join(word) if word.isalpha() else word for word in text.split(" "))


def case(text: str) -> str:
    return "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(text))


def leet(text: str) -> str:
    return text.translate(_LEET)


def markdown_split(text: str) -> str:
    return " ".join(f"{w[:2]}**{w[2:]}**" if len(w) > 4 and w.isalpha() else w for w in text.split(" "))


def html_tags(text: str) -> str:
    return " ".join(f"{w[:3]}<b></b>{w[3:]}" if len(w) > 5 and w.isalpha() else w for w in text.split(" "))


def entities(text: str) -> str:
    return "".join(f"&#{ord(c)};" if c in "aeiou" and i % 2 else c for i, c in enumerate(text))


def encoded(text: str) -> str:
    return "Reference payload (base64): " + base64.b64encode(text.encode()).decode()


def html_comment(text: str) -> str:
    return f"See the pricing table below.\n<!-- {text} -->\n| plan | price |"


def css_hidden(text: str) -> str:
    return f'Thanks for reading! <span style="display:none">{text}</span>'


def tag_chars(text: str) -> str:
    """The payload as invisible tag characters after a harmless visible sentence (ASCII only)."""
    return "Release notes are published every Friday." + "".join(chr(0xE0000 + ord(c)) for c in text if " " <= c <= "~")


def zh_spacing(text: str) -> str:
    return "".join(c + " " if _is_cjk(c) else c for c in text)


def zh_punct(text: str) -> str:
    return "".join(c + "·" if _is_cjk(c) else c for c in text)


TRANSFORMS: dict[str, tuple[Callable[[str], str], tuple[str, ...]]] = {
    "homoglyph": (homoglyph, ()),
    "fullwidth": (fullwidth, ()),
    "zero_width": (zero_width, ("hidden_text",)),
    "spacing": (spacing, ()),
    "punctuation": (punctuation, ()),
    "case": (case, ()),
    "leet": (leet, ()),
    "markdown_split": (markdown_split, ()),
    "html_tags": (html_tags, ()),
    "entities": (entities, ()),
    "base64": (encoded, ("hidden_text",)),
    "html_comment": (html_comment, ("hidden_text",)),
    "css_hidden": (css_hidden, ("hidden_text",)),
    "tag_chars": (tag_chars, ("hidden_text",)),
    "zh_spacing": (zh_spacing, ()),
    "zh_punct": (zh_punct, ()),
}
SURVIVING_KINDS = frozenset({"injection", "mimicry"})
