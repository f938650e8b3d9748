"""Rewrite each finished hour's rows in random order under fresh keys (run hourly)."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db import connection

from responses.models import Answer, Receipt, SpentCredential, Submission, Tally
from responses.sealing import reseal_invites, seal_finished_hours
from survey.models import Invite, current_hour


class Command(BaseCommand):
    help = (
        "Seal every finished hour: its submissions, answers and receipts are rewritten in "
        "random order under fresh keys in one transaction per hour, and its tally shards "
        "folded, so neither keys, row order nor PostgreSQL's xmin tell the order of "
        "arrival. Estimates are unchanged; a seal interrupted midway rolls back whole. "
        "Run it hourly from cron, a few minutes past the hour."
    )

    def handle(self, *args, **options):
        if connection.vendor == "sqlite":
            # Deleted rows are overwritten with zeros, not left in free pages.
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA secure_delete = ON")
        sealed = seal_finished_hours(before=current_hour())
        for hour in sealed:
            self.stdout.write(
                f"Sealed {hour.hour:%Y-%m-%d %H}:00 UTC: {hour.submissions} submissions, "
                f"{hour.answers} answers, {hour.receipts} receipts."
            )
        # Used invites and spent credentials lose their order of use in the same run.
        resealed = reseal_invites()
        if (sealed or resealed) and connection.vendor == "postgresql":
            # The old row versions become unreachable (also to pageinspect) right away.
            models = (Submission, Answer, Receipt, Tally, Invite, SpentCredential)
            tables = (m._meta.db_table for m in models)
            with connection.cursor() as cursor:
                cursor.execute(f"VACUUM {', '.join(tables)}")
        self.stdout.write(f"{len(sealed)} hour(s) sealed; every total is unchanged.")
