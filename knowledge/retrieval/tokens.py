"""The token estimator of seed §4, shared by the API, the admin and the Playground."""

from __future__ import annotations

import re

# Seed §4: CJK range used by the reference implementation's estimator.
_CJK = re.compile(r"[\u3000-\u303F\u3400-\u9FFF\uF900-\uFAFF\uFF00-\uFFEF]")
# Runs of them: counting run lengths finds the same characters with one match per run, not one per
# character (a Chinese answer is mostly runs; payloadTokens counts every /api/context answer).
_CJK_RUN = re.compile(f"{_CJK.pattern}+")

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


def tokens_of(*, cjk: int, other: int) -> int:
    """The estimate from the two counts (what changes when only some digits of a text do)."""
    return round(cjk * CJK_WEIGHT + other * OTHER_WEIGHT)


def entry_tokens(*, title: str, summary: str, body: str) -> int:
    """The loading cost of one entry: title + summary + body (seed §4)."""
    return estimate_tokens(title + summary + body)
