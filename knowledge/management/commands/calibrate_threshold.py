"""manage.py calibrate_threshold: the namespace's match threshold from its own questions."""

from __future__ import annotations

import math
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.management.actor import add_user_argument, command_actor
from knowledge.management.questions import add_questions_argument, questions_load
from knowledge.models import Namespace, Role
from knowledge.selectors.evaluation import release_for_evaluation
from knowledge.services.evaluation import Calibration, namespace_match_threshold_set, threshold_calibrate

BELOW_TARGET = (
    "Warning: target out of reach: threshold {threshold:.4f} matches {matched:.3f} of {covered} covered questions, "
    "below the target {target}; the others are refused at any threshold (their best entry holds too little of them)."
)
NOT_STORED = (
    "Nothing stored: the threshold misses its target. Check those questions and their entries, lower "
    "--target-matched, or pass --accept-below-target to store it anyway."
)


class Command(BaseCommand):
    help = (
        "Set Namespace.match_threshold to the highest value that still answers --target-matched of the "
        "covered questions with matched=true (so as many uncovered ones as possible get matched=false), "
        "measured on the active release; a release build is queued so the next release applies it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_questions_argument(parser)
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--split", default="dev", help="Questions of this split only (default: dev).")
        parser.add_argument(
            "--target-matched",
            type=float,
            default=0.95,
            help="Share of covered questions to match on unseen questions; calibrated with a margin above it.",
        )
        parser.add_argument("--dry-run", action="store_true", help="Print the threshold without storing it.")
        parser.add_argument(
            "--accept-below-target",
            action="store_true",
            help="Store the threshold even when it matches less than --target-matched of the covered questions "
            "(without it, that is an error and nothing is stored).",
        )
        add_user_argument(parser, needs="the namespace-admin role")

    def handle(self, *args: Any, **options: Any) -> None:
        target = options["target_matched"]
        if not 0 < target <= 1:
            raise CommandError("--target-matched must be in (0, 1].")
        namespace = Namespace.objects.filter(slug=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"No namespace “{options['namespace']}”.")
        actor = command_actor(options["user"])
        actor.require(namespace=namespace, role=Role.ADMIN)
        if namespace.active_release is None:
            raise CommandError(f"{namespace.slug} has no active release; publish or build one first.")
        questions = questions_load(
            namespace=namespace, path=options["queries"], split=options["split"], stderr=self.stderr
        )
        self.stderr.write(f"Scoring {len(questions)} questions against release #{namespace.active_release.sequence}…")
        try:
            calibration = threshold_calibrate(
                index=release_for_evaluation(release=namespace.active_release).index,
                questions=questions,
                target_matched=target,
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        refused = calibration.unmatched_when_uncovered
        self.stdout.write(
            f"{namespace.slug}: threshold {calibration.threshold:.4f} matches {calibration.matched_when_covered:.3f} "
            f"of {calibration.covered} covered and refuses {'-' if refused is None else f'{refused:.3f}'} of "
            f"{calibration.uncovered} uncovered questions (target {target} + margin {calibration.margin:.3f}; "
            f"was {namespace.match_threshold})."
        )
        if calibration.note:
            self.stdout.write(calibration.note)
        self._check_target(calibration, accepted=options["accept_below_target"])
        if options["dry_run"]:
            return
        namespace_match_threshold_set(
            namespace=namespace,
            # Rounded down: a lower threshold only matches more, so the target share still holds.
            threshold=math.floor(calibration.threshold * 10_000) / 10_000,
            actor=actor.user,
            note=(
                f"calibrate_threshold on {len(questions)} {options['split']} questions: matches "
                f"{calibration.matched_when_covered:.3f} of {calibration.covered} covered, refuses "
                f"{'-' if refused is None else f'{refused:.3f}'} of {calibration.uncovered} uncovered "
                f"(target {target} + margin {calibration.margin:.3f}"
                f"{'; below the target, accepted' if calibration.below_target else ''})"
            ),
        )
        self.stdout.write("Stored; a release build is queued, and the new release applies the threshold.")

    def _check_target(self, calibration: Calibration, *, accepted: bool) -> None:
        """A threshold that misses its target is never stored without a word: a warning, and an error
        (exit status 1, nothing stored) unless --accept-below-target says it is wanted anyway."""
        if not calibration.below_target:
            return
        self.stderr.write(
            BELOW_TARGET.format(
                threshold=calibration.threshold,
                matched=calibration.matched_when_covered,
                covered=calibration.covered,
                target=calibration.target,
            )
        )
        if not accepted:
            raise CommandError(NOT_STORED)
