"""Every route of the management API, what it needs, and what success answers: the matrix's table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from knowledge.models import GoldenQuestion, Release, Role, TextKind, TextVersion
from knowledge.selectors.evaluation import golden_questions_list, release_for_evaluation
from knowledge.services.api_keys import api_key_create
from knowledge.services.entries import entry_create
from knowledge.services.evaluation import evaluation_run_record, questions_evaluate
from knowledge.services.releases import release_build
from knowledge.services.synonyms import synonym_approve, synonym_submit
from knowledge.services.texts import text_approve, text_draft, text_save, text_submit
from knowledge.services.versions import (
    version_approve,
    version_draft_for_entry,
    version_publish,
    version_save,
    version_submit,
)
from tests.factories import content

BASE = "/t/alpha/api/manage/"


@dataclass(frozen=True)
class Route:
    name: str
    method: str
    path: Callable[[Any], str]  # world -> path (after BASE)
    role: str | None  # None: any member may
    ok: int
    body: Callable[[Any], Any] = field(default=lambda world: None)
    headers: Callable[[Any], dict[str, str]] = field(default=lambda world: {})
    setup: Callable[[Any], object] = field(default=lambda world: None)
    held: bool = False  # judged by the roles the person holds, whatever the token's scope (writes nothing)


def _synonyms_in_review(world: Any) -> Any:
    return synonym_submit(version=world.synonyms, actor=world.callers["editor_a"].user)


def _synonyms_approved(world: Any) -> Any:
    return synonym_approve(version=_synonyms_in_review(world), actor=world.callers["reviewer_a"].user)


def _in_review(world: Any) -> Any:
    """The editor's draft, submitted: what a reviewer approves or rejects."""
    return version_submit(version=world.draft, actor=world.callers["editor_a"].user)


def _approved(world: Any) -> Any:
    return version_approve(version=_in_review(world), actor=world.callers["reviewer_a"].user)


def _second_release(world: Any) -> None:
    editor, reviewer = world.callers["editor_a"].user, world.callers["reviewer_a"].user
    draft = version_draft_for_entry(entry=world.live.entry, actor=editor)
    version_submit(version=draft, actor=editor)
    version_approve(version=draft, actor=reviewer)
    version_publish(version=draft, actor=reviewer)
    release_build(namespace_id=world.alpha.pk)


def _questions(world: Any) -> None:
    """Alpha's golden question (once: several routes' paths ask for it in one world)."""
    GoldenQuestion.objects.get_or_create(
        namespace=world.alpha, key="q1", defaults={"text": "token budget", "relevant": {world.live.entry.public_id: 2}}
    )


def _held_release(world: Any) -> int:
    """A release whose golden question lost its answer: built, held, and its sequence."""
    _questions(world)
    editor, reviewer = world.callers["editor_a"].user, world.callers["reviewer_a"].user
    draft = version_draft_for_entry(entry=world.live.entry, actor=editor)
    unrelated = content(title="Harbour hours", summary="The harbour opens at dawn.", body="Boats leave.", tags=[])
    version_save(version=draft, content=unrelated, expected_lock_version=draft.lock_version, actor=editor)
    version_submit(version=draft, actor=editor)
    version_approve(version=draft, actor=reviewer)
    version_publish(version=draft, actor=reviewer)
    outcome = release_build(namespace_id=world.alpha.pk)
    assert outcome.held, "the setup should have built a held release"
    return outcome.release.sequence


def _theme_draft(world: Any) -> TextVersion:
    """The editor's draft of alpha's theme "tokens" (the same draft however often it is asked for)."""
    editor = world.callers["editor_a"].user
    draft = text_draft(namespace=world.alpha, kind=TextKind.THEME, key="tokens", actor=editor)
    if draft.lock_version:
        return draft
    theme = {"title": "Tokens", "summary": "Budgets.", "entries": [world.live.entry.public_id], "position": 0}
    return text_save(version=draft, content=theme, expected_lock_version=0, actor=editor)


