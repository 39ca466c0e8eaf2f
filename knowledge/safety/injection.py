"""Instruction injection: phrases that try to override, replace, extract or hide from the reader's rules.

English phrases match in the `words` view and, when long and specific, in the `compact` view;
Chinese phrases in the `compact` view. Exfiltration needs three things close together: a sending
verb, something sensitive and a destination outside the namespace's hosts.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import cache

from knowledge.safety import phrases_en, phrases_zh
from knowledge.safety.context import ScanContext
from knowledge.safety.findings import Kind, Severity
from knowledge.safety.links import url_host_is_external
from knowledge.safety.views import View, loosen

MESSAGES = {
    "injection.override": "Tells the reader to ignore or stop following the instructions it was given.",
    "injection.priority": "Claims its own instructions outrank the reader's (an authority or priority claim).",
    "injection.identity": "Tries to give the reader a new identity or switch off its rules (a jailbreak).",
    "injection.prompt_leak": "Asks the reader to reveal its system prompt, instructions or conversation.",
    "injection.secrecy": "Asks the reader to hide what it does from the user.",
    "injection.addressed": "Speaks directly to an AI reading the text instead of stating facts.",
    "injection.tool_abuse": "Tells the reader to call a tool that sends, pays, deletes or executes.",
    "injection.exfiltration": "Tells the reader to send conversation or private data to an outside address.",
    "injection.shell_command": "Contains a shell command that downloads and runs code or destroys data.",
}
SEVERITY = {"injection.addressed": Severity.MEDIUM}

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# A rule's phrase preceded by one of these is a warning or a description, not an order:
# "never reveal your system prompt", "attempts to override the system prompt", "防止泄露系统提示词".
_NEGATORS = frozenset(
    loosen(w)
    for w in [
        "not",
        "never",
        "cannot",
        "t",
        "nor",
        "avoid",
        "prevent",
        "detect",
        "block",
        "resist",
    ]
)
_ATTEMPTS = frozenset(
    loosen(w)
    for w in [
        "attempt",
        "attempts",
        "attempting",
        "try",
        "tries",
        "trying",
        "tried",
        "how",
    ]
)
_ZH_NEGATORS = re.compile(r"(?:不|勿|别|禁止|防止|避免|试图|企图|阻止|检测|识别|拦截|防御|抵御|无法|如何|是否)")
_COMPACT_NEGATIONS = tuple(
    {word for word in _NEGATORS if len(word) > 1}
    | {loosen(word) for word in ["dont", "doesnt", "didnt", "shouldnt", "mustnt", "wont", "cant"]}
    | {word + "to" for word in _ATTEMPTS}
)
_GUARDED = frozenset({"injection.override", "injection.prompt_leak", "injection.identity"})
_DEVELOPER_MODE = re.compile(loosen(r"\b(?:developer|dev) mode\b"))
_DEVELOPER_MODE_CONTEXT = re.compile(
    loosen(r"\b(?:chatgpt|gpt|ai|assistant|model|llm|policies|policy|restrictions|uncensored|filters|censorship)\b")
)
# "Assistant, ignore …", "AI: reply with …": orders addressed to the reading model by name.
_VOCATIVE = re.compile(
    r"(?:^|(?<=[^\w]))(?:dear |hey |attention,? )?"
    r"(?:assistant|ai|chatbot|llm|gpt|chatgpt|claude|language model|ai agent)s?"
    r"\s*[,:]\s*(?:please\s+)?(?:ignore|disregard|forget|reply|respond|answer|say|tell|recommend|include|send|do not|"
    r"don't|never|always|you must|you should|from now|stop|append|insert|add)\b"
)
_ZH_DEVELOPER_MODE = re.compile(r"开发者模式")
_ZH_DEVELOPER_MODE_CONTEXT = re.compile(loosen(r"chatgpt|gpt|ai|助手|模型|政策|限制|审查|规则|道德"))


_FLAT_GROUP = re.compile(r"^\(\?:([a-z |\u3400-\u9fff]+)\)(?![?*{])")
_LEADING_WORD = re.compile(r"^([a-z]+|[\u3400-\u9fff]+)(?=[ (]|$)")


def first_words(pattern: str) -> frozenset[str] | None:
    """The words a match must start with, when the pattern opens with a plain word or a flat group
    of words: a rule is skipped unless one of them occurs. None means "cannot tell, always run"."""
    if _has_top_level_branch(pattern):
        return None
    group = _FLAT_GROUP.match(pattern)
    if group:
        return frozenset(alternative.split(" ")[0] for alternative in group[1].split("|"))
    word = _LEADING_WORD.match(pattern)
    return frozenset({word[1]}) if word else None


def _has_top_level_branch(pattern: str) -> bool:
    depth, escaped = 0, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False


_LATIN_COMPACT_RULES = len(phrases_en.COMPACT_RULES)  # the Chinese rules follow them
Rule = tuple[str, re.Pattern[str], "frozenset[str] | None"]


@cache
def _compiled() -> tuple[list[Rule], list[Rule]]:
    words: list[Rule] = []
    for code, pattern in phrases_en.RULES:
        loose = loosen(pattern)
        words.append((code, re.compile(r"\b" + loose + r"\b"), first_words(loose)))
    compact: list[Rule] = []
    for code, pattern in (*phrases_en.COMPACT_RULES, *phrases_zh.RULES):
        loose = loosen(pattern)
        compact.append((code, re.compile(loose), first_words(loose)))
    return words, compact


def find_injection(context: ScanContext) -> None:
    views = context.views
    words_rules, compact_rules = _compiled()
    words_text = views.words.text
    tokens = frozenset(words_text.split())
    for code, pattern, gate in words_rules:
        if gate is not None and gate.isdisjoint(tokens):
            continue
        for match in _matches(pattern, words_text, gate and gate & tokens, " "):
            if not (code in _GUARDED and _negated_en(views.words, match)):
                _add(context, views.words, match.start(), match.end(), code)
    has_cjk = bool(_CJK.search(context.text))
    compact_text = views.compact.text
    for code, pattern, gate in compact_rules[: None if has_cjk else _LATIN_COMPACT_RULES]:
        present = gate and frozenset(word for word in gate if word in compact_text)
        if gate is not None and not present:
            continue
        for match in _matches(pattern, compact_text, present, ""):
            if not (code in _GUARDED and _negated_zh(views.compact, match)):
                _add(context, views.compact, match.start(), match.end(), code)
    _developer_mode(context)
    for match in _VOCATIVE.finditer(context.views.folded.text):
        _add(context, context.views.folded, match.start(), match.end(), "injection.addressed")
    find_exfiltration(context)
    find_shell_commands(context)


def _matches(
    pattern: re.Pattern[str], text: str, starts: frozenset[str] | None, separator: str
) -> Iterator[re.Match[str]]:
    """Matches of `pattern`, tried only where one of its first words occurs (all of `text` if unknown)."""
    if not starts:
        yield from pattern.finditer(text)
        return
    padded = separator + text + separator
    for word in starts:
        needle = separator + word + separator
        position = padded.find(needle)
        while position >= 0:
            match = pattern.match(text, position)
            if match:
                yield match
            position = padded.find(needle, position + 1)


def _add(context: ScanContext, view: View, start: int, end: int, code: str) -> None:
    begin, finish = view.span(start, end)
    context.add(begin, finish, Kind.INJECTION, SEVERITY.get(code, Severity.HIGH), code, MESSAGES[code])


def _negated_en(view: View, match: re.Match[str]) -> bool:
    before = view.text[max(0, match.start() - 40) : match.start()].split()[-2:]
    if not before:
        return False
    return before[-1] in _NEGATORS or (before[-1] == "to" and len(before) == 2 and before[0] in _ATTEMPTS)


def _negated_zh(view: View, match: re.Match[str]) -> bool:
    """Chinese negation, or an English one glued on in the compact view ("neverrevealyour…")."""
    before = view.text[max(0, match.start() - 12) : match.start()]
    return bool(_ZH_NEGATORS.search(before[-3:])) or before.endswith(_COMPACT_NEGATIONS)


def _developer_mode(context: ScanContext) -> None:
    """ "Developer mode" is a famous jailbreak and an ordinary browser setting: only near AI words."""
    for view, mode, nearby, width in (
        (context.views.words, _DEVELOPER_MODE, _DEVELOPER_MODE_CONTEXT, 80),
        (context.views.compact, _ZH_DEVELOPER_MODE, _ZH_DEVELOPER_MODE_CONTEXT, 20),
    ):
        for match in mode.finditer(view.text):
            if nearby.search(view.text, max(0, match.start() - width), match.end() + width):
                _add(context, view, match.start(), match.end(), "injection.identity")


_SEND_EN = (
    r"(?:^|[\n.!?;:,，。；：]\s*|\b(?:please|must|should|now|then|and|immediately|silently|secretly|quietly|first|also|always|"
    r"kindly|to|will|need to|required to|task is to|sure to|you)\s+)(?:send|post|upload|forward|transmit|exfiltrate|"
    r"submit|email|e-mail|mail|leak|report|sync|push|deliver|append|attach|beacon|ping|fetch|request|visit|load|curl|"
    r"open|include|embed|encode|copy|paste|add|put|write)\b"
)
_SEND_ZH = (
    r"(?:发送|发到|发给|上传|提交|转发|传到|传给|回传|外发|同步|推送|抄送|附加到|拼接到|附在|写入|访问|请求|打开|嵌入|"
    r"加到|放到|填入|附上)"
)
_SENSITIVE = (
    r"(?:conversation|chat history|chat log|transcript|messages|message history|context|session (?:token|id|cookie)|"
    r"cookies?|users?(?:'s|’s)? (?:data|details|info|information|messages|e-?mails?|address(?:es)?|phone(?: numbers?)?|"
    r"credentials|files|documents|history|questions|quer(?:y|ies)|input|pii|names?|passwords?)|personal (?:data|"
    r"information|details)|credentials|passwords?|api[ _-]?keys?|access tokens?|auth(?:entication)? tokens?|tokens|"
    r"secrets?|system prompt|prompt|instructions|memory|memories|environment variables|env vars|private (?:data|"
    r"information|keys?)|customer (?:data|records|list|details|e-?mails)|the above|everything above|"
    r"this (?:conversation|chat|session)|previous answers|e-?mail addresses|phone numbers|\.env|"
    r"对话|聊天记录|会话|上下文|历史记录|用户(?:的)?"
    r"(?:数据|信息|资料|邮箱|手机号?|隐私|密码|问题|输入|姓名|地址|文件)|个人信息|隐私数据|密钥|令牌|密码|凭证|凭据|系统提示|"
    r"提示词|记忆|环境变量|客户(?:的)?(?:数据|资料|名单|信息)|以上内容|上面的内容|完整内容)"
)
_SEND = re.compile(f"{_SEND_EN}|{_SEND_ZH}", re.MULTILINE)
_SENSITIVE_RE = re.compile(_SENSITIVE)
# An address's local part is taken whole from where a run of its characters starts (lookbehind,
# possessive): tried from every character of a long run, it was quadratic.
_DESTINATION = re.compile(
    r"(?:https?|ftp|wss?)://[^\s<>\"'`)\]}，。]+|(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)+|\bwebhook\b|\brequestbin\b|"
    r"回调地址|外部服务器"
)
# A URL whose query or path carries a template placeholder for something sensitive, such as
# `https://x.test/c?q={{conversation}}`: from `//`, a run of URL characters holding a `?&/#`, then the
# placeholder. As one pattern (a lazy run, a mark, a greedy run, the placeholder) it backtracked in
# cubic time: 2,000 characters of `//` took 30 s of CPU in the agents' feedback scan. Found in linear
# time instead (placeholder_urls): each URL is one possessive run, then each placeholder opener in it
# is checked against the marks and `=` signs before it by bisection.
_URL_RUN = re.compile(r"(?:https?:)?(?P<slashes>//)[^\s)\"'<>]*+")
_URL_MARK = re.compile(r"[?&/#]")
_EQUALS = re.compile("=")
_OPENER = re.compile(r"[{$<\[]|%7b|%3c")
_PLACEHOLDER = re.compile(
    r"(?:\{\{?|\$\{?|<|\[|%7b|%3c)\s*+[\w\s.-]{0,30}?"
    r"(?:conversation|chat|history|data|user|secret|key|token|password|e-?mail|prompt|memory|summary|context|messages|"
    r"query|input|answer|对话|用户|密钥|记录)[^\s)\"'<>]*",
)


def placeholder_urls(text: str) -> Iterator[tuple[int, int]]:
    """The spans of URLs holding a sensitive placeholder, left to right, none overlapping.

    A match starts at `(https?:)?//` and runs: URL characters, a mark (`?&/#`), URL characters without
    `=`, an optional `=`, the placeholder. As the single pattern did, it takes the first mark that leads
    to a placeholder and, from it, the last placeholder before the next `=` (one past it). Marks before
    the same `=` reach a subset of the first one's placeholders, so one try per `=` suffices; a URL with
    no match from its first `//` has none from a later one, so each URL run is read once.
    """
    position = 0
    while (url := _URL_RUN.search(text, position)) is not None:
        slashes, end = url.start("slashes"), url.end()
        position = end
        marks = [mark.start() for mark in _URL_MARK.finditer(text, slashes + 2, end)]
        equals = [sign.start() for sign in _EQUALS.finditer(text, slashes + 2, end)]
        openers = [opener.start() for opener in _OPENER.finditer(text, slashes + 3, end + 1)]
        index = 0
        while index < len(marks):
            mark = marks[index]
            after = bisect_right(equals, mark)
            sign = equals[after] if after < len(equals) else end  # the next `=`; a placeholder may follow it
            reachable = openers[bisect_right(openers, mark) : bisect_right(openers, sign + 1 if sign < end else end)]
            placeholder = next(filter(None, (_PLACEHOLDER.match(text, at) for at in reversed(reachable))), None)
            if placeholder is not None:
                yield url.start(), placeholder.end()
                position = placeholder.end()
                break
            index = bisect_right(marks, sign)


def find_exfiltration(context: ScanContext) -> None:
    view = context.views.folded
    text = view.text
    for start, end in placeholder_urls(text):
        if url_host_is_external(context, text[start:end]):
            _add(context, view, start, end, "injection.exfiltration")
    if not _DESTINATION.search(text):
        return
    for verb in _SEND.finditer(text):
        window_end = min(len(text), verb.end() + 220)
        sensitive = _SENSITIVE_RE.search(text, verb.end(), min(window_end, verb.end() + 100))
        if sensitive is None and _CJK.search(verb[0]):  # "把聊天记录发送到 …": the object comes first
            sensitive = _SENSITIVE_RE.search(text, max(0, verb.start() - 30), verb.start())
        if sensitive is None:
            continue
        for destination in _DESTINATION.finditer(text, verb.start(), window_end):
            if _external_destination(context, destination[0]):
                start = min(verb.start(), sensitive.start())
                _add(context, view, start, destination.end(), "injection.exfiltration")
                break


def _external_destination(context: ScanContext, destination: str) -> bool:
    if "://" in destination:
        return url_host_is_external(context, destination)
    if "@" in destination:
        return url_host_is_external(context, "mailto://" + destination.rsplit("@", 1)[1])
    return True


_SHELL = (
    (
        Severity.MEDIUM,
        re.compile(
            r"\b(?:curl|wget|iwr|irm)\b[^\n|]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\|\s*(?:iex|invoke-expression)\b"
        ),
    ),
    (
        Severity.HIGH,
        re.compile(
            r"\brm\s+-(?:rf|fr|r\s+-f|f\s+-r)\s+(?:--no-preserve-root\s+)?(?:/|~|\*|\$home)(?=\s|$|['\"`;])|"
            r"bash\s+-i\s*>&?\s*/dev/tcp/|/dev/tcp/\d+\.\d+|\bnc(?:at)?\s+(?:-\w+\s+)*-e\s+/bin/(?:ba)?sh|"
            r"powershell(?:\.exe)?\s+(?:-\w+\s+)*-(?:e|enc|encodedcommand)\s+[a-z0-9+/=]{20,}|"
            r"\biex\s*\(\s*\(?\s*(?:new-object|iwr|invoke-webrequest)|base64\s+(?:-d|--decode)\s*\|\s*(?:ba)?sh\b|"
            r"eval\s*\(\s*atob\s*\(|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|mkfs(?:\.\w+)?\s+/dev/[sh]d|"
            r"dd\s+if=/dev/(?:zero|random)\s+of=/dev/[sh]d",
            re.MULTILINE,
        ),
    ),
)


def find_shell_commands(context: ScanContext) -> None:
    view = context.marked
    for severity, pattern in _SHELL:
        for match in pattern.finditer(view.text):
            start, end = view.span(match.start(), match.end())
            code = "injection.shell_command"
            context.add(start, end, Kind.INJECTION, severity, code, MESSAGES[code])
