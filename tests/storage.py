"""What the database holds for a survey, read the way an auditor would: for tests that
assert what was (or was not) stored, whatever tables the storage uses."""

from __future__ import annotations

from collections import Counter

from responses.models import Answer
from survey.models import Survey


def stored_reports(
    survey: Survey, *, simulated: bool | None = None, round: int | None = None
) -> list[dict]:
    """Every stored submission's reports, ``{question id: report or None (a skip)}``,
    sorted so that two calls compare equal."""
    answers = Answer.objects.filter(submission__survey=survey)
    if round is not None:
        answers = answers.filter(submission__round=round)
    if simulated is not None:
        answers = answers.filter(submission__simulated=simulated)
    by_submission: dict = {}
    for key, qid, value in answers.values_list("submission_id", "question_id", "value"):
        by_submission.setdefault(key, {})[qid] = value
    return sorted(by_submission.values(), key=lambda r: sorted(r.items(), key=str))


def stored_count(survey: Survey | None = None, *, simulated: bool | None = None) -> int:
    """How many submissions are stored (of ``survey``, or of every survey)."""
    surveys = [survey] if survey is not None else list(Survey.with_trashed.all())
    return sum(len(stored_reports(s, simulated=simulated)) for s in surveys)


def stored_counter(survey: Survey) -> Counter:
    """The stored reports as a multiset of ``((question, report), …)`` tuples."""
    return Counter(tuple(sorted(r.items())) for r in stored_reports(survey))


def joint_from_rows(survey: Survey, question_ids, round: int | None = None) -> Counter:
    """Joint counts of reports worked out row by row: the truth counts are checked against."""
    rows = stored_reports(survey, round=round or survey.current_round)
    return Counter(
        tuple(r[q] for q in question_ids)
        for r in rows
        if all(r.get(q) is not None for q in question_ids)
    )


def freeze_hour(monkeypatch, hour) -> None:
    """Make every module that stamps reports with ``current_hour`` see ``hour``."""
    import sys

    from survey import models as survey_models

    def frozen():
        return hour

    frozen.frozen = True
    real = survey_models.current_hour
    for module in list(sys.modules.values()):
        found = getattr(module, "current_hour", None)
        if found is real or getattr(found, "frozen", False):
            monkeypatch.setattr(module, "current_hour", frozen)


def hours_of(question, round: int = 1):
    """A question's counts hour by hour, as the dashboard's over-time charts read them."""
    from responses.counts import survey_counts

    return survey_counts(question.survey, round).hours(question.id)
