"""The token estimator of seed §4, shared by the API, the admin and the Playground."""

from __future__ import annotations

import re

# Seed §4: CJK range used by the reference implementation's estimator.
_CJK = re.compile(r"[\u3000-\u303F\u3400-\u9FFF\uF900-\uFAFF\uFF00-\uFFEF]")
# Runs of them: counting run lengths finds the same characters with one match per run, not one per
# character (a Chinese answer is mostly runs; payloadTokens counts every /api/context answer).
_CJK_RUN = re.compile(f"{_CJK.pattern}+")
# The same characters in UTF-8, all three bytes long: lead bytes E4-E9 are U+4000-U+9FFF, all counted;
# E3 and EF lead counted and other characters alike, told apart by the bytes after them.
_HAN_LEADS = bytes(range(0xE4, 0xEA))
_E3_COUNTED = re.compile(rb"\xe3[\x80\x90-\xbf]")  # U+3000-U+303F, U+3400-U+3FFF
_EF_COUNTED = re.compile(rb"\xef(?:[\xa4-\xab\xbc-\xbe]|\xbf[\x80-\xaf])")  # U+F900-U+FAFF, U+FF00-U+FFEF

CJK_WEIGHT = 1.0
OTHER_WEIGHT = 0.28


def estimate_tokens(text: str) -> int:
    """Estimate tokens as CJK characters x 1.0 + other characters x 0.28, rounded (seed §4)."""
    cjk = cjk_characters(text)
    return tokens_of(cjk=cjk, other=len(text) - cjk)


def cjk_characters(text: str) -> int:
    if text.isascii():
        return 0
    return sum(map(len, _CJK_RUN.findall(text)))


def cjk_characters_utf8(data: bytes) -> int:
    """cjk_characters of valid UTF-8 text, without decoding it: a byte scan and two searches for a rare
    lead byte, about a fifth of the regular expression's work on a str (payloadTokens, every miss)."""
    if data.isascii():
        return 0
    han = len(data) - len(data.translate(None, _HAN_LEADS))
    return han + len(_E3_COUNTED.findall(data)) + len(_EF_COUNTED.findall(data))


def tokens_of(*, cjk: int, other: int) -> int:
    """The estimate from the two counts (what changes when only some digits of a text do)."""
    return round(cjk * CJK_WEIGHT + other * OTHER_WEIGHT)


def entry_tokens(*, title: str, summary: str, body: str) -> int:
    """The loading cost of one entry: title + summary + body (seed §4)."""
    return estimate_tokens(title + summary + body)
