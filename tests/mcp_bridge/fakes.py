"""In-memory stand-ins for the backend and task-store ports, shaped like the demo namespace."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from knowledge.retrieval.contract.lookups import EntryLookup, entry_found, entry_gone, entry_missing
from knowledge.retrieval.contract.records import AgentNamespace, Tombstone
from knowledge.retrieval.contract.shapes import (
    ContextFacts,
    Omitted,
    Packed,
    Served,
    agent_rules,
    context_document,
)
from knowledge.retrieval.snapshot import CategoryInfo, EntryRecord, NamespaceInfo, ReleaseStamp
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

RULES = (
    "每个事实性断言句末标注条目 ID，格式 [EG-xxx]。",
    "confidence < 0.80 时须提示「该结论置信度较低，建议二次核验」。",
    "知识库未覆盖时回答「Evergreen 知识库中无此条目」，禁止用先验知识填补。",
    "truncated=true 时提高 budget 或收窄 topic 后重试，不要基于残缺上下文作答。",
    "matched=false 时条目是兜底结果，不得当作相关证据引用；应回答「Evergreen 知识库中无此条目」。",
)
CATEGORIES = ("fact", "protocol", "rule", "principle", "workflow")
SECRET_BODY_MARKER = "BODY-TEXT-NEVER-IN-DESCRIPTIONS"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


STAMP = ReleaseStamp(sequence=3, knowledge_version="1.2.0", revision="2026-09-02", generated_at="2026-09-02T10:52:47Z")


def _record(number: int, category: str, title: str, tags: tuple[str, ...], confidence: float) -> EntryRecord:
    return EntryRecord(
        id=f"EG-{number:03d}",
        category=category,
        title=title,
        summary=f"{title} summary",
        body=f"{title} body {SECRET_BODY_MARKER}",
        tags=tags,
        confidence=confidence,
        tokens=150 + number % 100,
        updated="2026-08-25",
        version=1,
        content_hash=f"{number:064x}",
    )


def demo_records() -> list[EntryRecord]:
    return [
        _record(1, "fact", "Evergreen 是什么", ("evergreen",), 0.99),
        _record(101, "protocol", "端点清单与调用契约", ("api", "mcp"), 0.99),
        _record(201, "rule", "引用与置信度规范", ("citation",), 0.97),
        _record(202, "rule", "Token 预算纪律", ("token", "budget"), 0.96),
        _record(301, "principle", "信噪比优先于信息量", ("signal",), 0.94),
        _record(401, "workflow", "Agent 接入标准流程", ("workflow",), 0.97),
    ]


def release_namespace(info: AgentNamespace) -> NamespaceInfo:
    """The release-side namespace record the contract's shapes read (URLs, language, rules)."""
    return NamespaceInfo(
        slug=info.slug,
        name=info.organization,
        prefix=info.id_prefix,
        title=info.title,
        summary=info.summary,
        contact="",
        license="CC-BY-4.0",
        base_url=info.base_url,
        language=info.language,
        is_public=info.public,
        default_budget=2000,
        rules=RULES,
        categories=tuple(CategoryInfo(c, c, "") for c in info.categories),
    )


def demo_info(*, slug: str = "evergreen", public: bool = True) -> AgentNamespace:
    return AgentNamespace(
        slug=slug,
        title="Evergreen · AI Context Engine",
        summary="给网站附加一层机器可读协议栈。",
        base_url=f"https://evergreen.example.com/t/{slug}",
        language="zh-CN",
        knowledge_version="1.2.0",
        public=public,
        id_prefix="EG",
        categories=CATEGORIES,
        organization="Evergreen",
    )


