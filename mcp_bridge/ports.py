"""The narrow interfaces the protocol core needs from the Django side (the backend) and its task store.

What an agent receives about an entry (found, gone, missing) and the namespace are the agent contract's
records (``knowledge.retrieval.contract``); nothing here re-declares them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from knowledge.retrieval.contract.lookups import EntryLookup
from knowledge.retrieval.contract.records import AgentNamespace

FeedbackKind = Literal["outdated", "incorrect", "missing", "other"]


class ParamError(Exception):
    """A request parameter the backend refuses, with the same code, message and param as the REST API's 400."""

    def __init__(self, code: str, message: str, param: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param


class RateLimitedError(Exception):
    """The caller is over a limit (feedback submissions); ``retry_after`` is in whole seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


class TaskQuotaError(Exception):
    """A new A2A task would go over a storage quota (``scope`` "client" or "namespace")."""

    def __init__(self, message: str, *, scope: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.scope = scope
        self.retry_after = retry_after


@dataclass(frozen=True)
class CachePolicy:
    """The namespace's HTTP caching (seed §10): ``Cache-Control: public|private, max-age=<max_age>``."""

    max_age: int
    public: bool


@dataclass(frozen=True)
class EntrySummary:
    """One published entry as listed in ``resources/list``: no body."""

    id: str
    title: str
    summary: str
    category: str
    updated: str


@dataclass(frozen=True)
class EntryPage:
    """Entries in ID order after some ID; ``next_after`` is the last ID when more follow, else None."""

    items: tuple[EntrySummary, ...]
    next_after: str | None


@dataclass(frozen=True)
class PromptPackInfo:
    """A prompt pack without its text, for ``prompts/list``."""

    scenario: str
    title: str
    description: str


@dataclass(frozen=True)
class PromptPack:
    """A prompt pack with its text (``GET /api/prompt-pack?scenario=…``)."""

    info: PromptPackInfo
    text: str


@dataclass(frozen=True)
class FeedbackReceipt:
    """A stored feedback item, waiting in the namespace's review queue."""

    id: str


class Backend(Protocol):
    """One namespace's knowledge, as seen by one caller for one request.

    The Django side builds an instance per request, already bound to the resolved namespace, its
    active release and the caller (API key or address, for rate limits). Reads come from the active
    release; nothing here may change published content.
    """

    def namespace(self) -> AgentNamespace:
        """The namespace's identity."""
        ...

    def cache_policy(self) -> CachePolicy:
        """The HTTP caching of the namespace's read routes; MCP's ``ttlMs``/``cacheScope`` mirror it."""
        ...

    def rules(self) -> Sequence[str]:
        """The namespace's citation rules (the ``rules`` of ``/api/context``): namespace data, not entries."""
        ...

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
        """The ``/api/context`` payload (seed §4), byte-for-byte the REST body once serialized.

        ``budget_mode`` "payload" makes the whole response fit the budget (REST ``budgetMode``).
        ``paths`` (issue 16 §2): the files the agent works on; entries whose globs match come first.

        ``budget`` None means the default (2000); any integer is clamped to [200, 8000] and echoed
        clamped. ``limit`` None means no cap; otherwise at most that many entries are packed
        (``truncated`` keeps its budget-only meaning). Raises ``ParamError`` exactly where the REST
        view answers 400: an unknown category, a topic over 500 characters or with control characters.
        """
        ...

    def entry(self, *, entry_id: str, version: int | None) -> EntryLookup:
        """One entry by public ID, the published version or the given one.

        An unknown ``version`` of a known entry raises ``ParamError(param="version")``.
        """
        ...

    def entry_page(self, *, after: str | None, size: int) -> EntryPage:
        """Published entries in ID order, ``size`` at most, strictly after ``after`` (None: from the start)."""
        ...

    def scenarios(self) -> Sequence[PromptPackInfo]:
        """The namespace's prompt packs (seed §5 ①: chat, coding, research, support)."""
        ...

    def prompt_pack(self, *, scenario: str) -> PromptPack | None:
        """One prompt pack with its text, or None when the namespace has none for ``scenario``."""
        ...

    def metrics(self) -> dict[str, Any]:
        """The ``/api/metrics`` payload (measured ``contextShape``, ``budgetScan``, evaluation results)."""
        ...

    def explain(
        self, *, topic: str, budget: int | None, category: str | None, limit: int | None, ids: Sequence[str]
    ) -> dict[str, Any]:
        """The ``/api/context?explain=1&why=…`` document: the pack and why it is what it is."""
        ...

    def verify(self, *, answer: str, release: str | int | None, pack: str | None) -> dict[str, Any]:
        """The ``POST /api/verify`` report of the answer's citations (recorded for the namespace).

        Raises ``ParamError`` where the REST route answers 400 (an unknown release or pack).
        """
        ...

    def submit_feedback(
        self, *, entry_id: str | None, query: str | None, kind: FeedbackKind, message: str
    ) -> FeedbackReceipt:
        """Store agent feedback as untrusted text in the namespace's review queue; never publishes.

        Raises ``RateLimitedError`` over the caller's feedback limit and ``ParamError`` for an
        ``entry_id`` that is not one of this namespace's entries.
        """
        ...


class TaskStore(Protocol):
    """A2A tasks of one namespace, kept for ``retention_seconds`` after they were last saved.

    Tasks are JSON objects (the A2A ``Task`` as sent on the wire); a task past its retention, or one of
    another namespace, loads as None.
    """

    retention_seconds: int

    def admit(self) -> None:
        """Before a new task runs: raise ``TaskQuotaError`` when this caller may store no more tasks now."""
        ...

    def save(self, task: Mapping[str, Any]) -> None:
        """Insert or replace the task under ``task["id"]``."""
        ...

    def load(self, task_id: str) -> dict[str, Any] | None:
        """The task, or None when unknown, expired or not this namespace's."""
        ...
