"""Data in and out of a survey: responses CSV, codebook, estimates CSV, CSV import.

Shared by the researcher pages, the API and the management commands, so that all three
produce and accept exactly the same files. Columns are named by question position
(``q1``, ``q2``, …), which is what lets an export be imported into another survey with
the same designs.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import groupby, islice
from typing import IO

from django.conf import settings
from django.db import connection, transaction

from estimator.designs import IMPOSSIBLE_REPORT, Design, json_epsilon
from survey.models import Answer, Question, Submission, Survey, Tally, current_hour

CODEBOOK_FORMAT = "deniable-codebook/1"
MAX_REPORTED_ERRORS = 50
# Answers per write transaction of an import (rows × questions): short enough that a
# respondent waiting for SQLite's single write lock waits a moment only.
IMPORT_BATCH_ANSWERS = 2000
# The longest pause between two retries of SQLite's busy handler (sqlite3_busy_timeout).
SQLITE_RETRY_SECONDS = 0.1


def column_name(position: int) -> str:
    return f"q{position + 1}"


def question_columns(survey: Survey) -> list[tuple[str, Question]]:
    return [(column_name(i), q) for i, q in enumerate(survey.questions.all())]


def design_json(question: Question) -> dict:
    """A question's design as the API takes it: ``{"name": …, **parameters}``."""
    return {"name": question.design_name, **question.design.params()}


def question_codebook(column: str, question: Question) -> dict:
    """What a column holds and everything needed to re-analyse it; the keys the API takes
    (``text``, ``kind``, ``options``, ``design`` and the confirmations) come first, so that
    posting the codebook recreates the question."""
    design = question.design
    epsilon = design.epsilon
    return {
        "text": question.text,
        "kind": question.kind,
        "options": list(question.options),
        "design": design_json(question),
        "not_sensitive": not design.randomized,
        "allow_no_privacy": design.randomized and math.isinf(epsilon),
        "column": column,
        "question_id": question.id,
        "epsilon": json_epsilon(epsilon),
        "no_privacy": math.isinf(epsilon),
        "direct": not design.randomized,
        "outputs": design.output_description(),
        # Wording changed after answers arrived (old text, new text, hour): the design
        # stayed frozen, but a reader of the data should know what each respondent saw.
        "wording_history": question.wording_history(),
        **_KIND_CODEBOOK[question.kind](question, design),
    }


def _matrix_codebook(design: Design, labels: list[str]) -> dict:
    """A design whose response matrix is M = t·I + c·1ᵀ (every binary and choice design):
    report j is forced with probability c_j (any off-diagonal entry of row j)."""
    matrix = design.response_matrix
    m = len(matrix)
    forced = [float(matrix[j, (j + 1) % m]) for j in range(m)]
    return {
        "values": {str(i): label for i, label in enumerate(labels)},
        "response_matrix": {
            "rows": "the report (0 … m−1)",
            "columns": "the true value (0 … m−1)",
            "values": matrix.tolist(),
        },
        "t": float(design.t),
        "forced": forced,
        "rrreg": _rrreg_call(design),
    }


def _rrreg_call(design: Design) -> str | None:
    """R's RRreg reads any design with M = t·I + c·1ᵀ and t > 0 as its forced-response
    model "FR": report j forced with probability c_j, the truth told with 1 − Σc = t. A
    binary design with t < 0 (Warner's p < ½, crosswise p < ½) becomes one by flipping
    the reports."""
    if not design.randomized:
        return None
    matrix, response = design.response_matrix, "response"
    if design.t < 0:
        matrix, response = matrix[::-1], "1 - response"
    m = len(matrix)
    p = ", ".join(f"{matrix[j, (j + 1) % m]:.12g}" for j in range(m))
    return f'RRreg::RRuni({response}, model = "FR", p = c({p}))'


def _binary_codebook(question: Question, design: Design) -> dict:
    return {
        **_matrix_codebook(design, ["reported no", "reported yes"]),
        "p_yes_given_1": design.p_yes_given_1,
        "p_yes_given_0": design.p_yes_given_0,
        "c": design.c,
        "reanalysis": "q_hat = (mean(column) - c) / t, since P(report 1 | true x) = c + t * x",
    }