def _theme_in_review(world: Any) -> TextVersion:
    return text_submit(version=_theme_draft(world), actor=world.callers["editor_a"].user)


def _bases_in_review(world: Any) -> TextVersion:
    """The editor's proposal that alpha build on beta, submitted."""
    editor = world.callers["editor_a"].user
    draft = text_draft(namespace=world.alpha, kind=TextKind.BASES, actor=editor)
    draft = text_save(version=draft, content={"bases": ["beta"]}, expected_lock_version=0, actor=editor)
    return text_submit(version=draft, actor=editor)


def _bases_approved(world: Any) -> TextVersion:
    return text_approve(version=_bases_in_review(world), actor=world.callers["reviewer_a"].user)


def _key(world: Any) -> int:
    return api_key_create(namespace=world.alpha, name="agent", actor=None, check_permission=False)[0].pk


def _first_release(world: Any) -> int:
    return Release.objects.filter(namespace=world.alpha).order_by("sequence").values_list("sequence", flat=True)[0]


def _feedback(world: Any) -> int:
    return world.alpha.feedback.get().pk


def _audit(world: Any) -> int:
    return world.alpha.audit_records.order_by("pk").values_list("pk", flat=True)[0]


def _question(world: Any) -> int:
    _questions(world)
    return world.alpha.golden_questions.get().pk


def _evaluation_run(world: Any) -> int:
    """A run of alpha's golden question against its active release, as POST evaluation-runs/ records one."""
    _questions(world)
    release = Release.objects.filter(namespace=world.alpha).order_by("sequence").last()
    assert release is not None
    questions = golden_questions_list(namespace=world.alpha)
    evaluation = questions_evaluate(release=release_for_evaluation(release=release), questions=questions)
    return evaluation_run_record(namespace=world.alpha, release=release, evaluation=evaluation).pk


