"""Evaluation questions for management commands: a JSON Lines file, or the namespace's golden questions."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser, OutputWrapper

from knowledge.management.text import text_lines
from knowledge.models import Entry, Namespace
from knowledge.retrieval.evaluation import EvalQuestion, QuestionFileError, questions_parse
from knowledge.selectors.evaluation import golden_questions_list

WRONG_NAMESPACE = (
    "None of the {count} entries {path} expects ({sample}, …) exists in “{slug}” (its IDs are {prefix}-…); "
    "is --namespace right?"
)


def add_questions_argument(parser: CommandParser) -> None:
    parser.add_argument(
        "queries",
        nargs="?",
        type=Path,
        help="JSON Lines {id, text, relevant: {ID: grade} or {}, split} (default: the golden questions).",
    )


def questions_load(
    *, namespace: Namespace, path: Path | None, split: str | None, stderr: OutputWrapper
) -> list[EvalQuestion]:
    """The questions of one split; a bad file is reported line by line and stops the command."""
    if path is None:
        return golden_questions_list(namespace=namespace, split=split)
    if not path.is_file():
        raise CommandError(f"No such file: {path}")
    try:
        questions = questions_parse(text_lines(path), split=split)
    except QuestionFileError as error:
        for line_no, message in error.errors:
            stderr.write(f"{path}:{line_no}: {message}")
        raise CommandError(f"{len(error.errors)} bad line(s) in {path}; nothing was done.") from None
    _check_ids_exist(namespace, questions, path)
    return questions


def _check_ids_exist(namespace: Namespace, questions: list[EvalQuestion], path: Path) -> None:
    """Refuse a file whose expected entries are all unknown here: scoring it would report 0.000 for nothing."""
    expected = {entry_id for question in questions for entry_id in question.relevant}
    if expected and not Entry.objects.filter(namespace=namespace, public_id__in=expected).exists():
        sample = ", ".join(sorted(expected)[:3])
        raise CommandError(
            WRONG_NAMESPACE.format(
                count=len(expected), path=path, sample=sample, slug=namespace.slug, prefix=namespace.prefix
            )
        )
