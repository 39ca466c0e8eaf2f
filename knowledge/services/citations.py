"""Recording citation checks, so a namespace can follow its agents' citation accuracy over time."""

from __future__ import annotations

from collections.abc import Mapping

from knowledge.models import CitationCheck
from knowledge.security_events import security_client_hash


def citation_check_record(
    *,
    namespace_id: int,
    release_id: int,
    channel: str,
    citations: int,
    valid: int,
    problems: Mapping[str, int],
    pack_etag: str = "",
    client: str | None = None,
) -> CitationCheck:
    """One verified answer; the caller's address is stored only as the security log's keyed hash."""
    return CitationCheck.objects.create(
        namespace_id=namespace_id,
        release_id=release_id,
        channel=channel[:8],
        citations=citations,
        valid=valid,
        problems=dict(problems),
        pack_etag=pack_etag[:80],
        client=security_client_hash(client) if client else "",
    )