ROUTES: list[Route] = [
    Route("root", "get", lambda w: "", None, 200),
    Route("entries", "get", lambda w: "entries/", None, 200),
    Route("entry", "get", lambda w: f"entries/{w.live.entry.public_id}/", None, 200),
    Route("versions", "get", lambda w: "versions/", None, 200),
    Route("version", "get", lambda w: f"versions/{w.draft.pk}/", None, 200),
    Route("releases", "get", lambda w: "releases/", None, 200),
    Route("release", "get", lambda w: f"releases/{_first_release(w)}/", None, 200),
    Route("feedback", "get", lambda w: "feedback/", None, 200),
    Route("feedback item", "get", lambda w: f"feedback/{_feedback(w)}/", None, 200),
    Route("audit", "get", lambda w: "audit/", None, 200),
    Route("audit record", "get", lambda w: f"audit/{_audit(w)}/", None, 200),
    Route("golden questions", "get", lambda w: "golden-questions/", None, 200),
    Route("golden question", "get", lambda w: f"golden-questions/{_question(w)}/", None, 200),
    Route("evaluation runs", "get", lambda w: "evaluation-runs/", None, 200),
    Route("evaluation run", "get", lambda w: f"evaluation-runs/{_evaluation_run(w)}/", None, 200),
    Route("api keys", "get", lambda w: "api-keys/", Role.ADMIN, 200),
    Route("api key", "get", lambda w: f"api-keys/{_key(w)}/", Role.ADMIN, 200),
    Route(
        "create entry",
        "post",
        lambda w: "entries/",
        Role.EDITOR,
        201,
        body=lambda w: {"category": "fact", "title": "Made by a script", "body": "Scripts propose changes too."},
    ),
    Route(
        "validate entry",
        "post",
        lambda w: "entries/validate/",
        Role.EDITOR,
        200,
        body=lambda w: {"category": "fact", "title": "Checked by a script", "body": "Nothing is written."},
        held=True,
    ),
    Route("open a draft", "post", lambda w: f"entries/{w.live.entry.public_id}/draft/", Role.EDITOR, 201),
    Route(
        "retire",
        "post",
        lambda w: f"entries/{w.draft.entry.public_id}/retire/",
        Role.REVIEWER,
        200,
        body=lambda w: {"reason": "Merged into another entry."},
    ),
    Route(
        "edit a draft",
        "patch",
        lambda w: f"versions/{w.draft.pk}/",
        Role.EDITOR,
        200,
        body=lambda w: {"title": "Cite every fact, always"},
        headers=lambda w: {"If-Match": f'"v{w.draft.pk}.0"'},
    ),
    Route("submit", "post", lambda w: f"versions/{w.draft.pk}/submit/", Role.EDITOR, 200),
    Route("withdraw", "post", lambda w: f"versions/{w.draft.pk}/withdraw/", Role.EDITOR, 200),
    Route("approve", "post", lambda w: f"versions/{_in_review(w).pk}/approve/", Role.REVIEWER, 200),
    Route(
        "reject",
        "post",
        lambda w: f"versions/{_in_review(w).pk}/reject/",
        Role.REVIEWER,
        200,
        body=lambda w: {"note": "Name the source."},
    ),
    Route("publish", "post", lambda w: f"versions/{_approved(w).pk}/publish/", Role.REVIEWER, 200),
    Route(
        "rollback",
        "post",
        lambda w: f"releases/{_first_release(w)}/rollback/",
        Role.REVIEWER,
        200,
        setup=_second_release,
    ),
    Route(
        "activate a held release",
        "post",
        lambda w: f"releases/{_held_release(w)}/activate/",
        Role.REVIEWER,
        200,
        body=lambda w: {"reason": "The harbour entry replaces it on purpose."},
    ),
    Route(
        "resolve feedback",
        "post",
        lambda w: f"feedback/{_feedback(w)}/resolve/",
        Role.EDITOR,
        200,
        body=lambda w: {"status": "done"},
    ),
    Route("create api key", "post", lambda w: "api-keys/", Role.ADMIN, 201, body=lambda w: {"name": "new agent"}),
    Route("revoke api key", "post", lambda w: f"api-keys/{_key(w)}/revoke/", Role.ADMIN, 200),
    Route(
        "add golden question",
        "post",
        lambda w: "golden-questions/",
        Role.EDITOR,
        201,
        body=lambda w: {"key": "q9", "text": "how big a budget?", "relevant": {w.live.entry.public_id: 2}},
    ),
    Route("synonym sets", "get", lambda w: "synonym-sets/", None, 200),
    Route("synonym set", "get", lambda w: f"synonym-sets/{w.synonyms.synonym_set_id}/", None, 200),
    Route("synonym versions", "get", lambda w: "synonym-versions/", None, 200),
    Route("synonym version", "get", lambda w: f"synonym-versions/{w.synonyms.pk}/", None, 200),
    Route(
        "create synonym set",
        "post",
        lambda w: "synonym-sets/",
        Role.EDITOR,
        201,
        body=lambda w: {"name": "protocol", "phrases": ["MCP", "Model Context Protocol"]},
    ),
    Route(
        "propose synonyms",
        "post",
        lambda w: f"synonym-sets/{w.synonyms.synonym_set_id}/propose/",
        Role.EDITOR,
        200,
        body=lambda w: {"phrases": ["token budget", "预算", "budget tier"]},
    ),
    Route("submit synonyms", "post", lambda w: f"synonym-versions/{w.synonyms.pk}/submit/", Role.EDITOR, 200),
    Route("withdraw synonyms", "post", lambda w: f"synonym-versions/{w.synonyms.pk}/withdraw/", Role.EDITOR, 200),
    Route(
        "approve synonyms",
        "post",
        lambda w: f"synonym-versions/{_synonyms_in_review(w).pk}/approve/",
        Role.REVIEWER,
        200,
    ),
    Route(
        "reject synonyms",
        "post",
        lambda w: f"synonym-versions/{_synonyms_in_review(w).pk}/reject/",
        Role.REVIEWER,
        200,
        body=lambda w: {"note": "Too broad."},
    ),
    Route(
        "publish synonyms",
        "post",
        lambda w: f"synonym-versions/{_synonyms_approved(w).pk}/publish/",
        Role.REVIEWER,
        200,
    ),
    Route("evaluate", "post", lambda w: "evaluation-runs/", Role.EDITOR, 201, setup=_questions),
    Route("bases", "get", lambda w: "bases/", None, 200, setup=_bases_in_review),
    Route("propose bases", "post", lambda w: "bases/propose/", Role.EDITOR, 200, body=lambda w: {"bases": ["beta"]}),
    Route("themes", "get", lambda w: "themes/", None, 200, setup=_theme_draft),
    Route("theme", "get", lambda w: f"themes/{_theme_draft(w).text.key}/", None, 200),
    Route(
        "create theme",
        "post",
        lambda w: "themes/",
        Role.EDITOR,
        201,
        body=lambda w: {"key": "budgets", "title": "Budgets", "entries": [w.live.entry.public_id]},
    ),
    Route(
        "propose theme",
        "post",
        lambda w: "themes/tokens/propose/",
        Role.EDITOR,
        200,
        setup=_theme_draft,
        body=lambda w: {"title": "Token budgets", "entries": [w.live.entry.public_id]},
    ),
    Route("text versions", "get", lambda w: "text-versions/", None, 200, setup=_theme_draft),
    Route("text version", "get", lambda w: f"text-versions/{_theme_draft(w).pk}/", None, 200),
    Route("submit text", "post", lambda w: f"text-versions/{_theme_draft(w).pk}/submit/", Role.EDITOR, 200),
    Route("withdraw text", "post", lambda w: f"text-versions/{_theme_draft(w).pk}/withdraw/", Role.EDITOR, 200),
    Route("approve text", "post", lambda w: f"text-versions/{_theme_in_review(w).pk}/approve/", Role.REVIEWER, 200),
    Route(
        "reject text",
        "post",
        lambda w: f"text-versions/{_theme_in_review(w).pk}/reject/",
        Role.REVIEWER,
        200,
        body=lambda w: {"note": "Say what the theme is for."},
    ),
    Route("approve bases", "post", lambda w: f"text-versions/{_bases_in_review(w).pk}/approve/", Role.REVIEWER, 200),
    Route("publish bases", "post", lambda w: f"text-versions/{_bases_approved(w).pk}/publish/", Role.REVIEWER, 200),
]

