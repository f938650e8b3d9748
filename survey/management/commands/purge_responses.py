"""Delete the responses of every survey whose retention ("delete responses N days after
closing") has run out, as its respondent pages promised.

Meant for cron beside purge_trash, e.g. daily: ``0 3 * * * python manage.py purge_responses``.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.utils import timezone

from survey.models import Survey


class Command(BaseCommand):
    help = "Delete the responses of surveys closed for longer than their retention."

    def handle(self, *args, **options) -> None:
        now = timezone.now()
        with_retention = Survey.with_trashed.filter(retention_days__isnull=False)
        # A survey past its close date closes on its next use; one nobody opens since
        # must not keep its responses longer for that.
        for survey in with_retention.filter(status=Survey.Status.OPEN, closes_at__lte=now):
            survey.close_if_due()
        surveys, responses = 0, 0
        pending = with_retention.filter(
            status=Survey.Status.CLOSED, closed_at__isnull=False, responses_deleted_at__isnull=True
        )
        for survey in pending:
            deleted = survey.purge_responses_if_due(now)
            if deleted is not None:
                surveys, responses = surveys + 1, responses + deleted
        self.stdout.write(
            f"Deleted {responses} response(s) of {surveys} survey(s) past their retention."
        )
