"""Hidden text: invisible and direction-changing characters, comments, CSS-hidden elements, images.

A reviewer reads the rendered page; an agent reads the raw text. Anything one sees and the other
does not is where an attacker puts instructions.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left

from knowledge.safety.context import ScanContext
from knowledge.safety.findings import Kind, Severity
from knowledge.safety.links import host_of, is_reserved
from knowledge.safety.spans import grouped_finditer

MESSAGES = {
    "hidden.bidi_control": "Bidirectional control characters reorder how the text displays (Trojan Source).",
    "hidden.zero_width": "Invisible zero-width characters split or hide text.",
    "hidden.direction_mark": "Invisible direction marks in text that has no right-to-left script.",
    "hidden.tag_characters": "Invisible Unicode tag characters carry hidden ASCII text.",
    "hidden.variation_selectors": "A run of invisible variation selectors can carry hidden data.",
    "hidden.html_comment": "An HTML comment: hidden on the page, read by agents.",
    "hidden.markdown_comment": "A Markdown comment idiom: hidden on the page, read by agents.",
    "hidden.css_hidden": "An element hidden with CSS or the hidden attribute: invisible on the page, read by agents.",
    "hidden.remote_image": "An image loaded from an outside host: fetching it can leak data to that host.",
    "hidden.data_image": "An image embedded as a data: URI, unreadable for a reviewer.",
}

_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]+")
_ZERO_WIDTH = re.compile(r"[\u200b\u200c\u200d\u2060-\u2064\u180e\u00ad\u034f\u115f\u1160\u3164\uffa0\ufeff]+")
_MARKS = re.compile(r"[\u200e\u200f\u061c]+")
_TAGS = re.compile(r"[\U000e0000-\U000e007f]+")
_SELECTORS = re.compile(r"[\ufe00-\ufe0f\U000e0100-\U000e01ef]{3,}")
_RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
_COMMENT = re.compile(r"<!--(.*?)(?:-->|\Z)", re.DOTALL)
_TOOL_COMMENT = re.compile(
    r"^\s*(?:toc|/toc|more|prettier-ignore(?:-start|-end)?|markdownlint-\S+.*|eslint-\S+.*|vale \S+.*|textlint-\S+.*|"
    r"omit in toc|end|start|#?region\b.*|#?endregion\b.*)?\s*$",
    re.IGNORECASE,
)
_MD_COMMENT = re.compile(
    r"^\[(?://|comment|_|#|hidden|note)\]:\s*(?:#|<>|<[^>\n]*>)\s*(?:\([^\n]*\)|\"[^\n]*\"|'[^\n]*')",
    re.MULTILINE | re.IGNORECASE,
)
_HIDDEN_STYLE = (
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.0+)?(?:px|pt|em|rem|%)?\s*(?:;|['\"]|!)|"
    r"opacity\s*:\s*0(?:\.0+)?\s*(?:;|['\"]|!)|color\s*:\s*(?:#fff(?:fff)?|white|transparent|rgba\([^)]*,\s*0\))\b|"
    r"(?:max-)?(?:height|width)\s*:\s*0(?:px)?\s*(?:;|['\"]|!)|clip\s*:\s*rect\(\s*0|text-indent\s*:\s*-\d{3,}|"
    r"(?:left|top)\s*:\s*-\d{3,}px"
)
_HIDDEN_TAG = re.compile(
    rf"<(?P<tag>[a-z][a-z0-9]*)\b(?=[^>]*(?:style\s*=\s*[\"'][^\"']*(?:{_HIDDEN_STYLE})|\shidden(?:\s|=|>|/)|"
    rf"\scolor\s*=\s*[\"']?(?:#fff(?:fff)?|white)\b|\saria-hidden\s*=\s*[\"']?true))[^>]*>",
    re.IGNORECASE,
)
_TAG_OPENER = re.compile(r"<[a-z]", re.IGNORECASE)
_IMAGE_OPENER = re.compile(r"!\[")
_HTML_IMAGE_OPENER = re.compile(r"<(?:img|image|source|video|audio|input)\b", re.IGNORECASE)
_MD_IMAGE = re.compile(r"!\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)?")
_HTML_IMAGE = re.compile(
    r"<(?:img|image|source|video|audio|input)\b[^>]*?\b(?:src|href|srcset|poster)\s*=\s*[\"']?([^\"'\s>]+)",
    re.IGNORECASE,
)
_REF_IMAGE = re.compile(r"!\[[^\]\n]*\]\[([^\]\n]+)\]")
_REF_DEFINITIONS = re.compile(r"^\s{0,3}\[([^\]\n]+)\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)


def find_hidden(context: ScanContext) -> None:
    _invisible_characters(context)
    if "<" in context.text:
        _comments_and_hidden_elements(context)
    if "![" in context.text or "<" in context.text:
        _images(context)
    if "]:" in context.text:
        for match in _MD_COMMENT.finditer(context.text):
            if not context.in_code(*match.span()):
                _add(context, match.start(), match.end(), Severity.MEDIUM, "hidden.markdown_comment")


def _add(context: ScanContext, start: int, end: int, severity: Severity, code: str) -> None:
    context.add(start, end, Kind.HIDDEN_TEXT, severity, code, MESSAGES[code])


def _invisible_characters(context: ScanContext) -> None:
    text = context.text
    if text.isascii():
        return
    for match in _BIDI.finditer(text):
        _add(context, match.start(), match.end(), Severity.HIGH, "hidden.bidi_control")
    for match in _TAGS.finditer(text):
        _add(context, match.start(), match.end(), Severity.HIGH, "hidden.tag_characters")
    for match in _SELECTORS.finditer(text):
        _add(context, match.start(), match.end(), Severity.MEDIUM, "hidden.variation_selectors")
    for match in _ZERO_WIDTH.finditer(text):
        if not _legitimate_joiner(text, match.start(), match.end()):
            _add(context, match.start(), match.end(), Severity.MEDIUM, "hidden.zero_width")
    if not _RTL.search(text):
        for match in _MARKS.finditer(text):
            _add(context, match.start(), match.end(), Severity.LOW, "hidden.direction_mark")


def _legitimate_joiner(text: str, start: int, end: int) -> bool:
    """Joiners inside emoji sequences and scripts that need them; a byte-order mark at the start."""
    run = text[start:end]
    if run == "\ufeff" and start == 0:
        return True
    if run not in {"\u200d", "\u200c"} or start == 0 or end >= len(text):
        return False
    before, after = text[start - 1], text[end]
    if _pictographic(before) or _pictographic(after) or after in "\ufe0f\u2640\u2642":
        return True
    return all(
        unicodedata.category(c).startswith(("L", "M")) and not c.isascii() and not _cjk(c) for c in (before, after)
    )


def _pictographic(char: str) -> bool:
    code = ord(char)
    return 0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF or 0x1F3FB <= code <= 0x1F3FF or char == "\ufe0f"


def _cjk(char: str) -> bool:
    return 0x3000 <= ord(char) <= 0x9FFF


def _comments_and_hidden_elements(context: ScanContext) -> None:
    text = context.text
    for match in _COMMENT.finditer(text):
        if context.in_code(*match.span()) or _TOOL_COMMENT.match(match[1]):
            continue
        _add(context, match.start(), match.end(), Severity.MEDIUM, "hidden.html_comment")
    closes: dict[str, list[tuple[int, int]]] = {}  # per tag name, found once (per element, it was quadratic)
    for match in grouped_finditer(_HIDDEN_TAG, text, opener=_TAG_OPENER, closers=">"):
        if context.in_code(*match.span()):
            continue
        tag = match["tag"].lower()
        if tag not in closes:
            closing = re.compile(rf"</\s*{re.escape(tag)}\s*>", re.IGNORECASE)
            closes[tag] = [close.span() for close in closing.finditer(text)]
        after = bisect_left(closes[tag], (match.end(), match.end()))
        end = closes[tag][after][1] if after < len(closes[tag]) else match.end()
        _add(context, match.start(), end, Severity.MEDIUM, "hidden.css_hidden")


def _images(context: ScanContext) -> None:
    text = context.text
    images = [
        *grouped_finditer(_MD_IMAGE, text, opener=_IMAGE_OPENER, closers="]\n"),
        *grouped_finditer(_HTML_IMAGE, text, opener=_HTML_IMAGE_OPENER, closers=">"),
    ]
    sources = [(m.start(), m.end(), m[1]) for m in images]
    definitions: dict[str, str] = {}  # read once: searched per image, unique labels made it quadratic
    for definition in _REF_DEFINITIONS.finditer(text):
        definitions.setdefault(definition[1].lower(), definition[2])
    for match in grouped_finditer(_REF_IMAGE, text, opener=_IMAGE_OPENER, closers="]\n"):
        if (source := definitions.get(match[1].lower())) is not None:
            sources.append((match.start(), match.end(), source))
    for start, end, source in sources:
        if context.in_code(start, end):
            continue
        if source.lower().startswith("data:"):
            _add(context, start, end, Severity.MEDIUM, "hidden.data_image")
            continue
        if not source.lower().startswith(("http:", "https:", "//")):
            continue
        host = host_of(source if "://" in source else "https:" + source)
        if host and not is_reserved(host) and not context.host_allowed(host):
            _add(context, start, end, Severity.MEDIUM, "hidden.remote_image")
