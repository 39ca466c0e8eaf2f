"""The Django side of ``ports.Backend``: one admitted request's namespace, active release and caller."""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, Final

import orjson
from django.conf import settings
from django.http import HttpRequest

from gateway.context import context_answer, context_observed
from gateway.entries import entry_lookup, normalize_entry_id
from gateway.errors import BadParameterError
from gateway.explain import explained_document, why_parse
from gateway.gate import Gate
from gateway.params import context_query
from gateway.ratelimit import Rate, rate_limit_hit
from gateway.verify import verify_answer, verify_request_parse
from knowledge.ids import ID_PATTERN
from knowledge.models import Namespace
from knowledge.requestlog.buffer import request_observed
from knowledge.requestlog.records import Observed, entry_observed
from knowledge.retrieval.contract.lookups import EntryFound, EntryGone, EntryLookup
from knowledge.retrieval.contract.records import AgentNamespace
from knowledge.retrieval.contract.shapes import agent_rules
from knowledge.retrieval.render.release import etag_of
from knowledge.security_events import RATE_LIMITED, security_event
from knowledge.selectors.quality import metrics_document
from knowledge.services.feedback import feedback_submit
from knowledge.telemetry.ids import request_id_current
from knowledge.telemetry.metrics import RATE_LIMIT_REFUSALS, tallies
from mcp_bridge.ports import (
    CachePolicy,
    EntryPage,
    EntrySummary,
    FeedbackKind,
    FeedbackReceipt,
    ParamError,
    PromptPack,
    PromptPackInfo,
    RateLimitedError,
)

FEEDBACK_ENTRY_UNKNOWN: Final = "{id} is not an entry of this knowledge base; omit entryId or use an existing ID."
SCENARIO_ORDER: Final = ("chat", "coding", "research", "support")
SCENARIO_PURPOSE: Final = {
    "chat": "Rules for a general chat assistant's system prompt.",
    "coding": "Rules (with runnable client snippets) for a coding assistant's system prompt.",
    "research": "Rules for a deep-research assistant's system prompt.",
    "support": "Rules for a customer-support assistant's system prompt.",
}


def feedback_rate() -> Rate:
    """``EVERGREEN_FEEDBACK_RATE_LIMIT`` ("20/hour" by default): per caller per namespace, far below reads."""
    return settings.EVERGREEN.feedback_rate_limit


class RenderedPack(dict[str, Any]):
    """A context pack with the bytes /api/context sends for it, so an MCP answer embeds them instead of
    encoding the pack a second time (mcp_bridge.transport.outcome_bytes). Never changed after it is made."""

    __slots__ = ("rendered",)

    def __init__(self, document: dict[str, Any], rendered: bytes) -> None:
        super().__init__(document)
        self.rendered = rendered


def _pack_title(scenario: str, template: str) -> str:
    first = template.lstrip().splitlines()[0] if template.strip() else ""
    return first.lstrip("#").strip() if first.startswith("#") else f"Prompt pack · {scenario}"


