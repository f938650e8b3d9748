"""Seal every finished hour's submissions (run hourly, a few minutes past the hour)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from responses.sealing import seal


class Command(BaseCommand):
    help = (
        "Seal every finished hour: its submissions become counts in random order and the "
        "hour's tables are emptied so that nothing of their order of arrival is left, in "
        "the tables or (on PostgreSQL) the write-ahead log. Estimates are unchanged; a "
        "seal interrupted midway loses nothing. Run it hourly from cron, a few minutes "
        "past the hour. --now seals the current hour too (before a backup, or in tests)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--now",
            action="store_true",
            help="also seal the current hour (every submission stored so far)",
        )

    def handle(self, *args, now: bool = False, **options) -> None:
        sealed = seal(everything=now)
        for hour in sorted(sealed.hours):
            self.stdout.write(f"Sealed submissions of {hour:%Y-%m-%d %H}:00 UTC.")
        self.stdout.write(
            f"{sealed.submissions} submission(s) sealed, with {sealed.receipts} receipt(s), "
            f"{sealed.credentials} spent credential(s) and {sealed.invites} used invite(s); "
            "every total is unchanged."
        )
        if sealed.duplicates:
            self.stdout.write(
                f"{sealed.duplicates} submission(s) stored twice at the edge of an hour were "
                "counted once."
            )