def _choice_codebook(question: Question, design: Design) -> dict:
    return {
        **_matrix_codebook(design, list(question.options)),
        "c": [float(v) for v in design.c],
        "reanalysis": "pi_hat[j] = (share of reports j - c[j]) / t for each option j, since "
        "P(report j | true option i) = c[j] + t * [i == j]; or solve "
        "response_matrix @ pi = report shares",
    }


def _number_codebook(question: Question, design: Design) -> dict:
    alpha = getattr(design, "alpha", None)
    return {
        "lower": design.lower,
        "upper": design.upper,
        "alpha": alpha,
        "noise": "two-sided geometric: P(noise = z) = (1 - alpha) / (1 + alpha) * alpha^|z|, "
        "alpha = exp(-epsilon / (upper - lower)); none when asked directly",
        "noise_variance": design.noise_variance,
        "reanalysis": "mean(column) is unbiased for the mean of the true values clipped to "
        "[lower, upper]; use a t interval from the sample variance of the column",
    }


_KIND_CODEBOOK = {
    Question.Kind.BINARY: _binary_codebook,
    Question.Kind.CHOICE: _choice_codebook,
    Question.Kind.NUMBER: _number_codebook,
}


def codebook(survey: Survey) -> dict:
    """Every design parameter needed to re-analyse the responses CSV elsewhere.

    Its top level has the shape ``POST /api/surveys/`` accepts, so posting a codebook
    creates a new survey with identical designs (for an import).
    """
    privacy = survey.privacy
    return {
        "format": CODEBOOK_FORMAT,
        "title": survey.title,
        "description": survey.description,
        "mode": survey.mode,
        "language": survey.language,
        "epsilon_total": json_epsilon(privacy.epsilon_total),
        "no_privacy": math.isinf(privacy.epsilon_total),
        "asked_directly": len(privacy.direct),
        "rows": "one row per submission, in random order; simulated answers are excluded",
        "columns": {
            "round": "the round the submission belongs to (classroom rounds; 1 otherwise)",
            "q<k>": "the randomized report to the k-th question: 0/1 for a binary question "
            "(1 = yes), the option index (0 = the first option) for a choice question, a "
            "whole number for a number question; empty when not answered",
        },
        "estimator": "per question, see its reanalysis; epsilon_total is the sum of epsilon "
        "over randomized questions (directly asked ones are left out)",
        "csv_text_cells": (
            "In CSV files, a text cell (e.g. a question's text in the estimates CSV) that "
            "starts with =, +, -, @, a tab or a carriage return has an apostrophe (') "
            "added in front, so that spreadsheets do not run it as a formula; strip it to "
            "get the text, which this codebook gives exactly. Number cells are never "
            "changed; floats are written to 12 significant digits."
        ),
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


class ImportTooLarge(Exception):
    """The file is over the size or row limit; nothing was stored (HTTP 413)."""


def spool(stream: IO[bytes], limit: int | None = None) -> IO[bytes]:
    """Copy a request body into a temporary file (in memory only while small), refusing
    it once it passes ``limit`` bytes (default ``settings.MAX_IMPORT_BYTES``)."""
    limit = settings.MAX_IMPORT_BYTES if limit is None else limit
    # Returned open (the caller reads it twice); closed when the request is done with it.
    copy = tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE)  # noqa: SIM115
    size = 0
    while chunk := stream.read(64 * 1024):
        size += len(chunk)
        if size > limit:
            copy.close()
            raise ImportTooLarge(too_large_message(limit))
        copy.write(chunk)
    copy.seek(0)
    return copy


def too_large_message(limit: int) -> str:
    return (
        f"The file is larger than the {limit / 2**20:g} MiB ({limit} bytes) an import may "
        "be; nothing was imported. Split it and import the parts one after the other."
    )


