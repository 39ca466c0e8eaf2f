"""Every management command's error cases: a stable message, a non-zero exit without a traceback, and no
half-written data (issue 10 §6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import AuditRecord, Entry, EntryVersion, Namespace, Release
from tests import worker
from tests.factories import committed
from tests.worker import ROOT

pytestmark = pytest.mark.django_db

ROW = {"title": "Budgets", "body": "Ask for 2000 tokens.", "category": "fact"}


def write(tmp_path: Path, rows: list[Any], name: str = "entries.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n", encoding="utf-8")
    return path


def run(*args: Any) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    with committed():
        call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def refused(*args: Any) -> str:
    """The CommandError message of a refused command (manage.py prints it and exits 1, no traceback)."""
    with pytest.raises(CommandError) as caught, committed():
        call_command(*args, stdout=StringIO(), stderr=StringIO())
    return str(caught.value)


def rows_written() -> tuple[int, int, int, int, int]:
    return (
        Namespace.objects.count(),
        Entry.objects.count(),
        EntryVersion.objects.count(),
        AuditRecord.objects.count(),
        Release.objects.count(),
    )


def manage(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": worker.test_database_url()}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


# --- import_entries ---------------------------------------------------------------------------------


def test_a_file_that_is_not_utf8_is_refused_with_its_line_and_no_traceback(ns_a: Namespace, tmp_path: Path) -> None:
    path = tmp_path / "gbk.jsonl"
    # GB18030 text: 预 (D4 A4) happens to be a valid UTF-8 pair, 算 (CB E3) is not.
    path.write_bytes(json.dumps(ROW).encode() + b"\n" + '{"title": "预算", "body": "x"}'.encode("gbk") + b"\n")

    result = manage("import_entries", str(path), "--namespace", "alpha")

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{path}:2: byte 0xCB at column 14 is not UTF-8; nothing was done." in result.stderr
    assert not Entry.objects.exists()


def test_a_utf8_byte_order_mark_is_accepted(ns_a: Namespace, tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({**ROW, "id": "AL-001"}).encode() + b"\n")

    out, _ = run("import_entries", str(path), "--namespace", "alpha")

    assert "1 created" in out
    assert Entry.objects.get().public_id == "AL-001"


def test_ids_of_another_prefix_are_refused_never_renumbered(ns_a: Namespace, tmp_path: Path) -> None:
    path = write(tmp_path, [{**ROW, "id": "AL-001"}, {**ROW, "title": "Foreign", "id": "XYZ-0001"}])
    before = rows_written()
    err = StringIO()

    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("import_entries", str(path), "--namespace", "alpha", stdout=StringIO(), stderr=err)

    assert (
        f"{path}:2: ID XYZ-0001 has the prefix XYZ, not this namespace's AL; IDs are never renumbered silently"
        in err.getvalue()
    )
    assert rows_written() == before


def test_a_namespace_created_for_a_refused_file_is_not_left_behind(db: Any, tmp_path: Path) -> None:
    path = write(tmp_path, [{**ROW, "id": "XYZ-0001"}])
    before = rows_written()

    message = refused("import_entries", str(path), "--namespace", "cran", "--create-namespace", "--prefix", "CRAN")

    assert message == f"Nothing was imported from {path}."
    assert rows_written() == before


@pytest.mark.parametrize(
    ("slug", "prefix", "says"),
    [
        ("Bad Slug!", "ZZ", "“Bad Slug!” cannot be a namespace slug"),
        ("zeta", "z-1", "“Z-1” cannot be an ID prefix"),
        ("x" * 65, "ZZ", "cannot be a namespace slug"),
    ],
    ids=["slug", "prefix", "long-slug"],
)
def test_a_namespace_an_import_creates_must_have_a_valid_slug_and_prefix(
    db: Any, tmp_path: Path, slug: str, prefix: str, says: str
) -> None:
    path = write(tmp_path, [ROW])
    before = rows_written()

    message = refused("import_entries", str(path), "--namespace", slug, "--create-namespace", "--prefix", prefix)

    assert says in message
    assert rows_written() == before


def test_a_prefix_for_an_existing_namespace_must_be_its_own(ns_a: Any, tmp_path: Path) -> None:
    path = write(tmp_path, [{**ROW, "category": "rule"}])

    message = refused("import_entries", str(path), "--namespace", "alpha", "--create-namespace", "--prefix", "QQ")

    assert message == "“alpha” exists with the prefix AL; --prefix only sets up a new namespace."
    out, _ = run("import_entries", str(path), "--namespace", "alpha", "--prefix", "al")  # its own, in any case
    assert out.startswith("alpha: 1 created")


def test_a_created_namespace_takes_the_base_url_and_contact(db: Any, tmp_path: Path) -> None:
    path = write(tmp_path, [{**ROW, "id": "CRAN-0001"}])

    run(
        "import_entries",
        str(path),
        "--namespace",
        "cran",
        "--create-namespace",
        "--base-url",
        "https://cran.example.org/",
        "--contact",
        "docs@example.org",
        "--publish",
    )

    namespace = Namespace.objects.get(slug="cran")
    assert (namespace.prefix, namespace.base_url, namespace.contact) == (
        "CRAN",
        "https://cran.example.org",
        "docs@example.org",
    )
    assert namespace.active_release is not None
    llms = bytes(namespace.active_release.artifacts.get(name="llms.txt").content).decode()
    assert "https://cran.example.org/api/context" in llms
    assert "Contact docs@example.org." in llms


def test_without_a_contact_llms_txt_names_none(db: Any, tmp_path: Path) -> None:
    path = str(write(tmp_path, [ROW]))
    run("import_entries", path, "--namespace", "n1", "--create-namespace", "--prefix", "NA", "--publish")

    release = Namespace.objects.get(slug="n1").active_release
    assert release is not None
    llms = bytes(release.artifacts.get(name="llms.txt").content).decode()
    assert "Contact" not in llms
    assert "https://n1.example.com/api/context" in llms


@pytest.mark.parametrize("url", ["cran.example.org", "ftp://cran.example.org", "https://"])
def test_a_bad_base_url_is_refused_before_anything_is_written(db: Any, tmp_path: Path, url: str) -> None:
    before = rows_written()

    message = refused(
        "import_entries", str(write(tmp_path, [ROW])), "--namespace", "cran", "--create-namespace", "--prefix", "CR",
        "--base-url", url,
    )  # fmt: skip

    assert message == f"--base-url {url!r} is not an http(s) URL such as https://docs.example.org."
    assert rows_written() == before


def test_base_url_is_refused_for_an_existing_namespace(ns_a: Namespace, tmp_path: Path) -> None:
    message = refused(
        "import_entries", str(write(tmp_path, [ROW])), "--namespace", "alpha", "--base-url", "https://a.example.org"
    )

    assert message == "“alpha” exists; --base-url and --contact only set up a new namespace."
    assert not Entry.objects.exists()


def test_import_refuses_a_missing_file_and_an_unknown_namespace(ns_a: Namespace, tmp_path: Path) -> None:
    assert refused("import_entries", str(tmp_path / "none.jsonl"), "--namespace", "alpha") == (
        f"No such file: {tmp_path / 'none.jsonl'}"
    )
    assert refused("import_entries", str(write(tmp_path, [ROW])), "--namespace", "nowhere") == (
        "No namespace “nowhere”; pass --create-namespace --prefix P to create it."
    )
    assert not Entry.objects.exists()


# --- export_entries ---------------------------------------------------------------------------------


def test_export_refuses_an_unknown_namespace(db: Any) -> None:
    assert refused("export_entries", "--namespace", "nowhere") == "No namespace “nowhere”."


@pytest.mark.django_db(transaction=True)
def test_export_into_a_pipe_closed_early_ends_quietly(ns_a: Namespace, tmp_path: Path) -> None:
    rows = [{**ROW, "title": f"Entry {n}", "body": "x" * 2000} for n in range(200)]
    run("import_entries", str(write(tmp_path, rows)), "--namespace", "alpha", "--publish")
    env = {**os.environ, "DATABASE_URL": worker.test_database_url()}

    export = subprocess.Popen(
        [sys.executable, "manage.py", "export_entries", "--namespace", "alpha"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert export.stdout is not None and export.stderr is not None
    first = export.stdout.readline()  # what `| head -1` reads, then it closes the pipe
    export.stdout.close()
    stderr = export.stderr.read().decode()
    export.stderr.close()
    export.wait()

    assert json.loads(first)["title"] == "Entry 0"
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    assert "The reader closed the output after" in stderr
    assert export.returncode == 0


# --- build_release, retire_entry, rollback_release --------------------------------------------------


def test_build_release_refuses_an_unknown_namespace_and_needs_a_target(db: Any) -> None:
    assert refused("build_release", "--namespace", "nowhere") == "No namespace “nowhere”."
    with pytest.raises(CommandError, match="one of the arguments --namespace --all is required"):
        call_command("build_release", stdout=StringIO(), stderr=StringIO())
    assert not Release.objects.exists()


def test_build_release_builds_once_and_then_reports_unchanged(ns_a: Namespace, tmp_path: Path) -> None:
    run("import_entries", str(write(tmp_path, [{**ROW, "id": "AL-001"}])), "--namespace", "alpha", "--publish")

    out, _ = run("build_release", "--namespace", "alpha")

    assert out.startswith("alpha: release #1 v") and "unchanged, 1 entries" in out
    assert Release.objects.filter(namespace=ns_a).count() == 1


def test_retire_entry_refuses_unknown_ids_and_users(ns_a: Namespace, tmp_path: Path) -> None:
    run("import_entries", str(write(tmp_path, [{**ROW, "id": "AL-001"}])), "--namespace", "alpha", "--publish")
    before = rows_written()

    assert refused("retire_entry", "AL-999", "--namespace", "alpha", "--reason", "x") == (
        "No entry AL-999 in namespace “alpha”."
    )
    assert refused("retire_entry", "AL-001", "--namespace", "beta", "--reason", "x") == (
        "No entry AL-001 in namespace “beta”."
    )
    assert refused("retire_entry", "AL-001", "--namespace", "alpha", "--reason", "x", "--user", "ghost") == (
        "No active user “ghost” (--user names the person the command acts as)."
    )
    assert rows_written() == before
    assert Entry.objects.get(public_id="AL-001").retired_at is None


def test_retire_entry_twice_is_refused_the_second_time(ns_a: Namespace, tmp_path: Path) -> None:
    run("import_entries", str(write(tmp_path, [{**ROW, "id": "AL-001"}])), "--namespace", "alpha", "--publish")

    out, _ = run("retire_entry", "AL-001", "--namespace", "alpha", "--reason", "Withdrawn")
    audit = AuditRecord.objects.count()
    message = refused("retire_entry", "AL-001", "--namespace", "alpha", "--reason", "Again")

    assert out == "Retired AL-001; a release build is queued.\n"
    assert "AL-001" in message and "retired" in message
    assert AuditRecord.objects.count() == audit


def test_rollback_release_refuses_what_it_cannot_serve(ns_a: Namespace, tmp_path: Path) -> None:
    assert refused("rollback_release", "--namespace", "nowhere") == "No namespace “nowhere”."
    assert refused("rollback_release", "--namespace", "alpha") == (
        "No such earlier release; see the release history in the admin."
    )
    run("import_entries", str(write(tmp_path, [{**ROW, "id": "AL-001"}])), "--namespace", "alpha", "--publish")
    active = Namespace.objects.get(slug="alpha").active_release_id

    assert refused("rollback_release", "--namespace", "alpha", "--to", "7") == (
        "No such earlier release; see the release history in the admin."
    )
    assert Namespace.objects.get(slug="alpha").active_release_id == active


# --- evaluate -----------------------------------------------------------------------------------------


def test_evaluate_on_the_wrong_namespace_is_refused_not_scored_zero(ns_a: Namespace, tmp_path: Path) -> None:
    run("import_entries", str(write(tmp_path, [{**ROW, "id": "AL-001"}])), "--namespace", "alpha", "--publish")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"id": "q1", "text": "budgets", "relevant": {"CRAN-0001": 2}}) + "\n")

    message = refused("evaluate", "--namespace", "alpha", str(queries))

    assert message == (
        f"None of the 1 entries {queries} expects (CRAN-0001, …) exists in “alpha” (its IDs are AL-…); "
        "is --namespace right?"
    )
