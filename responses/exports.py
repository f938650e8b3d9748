"""The randomized responses as a file: one row per submission, one column per question,
in the codebook's column order (:mod:`survey.codebook`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from django.db.models import Count

from responses.batch import parse_key
from responses.models import INBOXES, AnswerPattern
from survey.codebook import question_columns
from survey.models import Question, Survey
from survey.spreadsheets import csv_text


def response_counts(survey: Survey) -> Counter[tuple[int, str]]:
    """``{(round, answer pattern key): real submissions}``, sealed and current together."""
    counts: Counter[tuple[int, str]] = Counter()
    sealed = AnswerPattern.objects.filter(survey=survey, simulated=False)
    for round_, key, n in sealed.values_list("round", "key", "count").iterator(chunk_size=2000):
        counts[round_, key] += n
    for inbox in INBOXES:
        current = (
            inbox.objects.filter(survey=survey, simulated=False)
            .values_list("round", "reports")
            .annotate(n=Count("receipt"))
            .order_by()
        )
        for round_, key, n in current:
            counts[round_, key] += n
    return counts


class Skipped:
    """A report of "prefer not to answer": empty in the CSV like an unasked question, but
    told apart (and labelled) in the SPSS and Stata files."""

    def __repr__(self) -> str:
        return "SKIPPED"


SKIPPED = Skipped()


def export_columns(survey: Survey) -> list[tuple[str, Question, bool]]:
    """(column name, question, is it the arm column) in file order: a question with arms
    has its 0/1 report in ``q<k>`` and the arm its device drew in ``q<k>_arm``."""
    columns = []
    for name, question in question_columns(survey):
        columns.append((name, question, False))
        if question.design.has_arms:
            columns.append((arm_column(name), question, True))
    return columns


def arm_column(name: str) -> str:
    return f"{name}_arm"


def report_rows(survey: Survey) -> Iterator[list]:
    """One row per real (not simulated) submission: its round and its report to each
    question in column order, :data:`SKIPPED` for a skip, ``None`` for a question it did
    not answer.

    Sealed submissions exist only as counts of identical answers, so the rows come
    sorted by round and answers: their order says nothing about anyone's arrival.
    """
    columns = export_columns(survey)
    rows = []
    for (round_, key), n in response_counts(survey).items():
        values = parse_key(key)
        row = [round_, *(_cell(values, q, arm) for _, q, arm in columns)]
        rows.append((row, n))
    rows.sort(
        key=lambda item: [(not isinstance(v, int), v if isinstance(v, int) else 0) for v in item[0]]
    )
    for row, n in rows:
        for _ in range(n):
            yield row


def _report(values: dict[int, int | None], question_id: int) -> int | Skipped | None:
    if question_id not in values:
        return None
    value = values[question_id]
    return SKIPPED if value is None else value


def _cell(values: dict[int, int | None], question: Question, arm: bool) -> int | Skipped | None:
    """A question's cell: its report, or for a design with arms (stored as one number,
    see the design's ``decode``) the answer or, in the arm column, the arm."""
    report = _report(values, question.id)
    if not isinstance(report, int) or not question.design.has_arms:
        return report
    return question.design.decode(report)[0 if arm else 1]


def response_rows(survey: Survey) -> Iterator[list]:
    """The header, then one row per real submission: its round and its report to each
    question (and the arm of a design with arms), empty for a skip or a question it did
    not answer."""
    yield ["round", *(name for name, _, _ in export_columns(survey))]
    for row in report_rows(survey):
        yield [v if isinstance(v, int) else "" for v in row]


def responses_csv(survey: Survey) -> str:
    return csv_text(response_rows(survey))
