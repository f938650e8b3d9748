"""The randomized responses as a file: one row per submission, one column per question,
in the codebook's column order (:mod:`survey.codebook`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from django.db.models import Count

from responses.batch import parse_key
from responses.models import INBOXES, AnswerPattern
from survey.codebook import question_columns
from survey.models import Survey
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


def response_rows(survey: Survey) -> Iterator[list]:
    """The header, then one row per real (not simulated) submission: its round and its
    report to each question, empty for a skip or a question it did not answer.

    Sealed submissions exist only as counts of identical answers, so the rows come
    sorted by round and answers: their order says nothing about anyone's arrival.
    """
    columns = question_columns(survey)
    yield ["round", *(name for name, _ in columns)]
    counts = response_counts(survey)
    rows = []
    for (round_, key), n in counts.items():
        values = parse_key(key)
        row = [round_, *(values.get(q.id) for _, q in columns)]
        rows.append((row, n))
    rows.sort(key=lambda item: [(v is None, v or 0) for v in item[0]])
    for row, n in rows:
        shown = ["" if v is None else v for v in row]
        for _ in range(n):
            yield shown


def responses_csv(survey: Survey) -> str:
    return csv_text(response_rows(survey))
