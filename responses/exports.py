"""The randomized responses as a file: one row per submission, one column per question,
in the codebook's column order (:mod:`survey.exports`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from itertools import groupby

from responses.models import Answer
from survey.codebook import question_columns
from survey.models import Survey


def response_rows(survey: Survey) -> Iterator[list]:
    """The header, then one row per real (not simulated) submission.

    Ordered by the random submission id, so row order says nothing about arrival order.
    """
    columns = question_columns(survey)
    yield ["round", *(name for name, _ in columns)]
    answers = (
        Answer.objects.filter(submission__survey=survey, submission__simulated=False)
        .order_by("submission_id")
        .values_list("submission_id", "submission__round", "question_id", "value")
        .iterator(chunk_size=2000)
    )
    for _, group in groupby(answers, key=lambda row: row[0]):
        rows = list(group)
        by_question = {qid: value for _, _, qid, value in rows}
        yield [rows[0][1], *(by_question.get(q.id, "") for _, q in columns)]


def responses_csv(survey: Survey) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(response_rows(survey))
    return out.getvalue()