# Who may use which role in alpha through their token (the token's scope cut to the person's roles).
USABLE: dict[str, set[str]] = {
    "editor_a": {Role.EDITOR},
    "reviewer_a": {Role.REVIEWER},
    "admin_a": {Role.EDITOR, Role.REVIEWER, Role.ADMIN},
    "readonly_a": set(),
    "reviewer_b": set(),
    "outsider": set(),
}
# The roles each person holds in alpha, whatever their token's scope.
HELD: dict[str, set[str]] = {**USABLE, "readonly_a": USABLE["editor_a"]}
MEMBERS_OF_ALPHA = {"editor_a", "reviewer_a", "admin_a", "readonly_a"}
# The caller whose request must succeed, per role needed.
FIRST: dict[str | None, str] = {
    None: "readonly_a",
    Role.EDITOR: "editor_a",
    Role.REVIEWER: "reviewer_a",
    Role.ADMIN: "admin_a",
}


def expected_status(caller: str, route: Route) -> int:
    if caller not in MEMBERS_OF_ALPHA:
        return 404
    usable = HELD if route.held else USABLE
    if route.role is not None and route.role not in usable[caller]:
        return 403
    return route.ok


def call(caller: Any, route: Route, world: Any, path: str) -> Any:
    body = route.body(world)
    headers = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in route.headers(world).items()}
    if route.method == "get":
        return caller.get(BASE + path, **headers)
    return getattr(caller, route.method)(BASE + path, body if body is not None else {}, **headers)


def fresh_entry(world: Any, title: str) -> Any:
    editor = world.callers["editor_a"].user
    return entry_create(
        namespace=world.alpha,
        category=world.alpha.categories.get(slug="fact"),
        content=content(title=title),
        actor=editor,
    )
