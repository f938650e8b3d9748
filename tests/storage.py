"""What the database holds for a survey, read the way an auditor would: for tests that
assert what was (or was not) stored, whatever tables the storage uses."""

from __future__ import annotations

from collections import Counter

from responses.batch import parse_key
from responses.models import INBOXES, AnswerPattern
from survey.models import Survey


def stored_reports(
    survey: Survey, *, simulated: bool | None = None, round: int | None = None
) -> list[dict]:
    """Every stored submission's reports, ``{question id: report or None (a skip)}``,
    sealed or of the current hour, sorted so that two calls compare equal."""
    filters = {"survey": survey}
    if simulated is not None:
        filters["simulated"] = simulated
    if round is not None:
        filters["round"] = round
    keys = []
    for key, n in AnswerPattern.objects.filter(**filters).values_list("key", "count"):
        keys += [key] * n
    for inbox in INBOXES:
        keys += inbox.objects.filter(**filters).values_list("reports", flat=True)
    rows = [parse_key(key) for key in keys]
    return sorted(rows, key=lambda r: sorted(r.items(), key=str))


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


def stored_answers(survey: Survey | None = None) -> int:
    """How many answers (reports and skips) the stored submissions hold."""
    surveys = [survey] if survey is not None else list(Survey.with_trashed.all())
    return sum(len(r) for s in surveys for r in stored_reports(s))


def nothing_stored() -> bool:
    """No survey holds a stored submission, sealed or of the current hour."""
    return stored_count() == 0


def tallied(survey: Survey) -> dict[int, dict]:
    """{question id: {tally key: reports}} as the estimates read them (skips left out)."""
    from responses.counts import survey_counts

    return {qid: dict(t.counts) for qid, t in survey_counts(survey).tallies.items() if t.counts}


def used_invite_count() -> int:
    """Invites used, sealed or in the current hour's tables, over every survey."""
    from responses.credentials import used_invites

    return sum(used_invites(s) for s in Survey.with_trashed.all())


def spent_credential_count() -> int:
    """Credentials spent, sealed or in the current hour's tables, over every survey."""
    from responses.models import SpentCredential

    current = sum(i.objects.filter(credential__isnull=False).count() for i in INBOXES)
    return SpentCredential.objects.count() + current


def tallied_total() -> int:
    """Reports (skips left out) the estimates of every survey count."""
    return sum(sum(c.values()) for s in Survey.with_trashed.all() for c in tallied(s).values())


def use_invite(survey: Survey, token: str) -> bool:
    """Use an invite as a respondent would (True), or find it refused (False)."""
    from responses.credentials import issue
    from survey.models import InviteRejected

    try:
        issue(survey, token)
    except InviteRejected:
        return False
    return True


def stored_rounds(survey: Survey | None = None) -> list[int]:
    """The round of every stored submission, sorted."""
    from responses.models import INBOXES, AnswerPattern

    patterns = AnswerPattern.objects.all() if survey is None else survey.patterns.all()
    rounds = [r for r, n in patterns.values_list("round", "count") for _ in range(n)]
    for inbox in INBOXES:
        rows = inbox.objects.all() if survey is None else inbox.objects.filter(survey=survey)
        rounds += rows.values_list("round", flat=True)
    return sorted(rounds)


def rows_left(survey_id: int, question_ids) -> dict[str, int]:
    """Rows that still refer to a survey or its questions, in every table of the responses
    app (the database enforces few of these keys: the cascade must reach them all)."""
    from django.apps import apps

    left = {}
    for model in apps.get_app_config("responses").get_models():
        fields = {f.name for f in model._meta.concrete_fields}
        if "survey" in fields:
            n = model.objects.filter(survey_id=survey_id).count()
        else:
            n = model.objects.filter(question_id__in=list(question_ids)).count()
        if n:
            left[model.__name__] = n
    return left


def every_response_row() -> tuple:
    """Every row of the responses app, as stored (for comparing before and after)."""
    from django.apps import apps

    return tuple(
        sorted(map(str, model.objects.values_list()))
        for model in apps.get_app_config("responses").get_models()
    )


def simulated_hours(survey: Survey, hours: int, per_hour: int, rates, seed: int = 2026) -> None:
    """``hours`` hours of simulated respondents, ``per_hour`` each, ending now: each
    question's true rate from ``rates`` (in question order), randomized by its design."""
    from datetime import timedelta

    import numpy as np

    from responses.write import bulk_record
    from survey.models import current_hour

    rng = np.random.default_rng(seed)
    questions = list(survey.questions.all())
    start = current_hour() - timedelta(hours=hours - 1)
    for hour in range(hours):
        columns = [
            q.design.simulate(rng.random(per_hour) < rate, rng)
            for q, rate in zip(questions, rates, strict=True)
        ]
        reports = [
            {q.id: int(column[i]) for q, column in zip(questions, columns, strict=True)}
            for i in range(per_hour)
        ]
        bulk_record(survey, reports, simulated=True, hour=start + timedelta(hours=hour))
