"""What a scan reports: kinds, severities and one frozen record per finding."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    INJECTION = "injection"
    MIMICRY = "mimicry"
    HIDDEN_TEXT = "hidden_text"
    SECRET = "secret"  # noqa: S105  # a finding kind, not a password
    PERSONAL_DATA = "personal_data"
    LINK = "link"
    EXECUTABLE_HTML = "executable_html"


class Severity(StrEnum):
    """High blocks publishing unless a reviewer overrides it; medium and low are warnings."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        return {"high": 3, "medium": 2, "low": 1}[self.value]


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in one field: `text[start:end]` of the scanned text is the evidence.

    `code` is stable (`<kind family>.<what>`, e.g. `injection.override`) so stored findings,
    overrides and tests can refer to it; `message` is for people and may change.
    """

    start: int
    end: int
    kind: Kind
    severity: Severity
    code: str
    message: str
    field: str = "body"

    def evidence(self, text: str, limit: int = 80) -> str:
        """The flagged text, shortened for one line of a report, invisible characters made visible."""
        shown = "".join(ch if ch.isprintable() else f"<U+{ord(ch):04X}>" for ch in text[self.start : self.end])
        return shown if len(shown) <= limit else shown[: limit - 1] + "…"

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Finding:
        """The inverse of `as_dict` (findings are stored as JSON beside the version they describe)."""
        return cls(
            int(str(data["start"])),
            int(str(data["end"])),
            Kind(str(data["kind"])),
            Severity(str(data["severity"])),
            str(data["code"]),
            str(data["message"]),
            str(data.get("field", "body")),
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "field": self.field,
            "start": self.start,
            "end": self.end,
        }
