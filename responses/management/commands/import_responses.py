"""Import randomized responses collected offline (CSV) into a survey: all rows or none."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from responses.imports import ImportRejected, import_responses
from survey.models import Survey


def find_survey(key: str) -> Survey:
    """A survey by id, slug or join code (commands run as the operator, for any owner)."""
    match = Survey.objects.filter(slug=key) | Survey.objects.filter(join_code=key.upper())
    if key.isdigit():
        match |= Survey.objects.filter(pk=int(key))
    surveys = list(match[:2])
    if len(surveys) != 1:
        raise CommandError(f"no single survey has id, slug or join code {key!r}")
    return surveys[0]


class Command(BaseCommand):
    help = (
        "Import a CSV of randomized responses (columns q1 … qk as in the export, optional "
        "round) into a survey with the matching designs: 0/1 for binary questions, the "
        "option index for choice questions, whole numbers for number questions, empty for "
        "unanswered. Every value is checked against its question's design first; on any "
        "error nothing is stored and the bad lines and columns are listed. Rows are stored "
        "in short batches, so respondents answering meanwhile are not held up."
    )

    def add_arguments(self, parser):
        parser.add_argument("survey", help="survey id, slug or join code")
        parser.add_argument("csv", type=Path, help="path to the CSV file")

    def handle(self, *args, survey: str, csv: Path, **options):
        target = find_survey(survey)
        progress = self._progress if options["verbosity"] > 1 else None
        try:
            with csv.open("rb") as binary:
                # The operator's command has no size limit: no worker timeout here, and
                # respondents still wait a moment at most (the rows go in batches).
                imported = import_responses(target, binary, max_answers=0, on_batch=progress)
        except OSError as error:
            raise CommandError(f"cannot read {csv}: {error}") from None
        except ImportRejected as rejected:
            lines = "\n".join(f"  {error}" for error in rejected.errors)
            message = f"nothing imported, {len(rejected.errors)} error(s):\n{lines}"
            raise CommandError(message) from None
        self.stdout.write(self.style.SUCCESS(f"Imported {imported} responses into “{target}”."))

    def _progress(self, stored: int, total: int) -> None:
        self.stdout.write(f"  {stored} of {total} rows stored")
