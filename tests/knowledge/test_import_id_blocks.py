"""Imports keep IDs in their category's number blocks (seed §6); export and import fail as CommandErrors."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import Category, Entry, Namespace
from knowledge.services.imports import ImportFileError, entries_import, entries_parse
from tests.factories import committed

pytestmark = pytest.mark.django_db


def write(tmp_path: Path, rows: list[Any]) -> Path:
    path = tmp_path / "entries.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    return path


def test_an_id_outside_its_categorys_blocks_is_refused_naming_line_id_category_and_blocks(
    ns_a: Namespace, tmp_path: Path
) -> None:
    """QA finding 11: {"id": "EG-450", "category": "fact"} made a fact with a workflow (4xx) ID."""
    rows = [{"id": "AL-010", "title": "In its block", "body": "b"}, {"id": "AL-450", "title": "t", "body": "b"}]
    err = StringIO()

    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("import_entries", str(write(tmp_path, rows)), "--namespace", "alpha", stderr=err)

    assert "entries.jsonl:2: AL-450 lies outside the blocks of category “fact” (000–099, 500–599)" in err.getvalue()
    assert not Entry.objects.filter(namespace=ns_a).exists()


def test_the_service_refuses_an_id_of_another_categorys_block(ns_a: Namespace) -> None:
    items = entries_parse([json.dumps({"id": "AL-101", "title": "t", "body": "b", "category": "rule"})])

    with pytest.raises(ImportFileError) as raised:
        entries_import(namespace=ns_a, items=items, actor=None, within_blocks=True)

    message = "AL-101 lies outside the blocks of category “rule” (200–299); give it an ID there or leave the id out"
    assert raised.value.errors == [(1, f"{message} (one is allocated)")]


def test_an_id_in_any_block_of_its_category_is_kept(ns_a: Namespace) -> None:
    items = entries_parse([json.dumps({"id": "AL-501", "title": "A metric", "body": "b", "category": "fact"})])

    entries_import(namespace=ns_a, items=items, actor=None, within_blocks=True)

    assert Entry.objects.get(namespace=ns_a, public_id="AL-501").category.slug == "fact"


def test_a_category_without_blocks_takes_a_given_id(ns_a: Namespace) -> None:
    Category.objects.create(namespace=ns_a, slug="misc", name="Misc", position=9)
    items = entries_parse([json.dumps({"id": "AL-777", "title": "t", "body": "b", "category": "misc"})])

    entries_import(namespace=ns_a, items=items, actor=None, within_blocks=True)

    assert Entry.objects.filter(namespace=ns_a, public_id="AL-777").exists()


def test_a_namespace_the_import_creates_keeps_the_files_ids_wherever_they_fall(db: Any, tmp_path: Path) -> None:
    rule = {"id": "X-001", "title": "A rule", "body": "b", "category": "rule"}
    rows = [rule, {"id": "X-002", "title": "A fact", "body": "b"}]

    with committed():
        call_command(
            "import_entries", str(write(tmp_path, rows)), "--namespace", "x", "--create-namespace", stdout=StringIO()
        )

    assert set(Entry.objects.filter(namespace__slug="x").values_list("public_id", flat=True)) == {"X-001", "X-002"}


def test_the_demo_still_imports(db: Any) -> None:
    call_command("load_demo", stdout=StringIO(), stderr=StringIO())

    assert Entry.objects.filter(namespace__slug="evergreen", public_id="EG-501").exists()


def test_the_bench_collection_still_imports_with_its_prefix(db: Any) -> None:
    path = Path(__file__).resolve().parents[2] / "bench" / "collections" / "pylibs" / "entries.jsonl"
    args = ("--namespace", "pylibs", "--create-namespace", "--prefix", "PYL", "--acknowledge-warnings", "Docs' links.")

    with committed():
        call_command("import_entries", str(path), *args, stdout=StringIO(), stderr=StringIO())

    assert Entry.objects.filter(namespace__slug="pylibs").count() == 432


def test_exporting_into_a_missing_folder_is_a_command_error_naming_the_path(ns_a: Namespace, tmp_path: Path) -> None:
    """QA finding 14: a FileNotFoundError traceback, where every other CLI error is a CommandError."""
    target = tmp_path / "nonexistent" / "x.jsonl"

    with pytest.raises(CommandError, match=f"Cannot write {target}"):
        call_command("export_entries", "--namespace", "alpha", str(target), stderr=StringIO())


def test_a_repeated_key_in_an_import_line_is_refused_naming_line_and_key() -> None:
    lines = ['{"title": "t", "body": "b"}', '{"title": "first", "body": "b", "title": "second"}']

    with pytest.raises(ImportFileError) as raised:
        entries_parse(lines)

    assert raised.value.errors == [(2, "the key “title” appears twice (JSON keeps only the last; remove one)")]
