"""Conditional loading by paths (issue 16 §2), without Django: glob semantics, path rules, the pack."""

from __future__ import annotations

from dataclasses import replace

import pytest
from wcmatch import glob

from knowledge.retrieval.contract.shapes import PATHS_MAX
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.paths import (
    FLAGS,
    PathScope,
    glob_example,
    glob_problem,
    globs_match,
    globs_normalize,
    path_normalize,
    paths_normalize,
)
from knowledge.retrieval.payload import ContextQuery, ReleaseView, context_build
from knowledge.retrieval.snapshot import EntryRecord, ReleaseStamp
from knowledge.retrieval.tokens import entry_tokens
from tests.retrieval.helpers import demo_namespace

STAMP = ReleaseStamp(sequence=3, knowledge_version="1.0.2", revision="2026-09-02", generated_at="2026-09-02T10:00:00Z")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        # ** spans any number of directories, none included
        ("src/api/**/*.py", "src/api/users.py", True),
        ("src/api/**/*.py", "src/api/v1/deep/users.py", True),
        ("src/api/**/*.py", "src/web/users.py", False),
        ("docs/**", "docs/guide/setup.md", True),
        ("docs/**", "docs", False),
        ("**", "any/thing.txt", True),
        # * and ? never cross a separator
        ("src/*.py", "src/a/b.py", False),
        ("src/?.py", "src/a.py", True),
        # a glob without / matches the file name at any depth; with /, it is anchored at the root
        ("*.sql", "db/migrations/0001_init.sql", True),
        ("*.sql", "schema.sql", True),
        ("db/*.sql", "old/db/x.sql", False),
        # case-sensitive
        ("*.SQL", "schema.sql", False),
        ("Makefile", "makefile", False),
        # names beginning with a dot are matched; braces and classes work
        ("**/*.yml", ".github/workflows/ci.yml", True),
        ("*.{ts,tsx}", "web/App.tsx", True),
        ("src/[ab]*.py", "src/alpha.py", True),
        ("src/[ab]*.py", "src/gamma.py", False),
        # \ escapes inside a glob; it is not a separator there
        ("src\\*.py", "src/a.py", False),
    ],
)
def test_glob_semantics_follow_wcmatch_globmatch_with_the_documented_flags(
    pattern: str, path: str, matches: bool
) -> None:
    assert globs_match((pattern,), path) is matches
    # The same answer as the maintained library called directly: no matching of our own.
    assert glob.globmatch(path, pattern, flags=FLAGS) is matches


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("src/api/users.py", "src/api/users.py"),
        ("./src/api/users.py", "src/api/users.py"),
        ("src\\api\\users.py", "src/api/users.py"),  # a Windows agent's separators
        ("src//api///users.py", "src/api/users.py"),
        ("  docs/x.md ", "docs/x.md"),
    ],
)
def test_request_paths_are_normalized_to_slashes_relative_to_the_root(raw: str, normalized: str) -> None:
    assert path_normalize(raw) == normalized


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("/home/me/repo/src/x.py", "absolute"),
        ("C:\\repo\\x.py", "absolute"),
        ("src/../../etc/passwd", ".."),
        ("", "empty"),
        ("./", "empty"),
        ("src/\x00x.py", "control"),
        ("a" * 501, "longer"),
    ],
)
def test_bad_request_paths_are_refused_with_a_message(raw: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        path_normalize(raw)


def test_paths_are_deduplicated_sorted_and_capped() -> None:
    assert paths_normalize(["b.py", "./a.py", "b.py"]) == ("a.py", "b.py")
    with pytest.raises(ValueError, match="more than 50"):
        paths_normalize([f"f{n}.py" for n in range(PATHS_MAX + 1)])


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [("/src/*.py", "relative"), ("!*.md", "exclusions"), ("../x/*.py", "'..'"), ("a\tb", "control")],
)
def test_an_editor_glob_that_cannot_work_is_refused(pattern: str, problem: str) -> None:
    message = glob_problem(pattern)
    assert message is not None and problem in message
    with pytest.raises(ValueError, match=problem):
        globs_normalize(["*.py", pattern])
    assert glob_problem(" ") is not None


def test_editor_globs_are_trimmed_and_deduplicated_in_order() -> None:
    assert globs_normalize([" src/**/*.py", "*.sql", "src/**/*.py", ""]) == ("src/**/*.py", "*.sql")
    assert glob_problem("src/api/**/*.py") is None


@pytest.mark.parametrize("pattern", ["src/api/**/*.py", "*.sql", "docs/**", "*.{ts,tsx}", "src/[ab]*.py", "**"])
def test_the_preview_example_is_a_path_the_glob_really_matches(pattern: str) -> None:
    example = glob_example(pattern)
    assert example is not None and globs_match((pattern,), example)


# --- the pack ------------------------------------------------------------------------------------


def record(
    id: str,
    title: str,
    *,
    body: str,
    paths: tuple[str, ...] = (),
    confidence: float = 0.9,
    category: str = "rule",
) -> EntryRecord:
    return EntryRecord(
        id=id,
        category=category,
        title=title,
        summary="",
        body=body,
        tags=(),
        confidence=confidence,
        tokens=entry_tokens(title=title, summary="", body=body),
        updated="2026-08-01",
        version=1,
        content_hash="0" * 64,
        paths=paths,
    )