@dataclass
class FakeBackend:
    """A backend over a handful of entries; ``calls`` records each port call for assertions."""

    info: AgentNamespace = field(default_factory=demo_info)
    records: list[EntryRecord] = field(default_factory=demo_records)
    tombstones: dict[str, Tombstone] = field(
        default_factory=lambda: {
            "EG-009": Tombstone("EG-009", "旧端点说明", "2026-08-01T09:00:00Z", "merged into EG-101", "EG-101"),
            "EG-010": Tombstone("EG-010", "过时的做法", "2026-07-01T09:00:00Z", "no longer true", None),
        }
    )
    policy: CachePolicy = field(default_factory=lambda: CachePolicy(max_age=900, public=True))
    feedback_allowance: int = 3
    feedback: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    fail_with: Exception | None = None
    bad_pack: bool = False

    @property
    def entries(self) -> list[dict[str, Any]]:
        """Each entry as get_entry returns it (the contract's served shape)."""
        return [entry_found(self._served(record)).payload for record in self.records]

    def _served(self, record: EntryRecord) -> Served:
        return Served(record, release_namespace(self.info), STAMP)

    def _note(self, name: str) -> None:
        self.calls.append(name)
        if self.fail_with is not None:
            raise self.fail_with

    def namespace(self) -> AgentNamespace:
        return self.info

    def cache_policy(self) -> CachePolicy:
        return self.policy

    def rules(self) -> Sequence[str]:
        return RULES

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
        self._note("context")
        if category is not None and category not in CATEGORIES:
            raise ParamError("invalid_category", f"Unknown category {category!r}.", "category")
        if len(topic) > 500 or _CONTROL.search(topic):
            raise ParamError("invalid_topic", "The topic is too long or has control characters.", "topic")
        clamped = min(max(2000 if budget is None else budget, 200), 8000)
        words = [w for w in topic.lower().split() if w]
        pool = [e for e in self.records if category in (None, e.category)]
        hits = [e for e in pool if not words or any(w in e.title.lower() or w in e.tags for w in words)]
        matched = bool(hits) or not words
        ranked = hits or sorted(pool, key=lambda e: -e.confidence)
        packed: list[EntryRecord] = []
        used = 0
        for entry in ranked:
            if limit is not None and len(packed) >= limit:
                break
            if used + entry.tokens <= clamped:
                packed.append(entry)
                used += entry.tokens
        facts = ContextFacts(
            topic=topic,
            budget=clamped,
            category=category,
            stamp=STAMP,
            release_id=STAMP.sequence,
            used_tokens=used,
            matched=matched,
            truncated=len(packed) < len(ranked) and (limit is None or len(packed) < limit),
            min_entry_tokens=min((e.tokens for e in ranked), default=None),
            hint=None if matched else "零命中：兜底条目不得引用。",
            packed=tuple(Packed(self._served(e), 1.0, 1.0, None) for e in packed),
            rules=tuple(agent_rules(release_namespace(self.info))),
            hit_count=len(hits),
            omitted=tuple(Omitted(e.id, e.tokens) for e in ranked if e not in packed)[:20],
        )
        pack = context_document(facts)
        if self.bad_pack:
            del pack["entries"]
        return pack

    def entry(self, *, entry_id: str, version: int | None) -> EntryLookup:
        self._note("entry")
        ns = release_namespace(self.info)
        for record in self.records:
            if record.id == entry_id:
                if version is not None and version != 1:
                    raise ParamError("unknown_version", f"{entry_id} has no version {version}.", "version")
                return entry_found(self._served(record))
        if entry_id in self.tombstones:
            return entry_gone(self.tombstones[entry_id], namespace=ns)
        ids = sorted(e.id for e in self.records)
        return entry_missing(
            entry_id, tuple(sorted(ids, key=lambda other: _distance(other, entry_id))[:3]), namespace=ns
        )

    def entry_page(self, *, after: str | None, size: int) -> EntryPage:
        self._note("entry_page")
        ordered = sorted(self.records, key=lambda e: e.id)
        rest = [e for e in ordered if after is None or e.id > after]
        items = tuple(EntrySummary(e.id, e.title, e.summary, e.category, e.updated) for e in rest[:size])
        return EntryPage(items=items, next_after=items[-1].id if len(rest) > size else None)

    def scenarios(self) -> Sequence[PromptPackInfo]:
        return [PromptPackInfo(s, f"Prompt pack · {s}", f"Rules for {s} assistants.") for s in ("chat", "coding")]

    def prompt_pack(self, *, scenario: str) -> PromptPack | None:
        info = next((p for p in self.scenarios() if p.scenario == scenario), None)
        return None if info is None else PromptPack(info=info, text=f"在回答之前先读取 /llms.txt（{scenario}）。")

    def metrics(self) -> dict[str, Any]:
        self._note("metrics")
        return {"contextShape": [{"source": "llms.txt", "tokens": 1904}], "budgetScan": [{"budget": 800}]}

    def explain(
        self, *, topic: str, budget: int | None, category: str | None, limit: int | None, ids: Sequence[str]
    ) -> dict[str, Any]:
        self._note("explain")
        return {"matched": False, "explain": {"analysis": {}, "matching": {}, "candidates": [], "entries": []}}

    def verify(self, *, answer: str, release: str | int | None, pack: str | None) -> dict[str, Any]:
        self._note("verify")
        return {
            "releaseId": 1,
            "knowledgeVersion": "1.0.0",
            "citationCount": 0,
            "validCount": 0,
            "accuracy": None,
            "problems": {},
            "citations": [],
        }

    def submit_feedback(
        self, *, entry_id: str | None, query: str | None, kind: FeedbackKind, message: str
    ) -> FeedbackReceipt:
        self._note("submit_feedback")
        if entry_id is not None and all(e.id != entry_id for e in self.records):
            raise ParamError("unknown_entry", f"{entry_id} is not an entry here.", "entryId")
        if len(self.feedback) >= self.feedback_allowance:
            raise RateLimitedError(retry_after=42)
        self.feedback.append({"entryId": entry_id, "query": query, "kind": kind, "message": message})
        return FeedbackReceipt(id=f"FB-{len(self.feedback)}")


def _distance(a: str, b: str) -> tuple[int, str]:
    digits_a = int(re.sub(r"\D", "", a) or 0)
    digits_b = int(re.sub(r"\D", "", b) or 0)
    return abs(digits_a - digits_b), a


@dataclass
class FakeTaskStore:
    """Tasks of one namespace in a dict; ``retention_seconds`` is only stated, never enforced here."""

    retention_seconds: int = 86400
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def admit(self) -> None:
        return None

    def save(self, task: Mapping[str, Any]) -> None:
        self.tasks[task["id"]] = dict(task)

    def load(self, task_id: str) -> dict[str, Any] | None:
        task = self.tasks.get(task_id)
        return None if task is None else dict(task)
