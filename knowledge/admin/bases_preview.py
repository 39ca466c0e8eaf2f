"""What a reviewer of a list of base namespaces looks at (issue 16 §4): each base, and the check approval runs."""

from __future__ import annotations

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from knowledge.errors import InvalidInputError
from knowledge.models import Namespace, TextVersion
from knowledge.selectors.layers import bases_list
from knowledge.services.texts import text_references_check


def _base_line(slug: str, found: dict[str, Namespace]) -> tuple[str, str]:
    base = found.get(slug)
    if base is None:
        return slug, "no such namespace"
    if not base.is_public:
        return slug, f"private, IDs {base.prefix}-…"
    release = base.active_release
    served = f"{release.entry_count} entries in its release #{release.sequence}" if release else "no release yet"
    return slug, f"public, IDs {base.prefix}-…, {served}"


def bases_preview_html(version: TextVersion) -> SafeString:
    """The proposed bases in priority order, what the namespace builds on now, and whether approval would pass."""
    namespace = version.text.namespace
    slugs = list((version.content or {}).get("bases", []))
    found = {ns.slug: ns for ns in Namespace.objects.filter(slug__in=slugs).select_related("active_release")}
    try:
        text_references_check(version=version)
        verdict = format_html(
            "<p>Checked now: approving it would pass; from the first release after it is published, {} serves "
            "its own entries first, then {}.</p>",
            namespace.slug,
            ", then ".join(slugs) or "nothing else",
        )
    except InvalidInputError as refusal:
        verdict = format_html('<p class="errornote">Approving it now would be refused: {}</p>', str(refusal))
    now = " → ".join(base.slug for base in bases_list(namespace=namespace)) or "nothing"
    items = format_html_join("", "<li><code>{}</code>: {}</li>", (_base_line(slug, found) for slug in slugs))
    return format_html(
        '<div id="evergreen-bases-preview"><p>Builds on now: {}.</p><ol>{}</ol>{}</div>', now, items, verdict
    )