RULES = (
    record("EG-201", "Database migrations", body="Migrations are reversible and reviewed.", paths=("*.sql",)),
    record(
        "EG-202",
        "API handlers",
        body="Handlers validate input and never return a stack trace.",
        paths=("src/api/**/*.py",),
        confidence=0.95,
    ),
    record("EG-203", "Documentation style", body="Docs use short sentences.", paths=("docs/**",)),
    record("EG-204", "Code review", body="Every change is reviewed by a second person before merging."),
    record("EG-205", "Python style", body="Python code is formatted with ruff.", paths=("*.py",), confidence=0.8),
    record("EG-001", "Release process", body="A reviewed change is merged and released.", category="fact"),
)


def build(
    *,
    topic: str = "",
    paths: tuple[str, ...] = (),
    budget: int = 2000,
    category: str | None = None,
    limit: int | None = None,
    entries: tuple[EntryRecord, ...] = RULES,
    scope: bool = True,
) -> dict:
    ordered = tuple(sorted(entries, key=lambda e: e.id))
    index = SearchIndex.compile([e.as_document() for e in ordered])
    view = ReleaseView(
        release_id=3,
        namespace=demo_namespace(language="en"),
        stamp=STAMP,
        entries=ordered,
        scope=PathScope(ordered) if scope else None,
    )
    query = ContextQuery(topic=topic, budget=budget, category=category, limit=limit, paths=paths_normalize(paths))
    return context_build(index=index, view=view, query=query)


def ids(body: dict) -> list[str]:
    return [entry["id"] for entry in body["entries"]]


def test_with_paths_and_no_topic_the_pack_is_exactly_the_entries_that_apply_in_priority_order() -> None:
    body = build(paths=("src/api/users.py",))

    # EG-202 (src/api/**/*.py, confidence 0.95) before EG-205 (*.py, 0.8); nothing else applies.
    assert ids(body) == ["EG-202", "EG-205"]
    assert body["matched"] is True and body["hitCount"] == 2 and body["hint"] is None
    assert [e["matchedPaths"] for e in body["entries"]] == [["src/api/users.py"], ["src/api/users.py"]]
    assert body["entries"][0]["paths"] == ["src/api/**/*.py"]
    assert body["query"]["paths"] == ["src/api/users.py"]


def test_an_entry_applies_when_any_of_the_paths_matches_and_says_which() -> None:
    body = build(paths=("db/0001.sql", "docs/intro.md", "README"))

    assert ids(body) == ["EG-201", "EG-203"]
    assert body["entries"][0]["matchedPaths"] == ["db/0001.sql"]
    assert body["entries"][1]["matchedPaths"] == ["docs/intro.md"]


def test_with_paths_and_a_topic_applicable_entries_come_first_then_topic_hits_without_globs() -> None:
    body = build(topic="reviewed change", paths=("src/api/users.py",))

    found = ids(body)
    assert found[:2] == ["EG-202", "EG-205"]
    # Topic hits follow, only among entries without globs: EG-201 (*.sql) mentions "reviewed" but
    # its globs do not match, so it is left out.
    assert set(found[2:]) <= {"EG-204", "EG-001"} and found[2:]
    assert "EG-201" not in found and "EG-203" not in found
    assert all("matchedPaths" not in e for e in body["entries"][2:])
    assert body["entries"][0]["relevance"] == 1.0


def test_without_paths_entries_with_globs_rank_by_topic_as_before() -> None:
    body = build(topic="migrations reversible")

    assert ids(body)[0] == "EG-201"
    assert "matchedPaths" not in body["entries"][0] and "paths" not in body["query"]
    assert body["entries"][0]["paths"] == ["*.sql"]


@pytest.mark.parametrize("topic", ["", "reviewed change", "migrations", "python ruff"])
def test_a_request_without_paths_answers_as_if_no_entry_had_globs(topic: str) -> None:
    with_globs = build(topic=topic)
    without = build(topic=topic, entries=tuple(replace(e, paths=()) for e in RULES))
    for entry in with_globs["entries"]:
        entry.pop("paths", None)
    with_globs.pop("payloadTokens"), without.pop("payloadTokens")
    assert with_globs == without


def test_paths_that_no_glob_matches_give_an_empty_pack_that_says_so() -> None:
    body = build(paths=("assets/logo.png",))

    assert body["entries"] == [] and body["matched"] is False and body["hitCount"] == 0
    assert body["hint"] is not None and "applies to these paths" in body["hint"]


def test_applicable_entries_load_within_the_budget_and_mark_the_pack_truncated() -> None:
    large = record("EG-206", "Big API rule", body="word " * 900, paths=("src/api/**",), confidence=0.99)
    entries = (*RULES, large)
    body = build(paths=("src/api/users.py",), budget=400, entries=entries)

    assert body["usedTokens"] <= 400
    assert ids(body) == ["EG-202", "EG-205"]  # EG-206 ranks first but does not fit: skipped, the rest packed
    assert body["truncated"] is True and body["omitted"][0]["id"] == "EG-206"


def test_limit_and_category_apply_to_the_applicable_entries_too() -> None:
    assert ids(build(paths=("src/api/users.py",), limit=1)) == ["EG-202"]
    assert ids(build(paths=("src/api/users.py",), category="fact")) == []


def test_a_view_without_a_compiled_scope_computes_the_same_pack() -> None:
    assert build(paths=("src/api/users.py",), topic="review", scope=False) == build(
        paths=("src/api/users.py",), topic="review"
    )


def test_a_weak_topic_does_not_dilute_a_pack_of_applicable_entries() -> None:
    body = build(topic="quantum chromodynamics", paths=("schema.sql",))

    assert ids(body) == ["EG-201"] and body["matched"] is True


def test_path_matching_is_case_sensitive_in_the_pack() -> None:
    assert ids(build(paths=("SRC/API/users.py",))) == ["EG-205"]  # only *.py matches the upper-case path
