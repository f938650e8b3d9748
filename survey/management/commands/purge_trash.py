"""Delete for good the surveys in the trash for longer than TRASH_RETENTION_DAYS.

Meant for cron, e.g. daily: ``0 3 * * * python manage.py purge_trash``.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from survey.models import Survey


class Command(BaseCommand):
    help = "Delete for good the surveys in the trash for longer than TRASH_RETENTION_DAYS."

    def handle(self, *args, **options) -> None:
        purged = Survey.with_trashed.purge_expired()
        days = settings.TRASH_RETENTION_DAYS
        self.stdout.write(f"Deleted {purged} survey(s) in the trash for more than {days} days.")
