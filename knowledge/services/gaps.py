"""The knowledge-gap report: what agents asked that the knowledge base did not answer, grouped and counted.

Log rows of /api/context (and search_context) answered `matched: false` — weak hits or none — are
grouped by the topic's most informative terms (knowledge.retrieval.gaps) per namespace, counting how
often, when first and last, and through which channels. Editors open a prefilled draft from a gap
or dismiss it; reviewers get a weekly digest of the top open gaps by e-mail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from django.conf import settings
from django.core.mail import send_mass_mail
from django.db import transaction
from django.utils import timezone

from knowledge.actors import Actor, actor_user
from knowledge.errors import InvalidInputError
from knowledge.models import Entry, EntryVersion, GapStatus, KnowledgeGap, Membership, Namespace, RequestLog, Role
from knowledge.retrieval.gaps import gap_key, gap_match, gap_terms
from knowledge.selectors.gaps import digest_window, gaps_groups, gaps_top, release_index
from knowledge.services.access import require_role
from knowledge.services.content import VersionContent
from knowledge.services.versions import version_draft_for_entry, version_save

TOPICS_KEPT: Final = 5
DIGEST_SUBJECT: Final = "[{namespace}] {count} questions agents asked that the knowledge base did not answer"
DIGEST_LINE: Final = "- {example!r}: asked {count}× ({weak} with weak hits), last {last:%Y-%m-%d}, via {channels}"


@dataclass
class _Seen:
    terms: tuple[str, ...]
    count: int = 0
    weak: int = 0
    first: datetime | None = None
    last: datetime | None = None
    channels: set[str] = field(default_factory=set)
    topics: list[str] = field(default_factory=list)

    def add(self, record: RequestLog) -> None:
        self.count += 1
        self.weak += int((record.hit_count or 0) > 0)
        self.first = record.at if self.first is None else min(self.first, record.at)
        self.last = record.at if self.last is None else max(self.last, record.at)
        self.channels.add(record.channel)
        if record.topic in self.topics:
            self.topics.remove(record.topic)
        self.topics.append(record.topic)  # the latest last


def _unanswered(record: RequestLog) -> bool:
    return record.route == "context" and record.matched is False and bool(record.topic) and record.status == 200


def gaps_record(*, records: Sequence[RequestLog]) -> int:
    """Count the unanswered topics among `records` into their gaps; returns how many gaps changed."""
    seen: dict[tuple[int, str], _Seen] = {}
    groups: dict[int, list[tuple[str, frozenset[str]]]] = {}
    for record in records:
        if not _unanswered(record):
            continue
        index = release_index(release_id=record.release_id)
        terms = gap_terms(record.topic, analyzer=index.analyzer, idf_of=index.term_idf)
        if not terms:
            continue
        known = groups.get(record.namespace_id)
        if known is None:
            known = groups[record.namespace_id] = gaps_groups(namespace_id=record.namespace_id)
        key = gap_match(terms, known)
        if key is None:
            key = gap_key(terms)
            known.insert(0, (key, frozenset(terms)))
        seen.setdefault((record.namespace_id, key), _Seen(terms)).add(record)
    for (namespace_id, key), found in seen.items():
        _merge(namespace_id, key, found)
    return len(seen)


@transaction.atomic
def _merge(namespace_id: int, key: str, found: _Seen) -> None:
    gap, _ = KnowledgeGap.objects.select_for_update().get_or_create(
        namespace_id=namespace_id,
        key=key,
        defaults={"terms": list(found.terms), "first_seen": found.first, "last_seen": found.last},
    )
    gap.count += found.count
    gap.weak += found.weak
    gap.first_seen = min(gap.first_seen, found.first) if found.first else gap.first_seen
    gap.last_seen = max(gap.last_seen, found.last) if found.last else gap.last_seen
    gap.channels = sorted(set(gap.channels) | found.channels)
    gap.topics = (found.topics[::-1] + [t for t in gap.topics if t not in found.topics])[:TOPICS_KEPT]
    gap.example = gap.topics[0][:500]
    gap.save()


def _set_status(*, gap: KnowledgeGap, status: str, actor: Actor) -> KnowledgeGap:
    require_role(user=actor, namespace=gap.namespace, role=Role.EDITOR)
    gap.status = status
    gap.status_by = actor_user(actor)
    gap.status_at = timezone.now()
    gap.save(update_fields=["status", "status_by", "status_at"])
    return gap


def gap_dismiss(*, gap: KnowledgeGap, actor: Actor) -> KnowledgeGap:
    """Hide a gap from the report and the digest (it keeps counting, in case it matters after all)."""
    return _set_status(gap=gap, status=GapStatus.DISMISSED, actor=actor)


def gap_reopen(*, gap: KnowledgeGap, actor: Actor) -> KnowledgeGap:
    return _set_status(gap=gap, status=GapStatus.OPEN, actor=actor)


def gap_draft_opened(*, gap: KnowledgeGap, actor: Actor) -> KnowledgeGap:
    """An editor opened a draft for the gap: it leaves the open list (the draft goes through review)."""
    return _set_status(gap=gap, status=GapStatus.DRAFTED, actor=actor)


ATTACH_FOREIGN: Final = "{entry} is not an entry of the gap's namespace."
ALIAS_MAX: Final = 200


@transaction.atomic
def gap_attach(*, gap: KnowledgeGap, entry: Entry, actor: Actor) -> EntryVersion:
    """Add the gap's topic to an existing entry's aliases, in its draft (which then goes through review)."""
    require_role(user=actor, namespace=gap.namespace, role=Role.EDITOR)
    if entry.namespace_id != gap.namespace_id:
        raise InvalidInputError(ATTACH_FOREIGN.format(entry=entry.public_id))
    draft = version_draft_for_entry(entry=entry, actor=actor)
    content = VersionContent.of(draft, aliases=[*draft.aliases, gap.example[:ALIAS_MAX]])
    saved = version_save(version=draft, content=content, expected_lock_version=draft.lock_version, actor=actor)
    _set_status(gap=gap, status=GapStatus.DRAFTED, actor=actor)
    return saved


def _reviewers(namespace: Namespace) -> list[str]:
    rows = Membership.objects.filter(namespace=namespace, role__in=[Role.REVIEWER, Role.ADMIN], user__is_active=True)
    return sorted({email for email in rows.values_list("user__email", flat=True) if email})


def gaps_digest(*, now: datetime | None = None) -> int:
    """E-mail each namespace's reviewers its top open gaps of the last seven days; returns messages sent."""
    now = now or timezone.now()
    messages = []
    for namespace in Namespace.objects.filter(log_requests=True).order_by("slug"):
        gaps = list(gaps_top(namespace=namespace, since=digest_window(now)))
        recipients = _reviewers(namespace)
        if not gaps or not recipients:
            continue
        lines = [
            DIGEST_LINE.format(
                example=gap.example,
                count=gap.count,
                weak=gap.weak,
                last=gap.last_seen,
                channels=", ".join(gap.channels),
            )
            for gap in gaps
        ]
        body = "\n".join(
            [
                f"Agents asked {namespace.name} these questions in the last seven days and got no matching entry:",
                "",
                *lines,
                "",
                "Open the knowledge-gap report in the admin to draft an entry or dismiss a gap.",
            ]
        )
        subject = DIGEST_SUBJECT.format(namespace=namespace.slug, count=len(gaps))
        messages += [(subject, body, settings.DEFAULT_FROM_EMAIL, [email]) for email in recipients]
    return send_mass_mail(messages, fail_silently=False) if messages else 0
