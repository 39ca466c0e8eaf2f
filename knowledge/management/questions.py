"""Evaluation questions for management commands: a JSON Lines file, or the namespace's golden questions."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser, OutputWrapper

from knowledge.models import Namespace
from knowledge.retrieval.evaluation import EvalQuestion, QuestionFileError, questions_parse
from knowledge.selectors.evaluation import golden_questions_list


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
    with path.open(encoding="utf-8") as handle:
        try:
            return questions_parse(handle, split=split)
        except QuestionFileError as error:
            for line_no, message in error.errors:
                stderr.write(f"{path}:{line_no}: {message}")
            raise CommandError(f"{len(error.errors)} bad line(s) in {path}; nothing was done.") from None
