"""Matching a pattern that reads from an opener up to a closing character, in linear time.

`<tag[^>]*…` tried at every `<` of a text with no `>` after them reads to the end each time: quadratic
(QA: 16,000 characters of `a<` took 3.4 s). For such a pattern a failed try at the first opener before
a closer means a failed try at every later one before it (each reads a part of what the first read), so
after a failure the search resumes past that closer.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator


def grouped_finditer(
    pattern: re.Pattern[str], text: str, *, opener: re.Pattern[str], closers: str
) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)` for a pattern that starts where `opener` matches and reads up to one of
    `closers`, where a later opener before the same closer never matches when an earlier one did not."""
    ends = [closer.start() for closer in re.finditer(f"[{re.escape(closers)}]", text)]
    resume = 0
    for start in opener.finditer(text):
        position = start.start()
        if position < resume:
            continue
        match = pattern.match(text, position)
        if match is not None:
            yield match
            resume = match.end()
            continue
        after = bisect_left(ends, position)
        if after == len(ends):
            return
        resume = ends[after] + 1