class DjangoBackend:
    """``ports.Backend`` over a ``Gate``: the same release, selectors and engine as the REST views.

    ``base_url`` is the namespace's root as this request addressed it (scheme, host and any
    ``/t/<namespace>`` prefix), so the endpoints named in results are the ones the client can reach.
    """

    def __init__(self, *, gate: Gate, base_url: str, source: str, request: HttpRequest | None = None) -> None:
        self.gate = gate
        self.request = request  # for the security log's route
        self.release = gate.release
        self.base_url = base_url.rstrip("/")
        self.source = source
        self.started = time.perf_counter()  # for the request log's latency
        self._info: AgentNamespace | None = None

    def namespace(self) -> AgentNamespace:
        if self._info is None:
            ns = self.release.snapshot.namespace
            self._info = AgentNamespace(
                slug=ns.slug,
                title=ns.title,
                summary=ns.summary,
                base_url=self.base_url,
                language=ns.language,
                knowledge_version=self.release.stamp.knowledge_version,
                public=self.gate.namespace.is_public,
                id_prefix=ns.prefix,
                categories=tuple(c.slug for c in ns.categories),
                organization=ns.name,
            )
        return self._info

    def cache_policy(self) -> CachePolicy:
        policy = self.gate.cache
        return CachePolicy(max_age=policy.max_age, public=policy.public)

    def rules(self) -> Sequence[str]:
        return agent_rules(self.release.snapshot.namespace)

    def _observed(self, observed: Observed | None) -> None:
        if observed is not None:
            request_observed(
                observed,
                enabled=self.gate.namespace.log_requests,
                latency_seconds=time.perf_counter() - self.started,
                client=self.gate.client,
                request_id=request_id_current(),
            )

    def context(
        self,
        *,
        topic: str,
        budget: int | None,
        category: str | None,
        limit: int | None,
        budget_mode: str | None = None,
        paths: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """The /api/context body from the same response cache, so both surfaces serve identical bytes."""
        ns = self.release.snapshot.namespace
        try:
            query = context_query(
                topic=topic,
                budget=budget,
                category=category,
                categories=[c.slug for c in ns.categories],
                default_budget=ns.default_budget,
                limit=limit,
                budget_mode=budget_mode,
                paths=paths,
            )
        except BadParameterError as error:
            raise ParamError(error.code, error.message, error.param or "query") from error
        answer = context_answer(self.release, query)
        self._observed(context_observed(self.release, query, answer, channel=self.source))
        # Built by this call: the bytes need not be parsed back.
        document = answer.document if answer.document is not None else orjson.loads(answer.body)
        return RenderedPack(document, answer.body)

    def entry(self, *, entry_id: str, version: int | None) -> EntryLookup:
        try:
            found = entry_lookup(self.release, entry_id, version=version, clearance=self.gate.clearance)
        except BadParameterError as error:
            raise ParamError(error.code, error.message, error.param or "version") from error
        status = 200 if isinstance(found, EntryFound) else 410 if isinstance(found, EntryGone) else 404
        self._observed(
            entry_observed(
                namespace_id=self.gate.namespace.id,
                release_id=self.release.release_id,
                channel=self.source,
                entry_id=normalize_entry_id(entry_id),
                status=status,
                etag=etag_of(orjson.dumps(found.payload)),
                version=version,
                clearance=self.gate.clearance,
            )
        )
        return found

    def entry_page(self, *, after: str | None, size: int) -> EntryPage:
        """Published entries by ID number (EG-999 before EG-1000), strictly after ``after``."""
        numbered = self.release.numbered
        start = 0
        if after is not None:
            match = ID_PATTERN.match(after)
            start = bisect_right(numbered, (int(match["number"]), after)) if match else len(numbered)
        items = []
        for _, entry_id in numbered[start : start + size]:
            entry = self.release.entry(entry_id)
            if entry is not None:
                items.append(EntrySummary(entry.id, entry.title, entry.summary, entry.category, entry.updated))
        more = start + size < len(numbered)
        return EntryPage(items=tuple(items), next_after=items[-1].id if more and items else None)

    def scenarios(self) -> Sequence[PromptPackInfo]:
        packs = dict(self.release.snapshot.prompt_packs)
        ordered = sorted(packs, key=lambda s: (SCENARIO_ORDER.index(s) if s in SCENARIO_ORDER else 99, s))
        return [self._pack_info(scenario, packs[scenario]) for scenario in ordered]

    def _pack_info(self, scenario: str, template: str) -> PromptPackInfo:
        description = SCENARIO_PURPOSE.get(scenario, f"Rules for the {scenario} scenario's system prompt.")
        return PromptPackInfo(scenario=scenario, title=_pack_title(scenario, template), description=description)

    def prompt_pack(self, *, scenario: str) -> PromptPack | None:
        """The text of ``GET /api/prompt-pack?scenario=…``: ``${base_url}`` is the canonical URL there too."""
        template = dict(self.release.snapshot.prompt_packs).get(scenario)
        if template is None:
            return None
        base_url = self.release.snapshot.namespace.base_url.rstrip("/")
        return PromptPack(info=self._pack_info(scenario, template), text=template.replace("${base_url}", base_url))

    def metrics(self) -> dict[str, Any]:
        """The /api/metrics document (measured at build time, plus the evaluation of the served release)."""
        return metrics_document(release=self.release, namespace_id=self.gate.namespace.id)

    def explain(
        self, *, topic: str, budget: int | None, category: str | None, limit: int | None, ids: Sequence[str]
    ) -> dict[str, Any]:
        ns = self.release.snapshot.namespace
        try:
            query = context_query(
                topic=topic,
                budget=budget,
                category=category,
                categories=[c.slug for c in ns.categories],
                default_budget=ns.default_budget,
                limit=limit,
            )
            return explained_document(self.gate, query, why_parse(list(ids)))
        except BadParameterError as error:
            raise ParamError(error.code, error.message, error.param or "query") from error

    def verify(self, *, answer: str, release: str | int | None, pack: str | None) -> dict[str, Any]:
        """The /api/verify report, from the same code; recorded with this channel."""
        asked = {"answer": answer, "release": release, "pack": pack}
        try:
            return verify_answer(self.gate, verify_request_parse(asked), channel=self.source)
        except BadParameterError as error:
            raise ParamError(error.code, error.message, error.param or "answer") from error

    def submit_feedback(
        self, *, entry_id: str | None, query: str | None, kind: FeedbackKind, message: str
    ) -> FeedbackReceipt:
        """Rate-limited per caller and namespace with the shared sliding window, then queued for review."""
        if entry_id is not None:
            wanted = normalize_entry_id(entry_id)
            if self.release.entry(wanted) is None and wanted not in self.release.tombstones:
                raise ParamError("unknown_entry", FEEDBACK_ENTRY_UNKNOWN.format(id=wanted), "entryId")
        decision = rate_limit_hit(
            scope=f"feedback:{self.gate.namespace.slug}", client=self.gate.client, rate=feedback_rate()
        )
        if decision is not None and not decision.admitted:
            tallies.count(RATE_LIMIT_REFUSALS, "feedback")
            security_event(
                RATE_LIMITED,
                request=self.request,
                namespace=self.gate.namespace.slug,
                reason="feedback_over_limit",
                client=self.gate.client,
                limit=decision.limit,
            )
            raise RateLimitedError(retry_after=decision.reset)
        namespace = Namespace.objects.get(pk=self.gate.namespace.id)
        stored = feedback_submit(
            namespace=namespace, kind=kind, message=message, entry_public_id=entry_id, query=query, source=self.source
        )
        return FeedbackReceipt(id=f"FB-{stored.pk}")
