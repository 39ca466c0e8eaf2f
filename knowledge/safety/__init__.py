"""Safety scans of agent-visible text: pure Python, no Django, so it runs anywhere text enters.

`scan_text` takes one field's text and the namespace's allowed link hosts and returns findings,
each with a kind, a severity, a stable code, a message and the exact span in the original text.
"""

from knowledge.safety.findings import Finding, Kind, Severity
from knowledge.safety.scanner import scan_fields, scan_json, scan_text

__all__ = ["Finding", "Kind", "Severity", "scan_fields", "scan_json", "scan_text"]
