"""Randomized responses collected offline, imported from a CSV file (the export's
columns): checked whole first, stored all or nothing.

Shared by the API, the researcher pages and the ``import_responses`` command, so that
all three accept exactly the same files.
"""

from __future__ import annotations

import csv
import io
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import IO

from django.conf import settings
from django.db import connection, transaction

from estimator.designs import IMPOSSIBLE_REPORT
from responses.exports import arm_column, export_columns
from responses.models import INBOXES, hour_tables
from responses.write import design_version_now, hold_arrivals, inbox_rows, start_import
from survey.models import Question, Survey

MAX_REPORTED_ERRORS = 50
# Answers per write transaction of an import (rows × questions): short enough that a
# respondent waiting for SQLite's single write lock waits a moment only.
IMPORT_BATCH_ANSWERS = 2000
# The longest pause between two retries of SQLite's busy handler (sqlite3_busy_timeout).
SQLITE_RETRY_SECONDS = 0.1


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


def import_columns(survey: Survey) -> dict[str, Question]:
    """Column name → question, as the export writes them: a design with arms has its
    0/1 report in ``q<k>`` and its arm in ``q<k>_arm``."""
    return {name: q for name, q, _ in export_columns(survey)}


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
    values, errors, arms = {}, [], {}
    for name, cell in zip(header, row, strict=True):
        question = columns.get(name)
        if question is None:
            continue
        cell = cell.strip()
        if question.design.has_arms and name == arm_column(_column_of(columns, question)):
            arms[question.id] = (name, cell)
            continue
        if not cell:
            continue  # not answered (as the export writes it)
        try:
            values[question.id] = check_cell(question, cell)
        except ValueError as error:
            errors.append(f"{name} {error}")
    for qid, (name, cell) in arms.items():
        if qid not in values:
            if cell:
                errors.append(f"{name} must be empty when the question has no report")
            continue
        if cell not in ("0", "1"):
            errors.append(f"{name} must be the arm, 0 or 1, beside a report; got {cell!r}")
            values.pop(qid)
            continue
        question = next(q for q in columns.values() if q.id == qid)
        try:
            values[qid] = question.design.encode(int(cell), values[qid])
        except ValueError as error:  # e.g. a direct answer outside a number's bounds
            errors.append(f"{_column_of(columns, question)} on arm {cell}: {error}")
            values.pop(qid)
    return values, errors


def _column_of(columns: dict[str, Question], question: Question) -> str:
    """The report column of a question (the first column that names it)."""
    return next(name for name, q in columns.items() if q.id == question.id)


WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,9}")


def check_cell(question: Question, cell: str) -> int:
    """A CSV cell as a report the question's design can emit (its ``check_report``
    decides), else a ValueError saying what the column takes."""
    try:
        if not WHOLE_NUMBER.fullmatch(cell):
            raise ValueError(cell)
        if question.design.has_arms:  # the report alone: its arm has a column of its own
            return _on_some_arm(question.design, int(cell))
        return question.design.check_report(int(cell))
    except ValueError:
        shown = cell if len(cell) <= 40 else cell[:40] + "…"
        raise ValueError(f"must be {_what_column_takes(question)}, got {shown!r}") from None


def _on_some_arm(design, report: int) -> int:
    """A report that some arm of the design can make (the arm column then says which,
    and the pair is checked once both are read)."""
    for arm in range(design.arms):
        try:
            design.encode(arm, report)
            return report
        except ValueError:
            continue
    raise ValueError(report)


def _what_column_takes(question: Question) -> str:
    design = question.design
    outputs = design.output_description()
    values = outputs.get("values", ())
    if outputs["type"] != "options":
        taken = (
            f"a whole number from {outputs['min_report']} to {outputs['max_report']} (the "
            f"bounds {outputs['lower']}…{outputs['upper']} widened by the farthest the "
            f"design's noise reaches with probability at least {IMPOSSIBLE_REPORT:g})"
        )
    elif question.options:
        taken = f"an option index from {values[0]} to {values[-1]} (0 = {question.options[0]!r})"
    elif design.sends_one_bit:
        taken = "0 or 1 (the reported bit)"
    else:
        taken = " or ".join(map(str, values)) + " (1 = yes)"
    if "direct_shift" in outputs:  # a number's split ballot
        taken += (
            f", or on the direct ballot (arm 1) the answer as given, from {design.lower} "
            f"to {design.upper}"
        )
    return taken


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
    moment at most (SQLite has one writer at a time). The first batch checks, with the
    write lock held, that the questions are still those the file was checked against;
    from then on the survey has answers and its questions are frozen. If a batch fails,
    the batches already stored are removed again before the error propagates.

    ``max_answers`` (rows × questions) defaults to ``settings.MAX_IMPORT_ANSWERS``; pass
    0 for no limit. ``on_batch(stored, total)`` is called after each batch (progress).
    """
    columns = import_columns(survey)
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
    batch.finish()
    return batch.stored


class ImportBatches:
    """Stores an import batch by batch as current-hour rows of one import (the seal
    leaves them alone until the import has finished), and can take it all back."""

    def __init__(self, survey: Survey, design_version: int) -> None:
        self.survey = survey
        self.design_version = design_version
        self.marker = start_import(survey)
        self.hour = self.marker.started_hour
        self.stored = 0

    def store(self, reports: list[dict[int, int | None]]) -> None:
        """One batch in one short transaction. The rows are built before it starts, so
        the lock is held only while the database writes."""
        tables = hour_tables(self.hour)
        rows = list(
            inbox_rows(self.survey, reports, simulated=False, hour=self.hour, batch=self.marker.pk)
        )
        started = time.monotonic()
        with transaction.atomic():
            hold_arrivals(tables)
            if design_version_now(self.survey.pk) != self.design_version:
                raise ImportRejected(
                    [LineError(1, "the survey's questions changed during the import; try again")]
                )
            tables.inbox.objects.bulk_create(rows)
        held = time.monotonic() - started
        self.stored += len(rows)
        if connection.vendor == "sqlite":
            # SQLite has one writer, and a respondent waiting for it retries every 100 ms
            # at most (its busy handler): leave the lock free at least that long, and as
            # long as this batch held it, so that the respondent surely gets its turn.
            time.sleep(max(held, SQLITE_RETRY_SECONDS))

    def finish(self) -> None:
        """Every row is stored: from now on the seal may seal them."""
        self.marker.delete()

    def undo(self) -> None:
        """Remove every row stored so far (none was sealed: the marker kept them)."""
        with transaction.atomic():
            for inbox in INBOXES:
                inbox.objects.filter(batch=self.marker.pk).delete()
            self.marker.delete()
        self.stored = 0
