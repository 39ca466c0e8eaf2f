"""The demo namespace of seed §6: 15 entries, docs, prompt packs, golden questions and three people."""

from __future__ import annotations

import json
import math
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from knowledge.models import GoldenQuestion, Membership, Namespace, Role
from knowledge.retrieval.index import SearchIndex
from knowledge.selectors.evaluation import golden_questions_list
from knowledge.selectors.snapshots import snapshot_read
from knowledge.services.build_queue import release_request_build
from knowledge.services.evaluation import threshold_calibrate
from knowledge.services.imports import entries_import, entries_parse
from knowledge.services.namespaces import doc_pages_apply, namespace_apply_spec, prompt_packs_apply
from knowledge.services.synonyms import SynonymContent, synonym_sets_apply

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
DEMO_USERS = (("editor", Role.EDITOR), ("reviewer", Role.REVIEWER), ("admin", Role.ADMIN))


@dataclass(frozen=True, slots=True)
class DemoResult:
    namespace: Namespace
    created_password: str | None


def _read_docs() -> list[tuple[str, str, str]]:
    pages = []
    for path in sorted((DEMO_DIR / "docs").glob("*.md")):
        body = path.read_text(encoding="utf-8")
        first = body.splitlines()[0] if body else path.stem
        pages.append((path.stem, first.lstrip("# ").strip(), body))
    return pages


def _people(namespace: Namespace, password: str | None) -> tuple[dict[str, Any], str | None]:
    users = get_user_model().objects
    created_password = None
    people: dict[str, Any] = {}
    for username, role in DEMO_USERS:
        user = users.filter(username=username).first()
        if user is None:
            if password is None:
                password = created_password = secrets.token_urlsafe(12)
            user = users.create_user(username=username, password=password, email=f"{username}@evergreen.example.com")
        elif password is not None:
            user.set_password(password)
        user.is_staff = True
        user.is_superuser = role == Role.ADMIN
        user.save()
        Membership.objects.get_or_create(user=user, namespace=namespace, role=role)
        people[username] = user
    return people, created_password


def _read_synonyms() -> list[tuple[str, SynonymContent]]:
    """The demo's synonym sets (English questions over Chinese entries), each named by its first phrase."""
    sets = []
    for line in (DEMO_DIR / "synonyms.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            content = SynonymContent.build(phrases=item["phrases"], two_way=item.get("two_way", True))
            sets.append((content.phrases[0], content))
    return sets


def _calibrate(namespace: Namespace) -> None:
    """Set the `matched` threshold from the demo's dev golden questions, before the first release.

    Calibrated on an index of the content about to be released, so the first release already
    applies it (and keeps the seed's knowledgeVersion 1.2.0).
    """
    snapshot = snapshot_read(namespace=namespace)
    index = SearchIndex.compile([entry.as_document() for entry in snapshot.entries], synonyms=snapshot.synonyms)
    questions = golden_questions_list(namespace=namespace, split="dev")
    calibration = threshold_calibrate(index=index, questions=questions)
    namespace.match_threshold = math.floor(calibration.threshold * 10_000) / 10_000
    namespace.match_threshold_note = (
        f"Calibrated by load_demo on the demo's {len(questions)} dev golden questions "
        f"(target 0.95 + margin {calibration.margin:.3f})."
    )
    namespace.save(update_fields=["match_threshold", "match_threshold_note"])


@transaction.atomic
def demo_load(*, password: str | None = None, base_url: str | None = None) -> DemoResult:
    """Create or refresh the demo namespace; safe to run again (nothing changes the second time)."""
    spec = json.loads((DEMO_DIR / "namespace.json").read_text(encoding="utf-8"))
    if base_url:
        spec["base_url"] = base_url
    namespace = namespace_apply_spec(spec=spec, source="the demo")
    people, created_password = _people(namespace, password)
    doc_pages_apply(namespace=namespace, pages=_read_docs(), source="the demo")
    packs = {path.stem: path.read_text(encoding="utf-8") for path in sorted((DEMO_DIR / "prompt_packs").glob("*.md"))}
    prompt_packs_apply(namespace=namespace, packs=packs, source="the demo")
    golden = DEMO_DIR / "golden_questions.jsonl"
    if golden.exists():
        for line in golden.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                GoldenQuestion.objects.update_or_create(
                    namespace=namespace,
                    key=item["id"],
                    defaults={"text": item["text"], "relevant": item["relevant"], "split": item.get("split", "dev")},
                )
    with (DEMO_DIR / "entries.jsonl").open(encoding="utf-8") as handle:
        items = entries_parse(handle)
    entries_import(
        namespace=namespace,
        items=items,
        actor=people["editor"],
        reviewer=people["reviewer"],
        publish=True,
        source="demo",
    )
    synonym_sets_apply(namespace=namespace, sets=_read_synonyms(), author=people["editor"], reviewer=people["reviewer"])
    if namespace.match_threshold is None:
        _calibrate(namespace)
    release_request_build(namespace=namespace, reason="demo")
    return DemoResult(namespace=namespace, created_password=created_password)
