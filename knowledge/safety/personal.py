"""Personal data: e-mail addresses, phone numbers, Chinese resident ID numbers, payment card numbers.

Numbers are validated, not just shaped: resident IDs by region, birth date and their ISO 7064
MOD 11-2 check digit, cards by issuer prefix and the Luhn check, phones by libphonenumber.
"""

from __future__ import annotations

import datetime
import re

import phonenumbers

from knowledge.safety.context import ScanContext
from knowledge.safety.findings import Kind, Severity
from knowledge.safety.links import is_reserved

MESSAGES = {
    "personal_data.email": "A personal e-mail address outside the namespace's own domains.",
    "personal_data.phone": "A phone number.",
    "personal_data.cn_resident_id": "A Chinese resident identity card number (valid check digit).",
    "personal_data.payment_card": "A payment card number (valid Luhn check).",
}

_EMAIL = re.compile(
    r"(?<![\w.+%-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,63})@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,24})(?![\w-]|\.[A-Za-z])"
)
_RESIDENT_ID = re.compile(
    r"(?<![0-9A-Za-z])[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![0-9A-Za-z])"
)
_PROVINCES = frozenset(
    [
        "11",
        "12",
        "13",
        "14",
        "15",
        "21",
        "22",
        "23",
        "31",
        "32",
        "33",
        "34",
        "35",
        "36",
        "37",
        "41",
        "42",
        "43",
        "44",
        "45",
        "46",
        "50",
        "51",
        "52",
        "53",
        "54",
        "61",
        "62",
        "63",
        "64",
        "65",
        "71",
        "81",
        "82",
        "83",
    ]
)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CARD = re.compile(
    r"(?<![\d.,/-])(?:\d{4}[ -]?){2,3}\d{1,7}(?![\d/-]|[.,]\d)|"
    r"(?<![\d.,/-])\d{4}[ -]?\d{6}[ -]?\d{4,5}(?![\d/-]|[.,]\d)"
)
_CARD_PREFIX = re.compile(
    r"^(?:4\d{12}(?:\d{3}){0,2}|5[1-5]\d{14}|2(?:2[2-9]|[3-6]\d|7[01])\d{13}|2720\d{12}|3[47]\d{13}|"
    r"6(?:011|4[4-9]\d|5\d\d)\d{12,15}|62\d{14,17}|35(?:2[89]|[3-8]\d)\d{12,15}|3(?:0[0-5]|[689]\d)\d{11,16})$"
)
# Networks' published test numbers: documentation, not anybody's card.
_TEST_CARDS = frozenset(
    [
        "4242424242424242",
        "4111111111111111",
        "4000056655665556",
        "5555555555554444",
        "2223003122003222",
        "5200828282828210",
        "5105105105105100",
        "378282246310005",
        "371449635398431",
        "6011111111111117",
        "6011000990139424",
        "3056930009020004",
        "36227206271667",
        "3566002020360505",
        "6200000000000005",
        "4012888888881881",
        "4000000000000002",
        "4000000000009995",
    ]
)
_PHONES = (
    (re.compile(r"(?<![\w+])(?:\+|00)(?:[1-9]\d{0,2})(?:[\s.-]?\(?\d{1,5}\)?){2,5}(?![\w])"), None),
    (re.compile(r"(?<![\d+])(?:\+?86[\s-]?)?1[3-9]\d(?:[\s-]?\d{4}){2}(?!\d)"), "CN"),
    (re.compile(r"(?<![\d-])0\d{2,3}[\s-]\d{7,8}(?![\d-])|(?<![\d-])\(0\d{2,3}\)\s?\d{7,8}(?![\d-])"), "CN"),
    (re.compile(r"(?<![\w(])\(?[2-9]\d{2}\)?[\s.-]\d{3}[.-]\d{4}(?![\d.-])"), "US"),
    (
        re.compile(
            r"(?i:tel:|phone[:：]?|mobile[:：]?|电话[:：]?|手机(?:号码?)?[:：]?|联系电话[:：]?)\s*([+(]?\d[\d\s().-]{6,18}\d)"
        ),
        "CN",
    ),
)
_PERSONAL_TYPES = frozenset(
    {
        phonenumbers.PhoneNumberType.MOBILE,
        phonenumbers.PhoneNumberType.FIXED_LINE,
        phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE,
        phonenumbers.PhoneNumberType.PERSONAL_NUMBER,
        phonenumbers.PhoneNumberType.VOIP,
        phonenumbers.PhoneNumberType.PAGER,
    }
)


def find_personal_data(context: ScanContext) -> None:
    text = context.text
    taken: list[tuple[int, int]] = []
    if "@" in text:
        _emails(context)
    if not re.search(r"\d{4}", text):
        return
    for match in _RESIDENT_ID.finditer(text):
        if valid_resident_id(match[0]):
            _add(context, *match.span(), Severity.HIGH, "personal_data.cn_resident_id")
            taken.append(match.span())
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match[0])
        if _overlaps(taken, *match.span()) or not valid_card(digits) or not _grouped(match[0]):
            continue
        _add(context, *match.span(), Severity.HIGH, "personal_data.payment_card")
        taken.append(match.span())
    _phones(context, taken)


def _add(context: ScanContext, start: int, end: int, severity: Severity, code: str) -> None:
    context.add(start, end, Kind.PERSONAL_DATA, severity, code, MESSAGES[code])


def _emails(context: ScanContext) -> None:
    for match in _EMAIL.finditer(context.text):
        domain = match[1].lower()
        glued = (
            context.text[match.end() : match.end() + 1] == ":"
            or context.text[max(0, match.start() - 3) : match.start()] == "://"
        )
        if is_reserved(domain) or context.host_allowed(domain) or glued:  # git@host:repo, https://user@host
            continue
        _add(context, *match.span(), Severity.MEDIUM, "personal_data.email")


def valid_resident_id(number: str) -> bool:
    """GB 11643-1999: province code, a real birth date, and the MOD 11-2 check character."""
    if number[:2] not in _PROVINCES:
        return False
    try:
        datetime.date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    total = sum(int(digit) * weight for digit, weight in zip(number[:17], _ID_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == number[17].upper()


def valid_card(digits: str) -> bool:
    if digits in _TEST_CARDS or not _CARD_PREFIX.match(digits) or len(set(digits)) < 4:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _grouped(candidate: str) -> bool:
    """All digits, or groups split by one kind of separator: 4-4-4-4 (…), or Amex 4-6-5."""
    groups = re.split(r"[ -]", candidate)
    if len(groups) == 1:
        return True
    separators = set(re.findall(r"[ -]", candidate))
    return len(separators) == 1 and (
        all(len(g) == 4 for g in groups[:-1]) or [len(g) for g in groups] in ([4, 6, 5], [4, 6, 4])
    )


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s < end and start < e for s, e in spans)


def _phones(context: ScanContext, taken: list[tuple[int, int]]) -> None:
    text = context.text
    for pattern, region in _PHONES:
        for match in pattern.finditer(text):
            start, end = match.span(1) if pattern.groups else match.span()
            if _overlaps(taken, start, end) or not _personal_number(text[start:end], region):
                continue
            _add(context, start, end, Severity.MEDIUM, "personal_data.phone")
            taken.append((start, end))


def _personal_number(candidate: str, region: str | None) -> bool:
    try:
        number = phonenumbers.parse(candidate.replace("(", " ").replace(")", " "), region)
    except phonenumbers.NumberParseException:
        return False
    return phonenumbers.is_valid_number(number) and phonenumbers.number_type(number) in _PERSONAL_TYPES
