"""axe-core in the browser tests: the copy `make test` installs from tests/a11y/package-lock.json, never a download.

The script is evaluated through the DevTools protocol, which the pages' Content-Security-Policy does not
govern, so the pages are checked exactly as they are served.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from tests.services import missing

AXE = Path(__file__).resolve().parent / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")


@cache
def _axe_source() -> str:
    return AXE.read_text(encoding="utf-8")


def axe_available() -> None:
    """Skip (or fail under EVERGREEN_REQUIRE_SERVICES=1) when `make test` could not install axe-core."""
    if AXE.exists():
        return
    missing(f"{AXE} is missing: run `make test` (npm ci in tests/a11y)")


def axe_violations(page: Any, impacts: tuple[str, ...] = BLOCKING) -> list[dict[str, Any]]:
    """The page's WCAG 2.x A/AA violations of the given impacts, each with its rule, help and offending nodes."""
    axe_available()
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(_axe_source())
    found = page.evaluate(
        """async () => {
            const result = await window.axe.run(document, {
                runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
                resultTypes: ["violations"],
            });
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => n.target.join(" ") + " :: " + n.failureSummary),
            }));
        }"""
    )
    return [v for v in found if v["impact"] in impacts]


def assert_accessible(page: Any) -> None:
    """No serious or critical axe violation on the page as it is now; the message lists them all."""
    violations = axe_violations(page)
    assert not violations, f"{page.url}:\n" + "\n".join(
        f"- {v['impact']} {v['id']}: {v['help']}\n    " + "\n    ".join(v["nodes"][:5]) for v in violations
    )