def read_rows(
    binary: IO[bytes], columns: dict[str, Question]
) -> Iterator[tuple[int, dict[int, int], list[str]]]:
    """``(line, {question id: report}, errors)`` for each non-blank row of a responses
    CSV, read from the start of ``binary`` a line at a time (never the whole file).

    A bad header raises :class:`ImportRejected`. Any line ending works (``\\n``,
    ``\\r\\n``, a lone ``\\r``); a file that cannot be read as CSV or UTF-8 ends with one
    error row.
    """
    binary.seek(0)
    text = io.TextIOWrapper(binary, encoding="utf-8-sig", newline="")
    reader = csv.reader(text)
    try:
        header = [name.strip() for name in next(reader, [])]
        if header_errors := _header_errors(header, columns):
            raise ImportRejected([LineError(1, message) for message in header_errors])
        for row in reader:
            if any(cell.strip() for cell in row):
                yield (reader.line_num, *_parse_row(header, row, columns))
    except csv.Error as error:
        yield max(reader.line_num, 1), {}, [f"not readable as CSV: {error}"]
    except UnicodeDecodeError:
        yield reader.line_num + 1, {}, ["the file is not UTF-8 text (save it as CSV UTF-8)"]
    finally:
        text.detach()  # leave ``binary`` open for the second reading


def row_limit(n_questions: int, max_answers: int | None = None) -> int | None:
    """How many rows an import into a survey of ``n_questions`` questions may have
    (None: no limit). The limit counts answers, which is what an import's time and a
    worker's timeout depend on."""
    max_answers = settings.MAX_IMPORT_ANSWERS if max_answers is None else max_answers
    return max_answers // max(n_questions, 1) if max_answers else None


def check_responses(binary: IO[bytes], columns: dict[str, Question], max_rows: int | None) -> int:
    """Read the whole file once, storing nothing; the number of rows if every one is
    valid. Raises :class:`ImportRejected` listing bad lines (up to a limit), or
    :class:`ImportTooLarge` past ``max_rows``."""
    if not columns:
        raise ImportRejected([LineError(1, "this survey has no questions to import into")])
    errors, count = [], 0
    for line, _, row_errors in read_rows(binary, columns):
        count += 1
        if max_rows is not None and count > max_rows:
            raise ImportTooLarge(
                f"The file has more than the {max_rows:,} rows an import into this survey may "
                "have; nothing was imported. Split it and import the parts one after the other."
            )
        errors += [LineError(line, message) for message in row_errors]
        if len(errors) >= MAX_REPORTED_ERRORS:
            break
    if errors:
        raise ImportRejected(errors)
    if not count:
        raise ImportRejected([LineError(2, "the file has a header but no rows")])
    return count


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
        cell = cell.strip()
        if not cell:
            continue  # not answered (as the export writes it)
        try:
            values[question.id] = check_cell(question, cell)
        except ValueError as error:
            errors.append(f"{name} {error}")
    return values, errors


WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,9}")


def check_cell(question: Question, cell: str) -> int:
    """A CSV cell as a report the question's design can emit (its ``check_report``
    decides), else a ValueError saying what the column takes."""
    try:
        if not WHOLE_NUMBER.fullmatch(cell):
            raise ValueError(cell)
        return question.design.check_report(int(cell))
    except ValueError:
        shown = cell if len(cell) <= 40 else cell[:40] + "…"
        raise ValueError(f"must be {_what_column_takes(question)}, got {shown!r}") from None


def _what_column_takes(question: Question) -> str:
    outputs = question.design.output_description()
    if outputs["type"] != "options":
        return (
            f"a whole number from {outputs['min_report']} to {outputs['max_report']} (the "
            f"bounds {outputs['lower']}…{outputs['upper']} widened by the farthest the "
            f"design's noise reaches with probability at least {IMPOSSIBLE_REPORT:g})"
        )
    values = outputs["values"]
    if question.options:
        return f"an option index from {values[0]} to {values[-1]} (0 = {question.options[0]!r})"
    return " or ".join(map(str, values)) + " (1 = yes)"


