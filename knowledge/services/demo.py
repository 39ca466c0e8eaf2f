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

from knowledge.models import Entry, GoldenQuestion, Membership, Namespace, ReviewedText, Role, SynonymSet, TextKind
from knowledge.retrieval.index import SearchIndex
from knowledge.selectors.evaluation import golden_questions_list
from knowledge.selectors.snapshots import snapshot_read
from knowledge.services.build_queue import release_request_build
from knowledge.services.evaluation import threshold_calibrate
from knowledge.services.imports import ImportLine, entries_import, entries_parse
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


def new_lines(namespace: Namespace, items: list[ImportLine]) -> list[ImportLine]:
    """The lines whose ID the namespace has never had. Run again, load_demo adds what is missing and leaves
    every entry alone that exists, in whatever state editors brought it to (it re-published the demo's text
    over their published edits, unreviewed)."""
    ids = Entry.objects.filter(namespace=namespace).values_list("public_id", flat=True)
    known = {public_id.upper() for public_id in ids}
    return [item for item in items if item.public_id is None or item.public_id.upper() not in known]


def text_missing(namespace: Namespace, kind: str, key: str = "") -> bool:
    """Whether the namespace has no text of this kind and key yet (an existing one is the editors')."""
    return not ReviewedText.objects.filter(namespace=namespace, kind=kind, key=key).exists()


def _namespace(spec: dict[str, Any], base_url: str | None) -> Namespace:
    """The demo namespace: created from the spec the first time; afterwards only the given base URL changes."""
    namespace = Namespace.objects.filter(slug=spec["slug"]).first()
    if namespace is None:
        return namespace_apply_spec(spec={**spec, **({"base_url": base_url} if base_url else {})}, source="the demo")
    if base_url and namespace.base_url != base_url:
        namespace.base_url = base_url
        namespace.save(update_fields=["base_url"])
    return namespace


@transaction.atomic
def demo_load(*, password: str | None = None, base_url: str | None = None) -> DemoResult:
    """Create the demo namespace, or add to it what it lacks: run again, it changes nothing that exists
    (entries, texts, synonym sets and golden questions editors have changed stay as they are)."""
    spec = json.loads((DEMO_DIR / "namespace.json").read_text(encoding="utf-8"))
    namespace = _namespace(spec, base_url)
    people, created_password = _people(namespace, password)
    pages = [page for page in _read_docs() if text_missing(namespace, TextKind.DOC, page[0])]
    doc_pages_apply(namespace=namespace, pages=pages, source="the demo")
    packs = {
        path.stem: path.read_text(encoding="utf-8")
        for path in sorted((DEMO_DIR / "prompt_packs").glob("*.md"))
        if text_missing(namespace, TextKind.PROMPT, path.stem)
    }
    prompt_packs_apply(namespace=namespace, packs=packs, source="the demo")
    golden = DEMO_DIR / "golden_questions.jsonl"
    if golden.exists():
        for line in golden.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                GoldenQuestion.objects.get_or_create(
                    namespace=namespace,
                    key=item["id"],
                    defaults={"text": item["text"], "relevant": item["relevant"], "split": item.get("split", "dev")},
                )
    with (DEMO_DIR / "entries.jsonl").open(encoding="utf-8") as handle:
        items = new_lines(namespace, entries_parse(handle))
    entries_import(
        namespace=namespace,
        items=items,
        actor=people["editor"],
        reviewer=people["reviewer"],
        publish=True,
        source="demo",
    )
    named = set(SynonymSet.objects.filter(namespace=namespace).values_list("name", flat=True))
    sets = [(name, content) for name, content in _read_synonyms() if name not in named]
    synonym_sets_apply(namespace=namespace, sets=sets, author=people["editor"], reviewer=people["reviewer"])
    if namespace.match_threshold is None:
        _calibrate(namespace)
    release_request_build(namespace=namespace, reason="demo")
    return DemoResult(namespace=namespace, created_password=created_password)
