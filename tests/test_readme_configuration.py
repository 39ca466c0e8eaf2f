"""Every environment variable the settings read has a row in the README's Configuration table."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def configuration_table() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]


def documented(table: str) -> set[str]:
    """Names in the first column; a row `EVERGREEN_X_A` / `_B` names EVERGREEN_X_B too (any prefix + the suffix)."""
    names: set[str] = set()
    for row in table.splitlines():
        if not row.startswith("| `"):
            continue
        first = row.split("|")[1]
        full = re.findall(r"`([A-Z][A-Z0-9_]+)`", first)
        names |= set(full)
        parts = full[0].split("_") if full else []
        prefixes = ["_".join(parts[:i]) for i in range(1, len(parts))]
        names |= {prefix + short for short in re.findall(r"`(_[A-Z0-9_]+)`", first) for prefix in prefixes}
    return names


def test_every_variable_the_settings_read_is_in_the_configuration_table() -> None:
    read = set()
    for module in (ROOT / "evergreen_site" / "settings").glob("*.py"):
        read |= set(re.findall(r"""env\.\w+\(\s*["'](EVERGREEN_[A-Z0-9_]+)["']""", module.read_text()))
    missing = read - documented(configuration_table())
    assert not missing, sorted(missing)


def test_the_cache_redis_is_described_as_what_the_code_puts_there() -> None:
    """gateway.context keeps /api/context packs per process (shared=False); the cache Redis has pack records."""
    context = (ROOT / "gateway" / "context.py").read_text()
    assert "shared=False" in context  # if packs go to Redis again, say so below
    row = next(r for r in configuration_table().splitlines() if r.startswith("| `EVERGREEN_CACHE_REDIS_URL`"))
    compose = (ROOT / "docker-compose.yml").read_text().split("x-evergreen-env", 1)[0]
    for text in (row, compose):
        assert "whole `/api/context` answers" not in text and "(whole answers" not in text
        assert "/api/verify" in text and "/api/changes" in text
