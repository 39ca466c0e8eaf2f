"""Executable HTML: markup that runs code, loads other pages or submits data when rendered.

Markdown code samples are exempt (the renderer escapes them). Scheme checks read the folded view,
where entities are decoded, so "jav&#x61;script:" and "java\tscript:" are caught as browsers read them.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator

from knowledge.safety.context import ScanContext
from knowledge.safety.findings import Kind, Severity
from knowledge.safety.spans import grouped_finditer

MESSAGES = {
    "html.script": "A <script> element runs code when the page renders.",
    "html.event_handler": "An HTML event-handler attribute (on…=) runs code when the page renders.",
    "html.javascript_url": "A javascript:, vbscript: or scriptable data: URL runs code when followed.",
    "html.embedded_frame": "Embeds another document or plug-in (iframe, object, embed).",
    "html.form": "A form (or form action) can submit what the reader types to another site.",
    "html.meta_refresh": "A meta refresh or base element redirects the page or rewrites its links.",
    "html.style": "A style sheet that runs code or imports outside styles.",
}

_I = re.IGNORECASE


def _tag(name: str) -> re.Pattern[str]:
    return re.compile(rf"<\s*{name}\b", _I)


# (code, severity, pattern, opener): a pattern with an opener reads from it up to the tag's `>`, found
# in linear time (knowledge.safety.spans: tried at every `<` of a long text without `>`, each read to
# the end). A script's element runs to its closing tag (_rule_spans).
_RULES: tuple[tuple[str, Severity, re.Pattern[str], re.Pattern[str] | None], ...] = (
    ("html.script", Severity.HIGH, re.compile(r"<\s*script\b[^>]*>", _I), _tag("script")),
    (
        "html.event_handler",
        Severity.HIGH,
        re.compile(r"<\s*[a-z][a-z0-9-]*\b[^>]*?[\s\"'/]on[a-z]{3,}\s*=\s*[^>]*>?", _I),
        re.compile(r"<\s*[a-z]", _I),
    ),
    (
        "html.embedded_frame",
        Severity.HIGH,
        re.compile(r"<\s*(?:iframe|frame|frameset|object|embed|applet|portal)\b[^>]*>?|\ssrcdoc\s*=", _I),
        None,
    ),
    ("html.form", Severity.HIGH, re.compile(r"<\s*form\b[^>]*>?|\sformaction\s*=\s*[^\s>]+", _I), None),
    (
        "html.meta_refresh",
        Severity.HIGH,
        re.compile(r"<\s*meta\b[^>]*http-equiv\s*=\s*[\"']?refresh[^>]*>?", _I),
        _tag("meta"),
    ),
    ("html.meta_refresh", Severity.HIGH, re.compile(r"<\s*base\b[^>]*\bhref\s*=[^>]*>?", _I), _tag("base")),
    (
        "html.style",
        Severity.MEDIUM,
        re.compile(r"<\s*style\b[^>]*>[^<]*?(?:expression\s*\(|javascript:|behavior\s*:|-moz-binding|@import)", _I),
        _tag("style"),
    ),
    (
        "html.style",
        Severity.MEDIUM,
        re.compile(r"\sstyle\s*=\s*[\"'][^\"']*(?:expression\s*\(|javascript:|behavior\s*:|-moz-binding)", _I),
        None,
    ),
)
_SCRIPT_CLOSE = re.compile(r"<\s*/\s*script\s*>", _I)
_SPACED = r"[\s\x00-\x1f]*"
_SCHEME = _SPACED.join("javascript") + "|" + _SPACED.join("vbscript") + "|" + _SPACED.join("livescript")
_SCRIPT_DATA = r"data:\s*(?:text/html|application/(?:x-)?(?:javascript|ecmascript)|image/svg\+xml|text/javascript)"
_SCRIPT_URL = re.compile(
    rf"(?:(?:href|src|action|formaction|xlink:href|data|background|poster|to|url)\s*=\s*[\"']?|\]\(\s*<?|url\(\s*[\"']?)"
    rf"{_SPACED}(?P<url>(?:{_SCHEME}){_SPACED}:|{_SCRIPT_DATA})|"
    rf"(?<![\w/])(?P<bare>(?:javascript|vbscript):)(?=[a-z/(%])",
    re.IGNORECASE,
)
_URL_REST = re.compile(r"[^\s\"'<>]*")


def find_executable_html(context: ScanContext) -> None:
    text = context.text
    if "<" in text:
        for code, severity, span in _rule_spans(text):
            if not context.in_code(*span):
                context.add(*span, Kind.EXECUTABLE_HTML, severity, code, MESSAGES[code])
    lowered = text.lower()
    if "script" in lowered or "data:" in lowered or "&" in text or not text.isascii():
        view = context.marked
        for match in _SCRIPT_URL.finditer(view.text):
            group = "url" if match["url"] else "bare"
            rest = _URL_REST.match(view.text, match.end())
            start, end = view.span(match.start(group), rest.end() if rest else match.end())
            if not context.in_code(start, end):
                code = "html.javascript_url"
                context.add(start, end, Kind.EXECUTABLE_HTML, Severity.HIGH, code, MESSAGES[code])


def _rule_spans(text: str) -> Iterator[tuple[str, Severity, tuple[int, int]]]:
    closes = [close.span() for close in _SCRIPT_CLOSE.finditer(text)] if "script" in text.lower() else []
    for code, severity, pattern, opener in _RULES:
        if opener is None:
            matches: Iterator[re.Match[str]] = pattern.finditer(text)
        else:
            matches = grouped_finditer(pattern, text, opener=opener, closers=">")
        covered = 0  # a script element runs to its closing tag: what it holds is not another script
        for match in matches:
            start, end = match.span()
            if start < covered:
                continue
            if code == "html.script":
                after = bisect_left(closes, (end, end))
                end = closes[after][1] if after < len(closes) else end
                covered = end
            yield code, severity, (start, end)
