"""Golden-file comparison: a mismatch says how to regenerate the file."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN_DIR = Path(__file__).resolve().parent
REGENERATE = "EVERGREEN_UPDATE_GOLDEN"


# The tests that write each golden file; the failure message names the right one.
WRITERS = {"openapi.json": "tests/api/test_openapi.py"}
DEFAULT_WRITER = "tests/api/test_golden.py"


def assert_golden(name: str, actual: bytes) -> None:
    path = GOLDEN_DIR / name
    if os.environ.get(REGENERATE) == "1":
        path.write_bytes(actual)
        return
    assert path.exists(), f"Golden file {path} is missing; create it with {REGENERATE}=1 .venv/bin/pytest {path.parent}"
    expected = path.read_bytes()
    assert actual == expected, (
        f"{name} differs from tests/golden/{name}. If the change is intended, regenerate the golden files with "
        f"`{REGENERATE}=1 .venv/bin/pytest {WRITERS.get(name, DEFAULT_WRITER)}` and review the diff with "
        "`git diff tests/golden`."
    )