def import_responses(
    survey: Survey,
    binary: IO[bytes],
    *,
    max_answers: int | None = None,
    on_batch: Callable[[int, int], None] | None = None,
) -> int:
    """Validate, then store, the randomized responses of a CSV file: all rows or none.

    The whole file is checked first without writing anything (a rejected file stores
    nothing). Rows are then stored in batches of about ``IMPORT_BATCH_ANSWERS`` answers,
    each its own short transaction, so that respondents answering meanwhile wait a
    moment at most (SQLite has one writer at a time). The first batch checks, under the
    survey row's lock, that the questions are still those the file was checked against;
    from then on the survey has answers and its questions are frozen. If a batch fails,
    the batches already stored are removed again before the error propagates.

    ``max_answers`` (rows × questions) defaults to ``settings.MAX_IMPORT_ANSWERS``; pass
    0 for no limit. ``on_batch(stored, total)`` is called after each batch (progress).
    """
    columns = dict(question_columns(survey))
    version = survey.design_version
    total = check_responses(binary, columns, row_limit(len(columns), max_answers))
    batch = ImportBatches(survey, version)
    try:
        rows = (values for _, values, _ in read_rows(binary, columns))
        while chunk := list(islice(rows, max(1, IMPORT_BATCH_ANSWERS // len(columns)))):
            batch.store(chunk)
            if on_batch:
                on_batch(batch.stored, total)
    except BaseException:
        batch.undo()
        raise
    return batch.stored


SUBMISSION_COLUMNS = ("submission_id", "survey_id", "round", "simulated", "received_hour")
ANSWER_COLUMNS = ("submission_id", "question_id", "value")


def insert_rows(cursor, model, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """One multi-row INSERT (far quicker than ``bulk_create``, which builds its SQL
    while the transaction holds the lock)."""
    placeholders = "(" + ", ".join(["%s"] * len(columns)) + ")"
    cursor.execute(
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) VALUES "
        + ", ".join([placeholders] * len(rows)),
        [item for row in rows for item in row],
    )


class ImportBatches:
    """Stores an import batch by batch, remembering enough to take it all back."""

    def __init__(self, survey: Survey, design_version: int) -> None:
        self.survey = survey
        self.design_version = design_version
        self.hour = current_hour()
        self.round = survey.current_round
        self.ids = bytearray()  # 16 bytes per stored submission id
        self.counts: Counter[tuple[int, int]] = Counter()

    @property
    def stored(self) -> int:
        return len(self.ids) // 16

    def store(self, reports: list[dict[int, int]]) -> None:
        """One batch in one short transaction. The statements are built before it
        starts, so the lock is held only while the database writes."""
        ids = [uuid.uuid4() for _ in reports]
        prep = functools.partial(Submission._meta.pk.get_db_prep_value, connection=connection)
        hour = connection.ops.adapt_datetimefield_value(self.hour)
        submissions = [(prep(sid), self.survey.pk, self.round, False, hour) for sid in ids]
        answers = [
            (prep(sid), question, value)
            for sid, values in zip(ids, reports, strict=True)
            for question, value in values.items()
        ]
        counts = Counter(item for values in reports for item in values.items())
        started = time.monotonic()
        with transaction.atomic(), connection.cursor() as cursor:
            if self.survey._locked_version() != self.design_version:
                raise ImportRejected(
                    [LineError(1, "the survey's questions changed during the import; try again")]
                )
            insert_rows(cursor, Submission, SUBMISSION_COLUMNS, submissions)
            insert_rows(cursor, Answer, ANSWER_COLUMNS, answers)
            Tally.add_counts(counts, round=self.round, simulated=False, hour=self.hour)
        held = time.monotonic() - started
        self.ids += b"".join(sid.bytes for sid in ids)
        self.counts.update(counts)
        if connection.vendor == "sqlite":
            # SQLite has one writer, and a respondent waiting for it retries every 100 ms
            # at most (its busy handler): leave the lock free at least that long, and as
            # long as this batch held it, so that the respondent surely gets its turn.
            time.sleep(max(held, SQLITE_RETRY_SECONDS))

    def undo(self) -> None:
        """Remove every submission stored so far and subtract its reports from the
        tallies (over whichever shards hold them: only the totals matter)."""
        ids = [uuid.UUID(bytes=bytes(self.ids[i : i + 16])) for i in range(0, len(self.ids), 16)]
        with transaction.atomic():
            for start in range(0, len(ids), IMPORT_BATCH_ANSWERS):
                part = ids[start : start + IMPORT_BATCH_ANSWERS]
                Answer.objects.filter(submission_id__in=part).delete()
                Submission.objects.filter(submission_id__in=part).delete()
            for (question_id, value), count in self.counts.items():
                Tally.subtract(question_id, value, count, round=self.round, hour=self.hour)
        self.ids.clear()
        self.counts.clear()
