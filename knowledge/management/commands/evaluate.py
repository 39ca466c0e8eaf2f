"""manage.py evaluate: questions through a namespace's release exactly as /api/context serves them."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.management.actor import add_user_argument, command_actor
from knowledge.management.progress import Progress
from knowledge.management.questions import add_questions_argument, questions_load
from knowledge.models import Namespace, Release, Role
from knowledge.retrieval.calibration import matching_summary
from knowledge.retrieval.evaluation import EvaluationReport
from knowledge.retrieval.packing import BUDGET_DEFAULT
from knowledge.retrieval.reference import ReferenceUnavailableError
from knowledge.selectors.evaluation import ReleasePrunedError, release_for_evaluation
from knowledge.selectors.serving import LoadedRelease
from knowledge.services.evaluation import Evaluation, evaluation_run_record, questions_evaluate, reference_evaluate

ROWS = (
    ("nDCG@10", "ndcg_at_10", "covered questions, on the ranking"),
    ("MRR@10", "mrr_at_10", "covered questions, on the ranking"),
    ("recall in pack", "pack_recall", "share of the relevant entries inside the budgeted pack"),
    ("hit rate", "hit_rate", "covered questions with a relevant entry in the pack"),
    ("matched", "matched_when_covered", "covered questions answered matched=true"),
    ("not covered refused", "unmatched_when_uncovered", "uncovered questions answered matched=false"),
    ("filler", "filler", "share of packed tokens in no relevant entry (covered questions)"),
    ("latency p50 ms", "latency_p50_ms", "rank + pack + payload per question"),
    ("latency p99 ms", "latency_p99_ms", ""),
)


def format_report(report: EvaluationReport, reference: EvaluationReport | None = None) -> list[str]:
    """The metrics, one per line; with `reference`, bm25s's beside Evergreen's."""
    lines = [f"questions: {report.queries} ({report.covered} covered, {report.uncovered} not covered)"]
    if reference is not None:
        lines.append(f"{'':20} {'evergreen':>9} {'bm25s':>8}")
    for label, name, note in ROWS:
        ours = "-" if getattr(report, name) is None else f"{getattr(report, name):.3f}"
        theirs = ""
        if reference is not None:
            value = getattr(reference, name)
            theirs = "-" if value is None else f"{value:.3f}"
        lines.append(f"{label:20} {ours:>9} {theirs:>8}  {note}".rstrip())
    return lines


class Command(BaseCommand):
    help = (
        "Evaluate questions against a namespace's active release through /api/context's own ranking, "
        "packing and payload: nDCG@10, MRR@10, recall in pack, hit rate, refusals, latency."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_questions_argument(parser)
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--split", help="Only questions of this split (e.g. dev); others are not read.")
        parser.add_argument("--budget", type=int, default=BUDGET_DEFAULT, help="Token budget (clamped to 200..8000).")
        parser.add_argument("--release", type=int, help="Sequence number of another release (default: the active one).")
        parser.add_argument("--record", action="store_true", help="Store the run (admin, /metrics.json).")
        add_user_argument(parser, needs="the editor role, with --record")
        parser.add_argument("--json", action="store_true", help="Print metrics and per-question results as JSON.")
        parser.add_argument(
            "--no-reference", action="store_true", help="Skip the bm25s reference run beside Evergreen's."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        namespace = Namespace.objects.filter(slug=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"No namespace “{options['namespace']}”.")
        if options["record"]:
            command_actor(options["user"]).require(namespace=namespace, role=Role.EDITOR)
        release = self._release(namespace, options["release"])
        questions = questions_load(
            namespace=namespace, path=options["queries"], split=options["split"], stderr=self.stderr
        )
        if not questions:
            raise CommandError("No questions to evaluate (check the file and --split).")
        try:
            loaded = release_for_evaluation(release=release)
        except ReleasePrunedError as error:
            raise CommandError(str(error)) from None
        self.stderr.write(
            f"Evaluating {len(questions)} questions against {namespace.slug} release #{release.sequence}…"
        )
        evaluation = questions_evaluate(
            release=loaded,
            questions=questions,
            budget=options["budget"],
            progress=Progress("Questions"),
        )
        if options["record"]:
            run = evaluation_run_record(namespace=namespace, release=release, evaluation=evaluation)
            self.stderr.write(f"Recorded evaluation run {run.pk}.")
        reference = None
        if not options["no_reference"]:
            try:
                reference = reference_evaluate(
                    release=loaded, questions=questions, budget=options["budget"], progress=Progress("bm25s")
                )
            except ReferenceUnavailableError as error:
                self.stderr.write(str(error))
        self._print(evaluation, reference, release, loaded, as_json=options["json"])

    def _release(self, namespace: Namespace, sequence: int | None) -> Release:
        if sequence is None:
            if namespace.active_release is None:
                raise CommandError(f"{namespace.slug} has no active release; publish or build one first.")
            return namespace.active_release
        release = Release.objects.filter(namespace=namespace, sequence=sequence).first()
        if release is None:
            raise CommandError(f"{namespace.slug} has no release #{sequence}.")
        return release

    def _print(
        self,
        evaluation: Evaluation,
        reference: Evaluation | None,
        release: Release,
        loaded: LoadedRelease,
        *,
        as_json: bool,
    ) -> None:
        matching = {"threshold": loaded.index.match_threshold, **loaded.index.matching}
        if as_json:
            document = {
                "namespace": release.namespace.slug,
                "release": release.sequence,
                "matching": matching,
                "metrics": evaluation.metrics(),
                "reference": None if reference is None else {"system": "bm25s", "metrics": reference.metrics()},
                "results": evaluation.results(),
            }
            self.stdout.write(json.dumps(document, ensure_ascii=False, indent=2))
            return
        self.stdout.write(f"{release.namespace.slug} release #{release.sequence}, budget {evaluation.budget}")
        self.stdout.write(f"match threshold: {matching_summary(matching)}")
        for line in format_report(evaluation.report, None if reference is None else reference.report):
            self.stdout.write(line)
        if reference is not None:
            self.stdout.write("bm25s answers every question as covered, so its matched and refused say nothing.")
