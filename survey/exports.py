"""Data in and out of a survey: responses CSV, codebook, estimates CSV, CSV import.

Shared by the researcher pages, the API and the management commands, so that all three
produce and accept exactly the same files. Columns are named by question position
(``q1``, ``q2``, …), which is what lets an export be imported into another survey with
the same designs.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby

from estimator.analysis import SurveyResults, json_epsilon
from survey.models import Answer, Question, Survey, bulk_record

CODEBOOK_FORMAT = "deniable-codebook/1"
MAX_REPORTED_ERRORS = 50
ESTIMATE_COLUMNS = [
    "question",
    "text",
    "n",
    "n_simulated",
    "yes_count",
    "raw_yes_rate",
    "estimate",
    "estimate_unbiased",
    "std_error",
    "ci_low",
    "ci_high",
    "level",
    "method",
    "epsilon",
]


def column_name(position: int) -> str:
    return f"q{position + 1}"


def question_columns(survey: Survey) -> list[tuple[str, Question]]:
    return [(column_name(i), q) for i, q in enumerate(survey.questions.all())]


def design_json(question: Question) -> dict:
    """A question's design as the API takes it: ``{"name": …, **parameters}``."""
    return {"name": question.design_name, **question.design.params()}


def question_codebook(column: str, question: Question) -> dict:
    design = question.design
    return {
        "column": column,
        "question_id": question.id,
        "text": question.text,
        "kind": question.kind,
        "design": design_json(question),
        "values": {str(v): ("reported yes" if v else "reported no") for v in design.output_values},
        "p_yes_given_1": design.p_yes_given_1,
        "p_yes_given_0": design.p_yes_given_0,
        "t": design.t,
        "c": design.c,
        "epsilon": json_epsilon(design.epsilon),
        "no_privacy": math.isinf(design.epsilon),
    }


def codebook(survey: Survey) -> dict:
    """Every design parameter needed to re-analyse the responses CSV elsewhere.

    Its top level has the shape ``POST /api/surveys/`` accepts, so posting a codebook
    creates a new survey with identical designs (for an import).
    """
    epsilon_total = survey.epsilon_total
    return {
        "format": CODEBOOK_FORMAT,
        "title": survey.title,
        "description": survey.description,
        "mode": survey.mode,
        "epsilon_total": json_epsilon(epsilon_total),
        "no_privacy": math.isinf(epsilon_total),
        "rows": "one row per submission, in random order; simulated answers are excluded",
        "columns": {
            "round": "the round the submission belongs to (classroom rounds; 1 otherwise)",
            "q<k>": "the randomized report to the k-th question: 1 = yes, 0 = no",
        },
        "estimator": "q_hat = (mean(column) - c) / t; P(report yes | true x) = c + t * x",
        "questions": [question_codebook(col, q) for col, q in question_columns(survey)],
    }


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


def estimates_csv(results: SurveyResults) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=ESTIMATE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in results.as_dict()["questions"]:
        writer.writerow({key: "" if row[key] is None else row[key] for key in ESTIMATE_COLUMNS})
    return out.getvalue()


@dataclass(frozen=True)
class LineError:
    line: int
    message: str

    def as_dict(self) -> dict:
        return {"line": self.line, "message": self.message}

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class ImportRejected(Exception):
    """The CSV has errors; nothing was stored. ``errors`` name lines and columns."""

    def __init__(self, errors: list[LineError]):
        self.errors = errors
        shown = "; ".join(map(str, errors[:3]))
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        super().__init__(f"{len(errors)} error(s), nothing imported: {shown}{more}")


def parse_responses(survey: Survey, text: str) -> list[dict[int, int]]:
    """Validate a responses CSV against ``survey``'s questions; every row or none.

    The header must name every question column (``q1`` … ``qk``); a ``round`` column is
    allowed and ignored (imported answers join the current round). Raises
    :class:`ImportRejected` listing every bad line (up to a limit).
    """
    columns = dict(question_columns(survey))
    if not columns:
        raise ImportRejected([LineError(1, "this survey has no questions to import into")])
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header = [name.strip() for name in next(reader, [])]
    header_errors = _header_errors(header, columns)
    if header_errors:
        raise ImportRejected([LineError(1, message) for message in header_errors])
    reports, errors = [], []
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        values, row_errors = _parse_row(header, row, columns)
        errors += [LineError(reader.line_num, message) for message in row_errors]
        reports.append(values)
        if len(errors) >= MAX_REPORTED_ERRORS:
            break
    if errors:
        raise ImportRejected(errors)
    if not reports:
        raise ImportRejected([LineError(2, "the file has a header but no rows")])
    return reports


def _header_errors(header: list[str], columns: dict[str, Question]) -> list[str]:
    if not header:
        return ["the file is empty: expected a header row such as " + ",".join(columns)]
    errors = []
    if missing := [name for name in columns if name not in header]:
        errors.append(f"missing column(s) {', '.join(missing)}")
    if unknown := [name for name in header if name not in columns and name != "round"]:
        known = ", ".join(["round", *columns])
        errors.append(f"unknown column(s) {', '.join(unknown)}; this survey has {known}")
    if len(set(header)) != len(header):
        errors.append("a column name appears twice")
    return errors


def _parse_row(
    header: list[str], row: list[str], columns: dict[str, Question]
) -> tuple[dict[int, int], list[str]]:
    if len(row) != len(header):
        return {}, [f"expected {len(header)} values, found {len(row)}"]
    values, errors = {}, []
    for name, cell in zip(header, row, strict=True):
        question = columns.get(name)
        if question is None:
            continue
        allowed = question.design.output_values
        cell = cell.strip()
        if cell not in {str(v) for v in allowed}:
            choices = " or ".join(map(str, allowed))
            errors.append(f"{name} must be {choices} (a randomized report), got {cell!r}")
        else:
            values[question.id] = int(cell)
    return values, errors


def import_responses(survey: Survey, text: str) -> int:
    """Parse, validate and store (one transaction) randomized responses from a CSV."""
    reports = parse_responses(survey, text)
    return bulk_record(survey, reports, simulated=False)
