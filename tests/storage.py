"""What the database holds for a survey, read the way an auditor would: for tests that
assert what was (or was not) stored, whatever tables the storage uses."""

from __future__ import annotations

from collections import Counter

from survey.models import Answer, Survey


def stored_reports(survey: Survey, *, simulated: bool | None = None) -> list[dict]:
    """Every stored submission's reports, ``{question id: report or None (a skip)}``,
    sorted so that two calls compare equal."""
    answers = Answer.objects.filter(submission__survey=survey)
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
