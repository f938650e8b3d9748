"""The randomized responses as SPSS (``.sav``) and Stata (``.dta``) files: the rows and
columns of the CSV export (:mod:`responses.exports`), with each question's text as its
variable label, its options (or yes/no) as value labels, a skip labelled "skipped" and
declared missing, and the design spelled out, so the file can be analysed without the
codebook at hand.
"""

from __future__ import annotations

import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyreadstat

from estimator.designs import json_epsilon
from responses.exports import SKIPPED, arm_column, export_columns, report_rows
from survey.codebook import design_json, question_codebook, question_columns
from survey.models import Question, Survey

SHUFFLED_NOTE = (
    " Questions were shown in a random order on each device; columns keep the survey's order."
)
SKIPPED_LABEL = "skipped (prefer not to answer)"
# The arm column of a design with arms: which set of chance devices the device drew.
ARM_LABEL = "%s: the arm its device drew before randomizing (0 or 1)"
# Stata's extended missing value for a skip: ``.a``.
STATA_SKIP = "a"
# Stata keeps at most 80 bytes of a variable or data set label.
STATA_LABEL_MAX = 80
# SPSS notes are lines of at most 80 bytes.
SPSS_NOTE_LINE = 80


def design_summary(question: Question) -> str:
    """``forced_response(p_truth=0.5, p_yes=0.5), epsilon=1.0986``: enough to recognise
    the design; the codebook and the SPSS notes hold everything."""
    design = design_json(question)
    name = design.pop("name")
    params = ", ".join(f"{k}={_short(v)}" for k, v in design.items())
    epsilon = json_epsilon(question.design.epsilon)
    said = "infinite (no privacy)" if epsilon is None else f"{epsilon:.4g}"
    shuffled = "; options shuffled" if question.shuffle_options else ""
    if question.direct_share is not None:
        shuffled += f"; split ballot, {question.direct_share:g} asked directly (arm 1)"
    if not question.design.randomized:
        return f"asked directly, no randomization{shuffled}"
    return f"{name}({params}), epsilon={said}{shuffled}"


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    return str(value)


def skip_code(question: Question) -> int:
    """A code no report can take, for SPSS's user-missing "skipped": one below the
    smallest report the design emits."""
    outputs = question.design.output_description()
    lowest = outputs["min_report"] if outputs["type"] == "integers" else min(outputs["values"])
    return lowest - 1


def value_labels(question: Question, column: str) -> dict[int, str]:
    """The codebook's labels of the reports (options, "reported yes"/"reported no" for a
    randomized yes/no, "yes"/"no" asked directly); none for numbers."""
    values = question_codebook(column, question).get("values", {})
    if question.kind == "binary" and not question.design.randomized:
        values = {"0": "no", "1": "yes"}
    return {int(k): label for k, label in values.items()}


def _frame(survey: Survey, skipped: Callable[[Question], object]) -> pd.DataFrame:
    columns = export_columns(survey)
    names = ["round", *(name for name, _, _ in columns)]
    questions = [None, *(q for _, q, _ in columns)]
    data = [
        [skipped(q) if v is SKIPPED else v for v, q in zip(row, questions, strict=True)]
        for row in report_rows(survey)
    ]
    frame = pd.DataFrame(data, columns=names, dtype=object)
    return frame.where(frame.notna(), None)


def _write(writer: Callable, frame: pd.DataFrame, suffix: str, **options) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"export{suffix}"
        writer(frame, str(path), **options)
        return path.read_bytes()


def responses_sav(survey: Survey) -> bytes:
    """The export as an SPSS system file."""
    columns = question_columns(survey)
    frame = _frame(survey, skip_code).astype(float)
    labels = {"round": "Round of the survey (classroom rounds; 1 otherwise)"}
    value_label_map, missing, notes = {}, {}, [_file_note(survey)]
    for name, q in columns:
        labels[name] = q.text
        code = skip_code(q)
        value_label_map[name] = {**value_labels(q, name), code: SKIPPED_LABEL}
        missing[name] = [code]
        notes.append(f"{name}: {design_summary(q)}. {_reanalysis(q, name)}")
        if q.design.has_arms:
            arm = arm_column(name)
            labels[arm] = ARM_LABEL % name
            value_label_map[arm] = {**dict(enumerate(q.design.arm_names)), code: SKIPPED_LABEL}
            missing[arm] = [code]
    return _write(
        pyreadstat.write_sav,
        frame,
        ".sav",
        file_label=_file_label(survey),
        column_labels=labels,
        variable_value_labels=value_label_map,
        missing_ranges=missing,
        variable_measure={
            name: "scale" if q.kind == "number" and not arm else "nominal"
            for name, q, arm in export_columns(survey)
        },
        note=[line for note in notes for line in _note_lines(note)],
    )


def responses_dta(survey: Survey) -> bytes:
    """The export as a Stata 15 data set: a skip is ``.a``, labelled "skipped"; the
    design follows the question text in each variable label, as far as Stata's 80
    characters reach (the codebook holds it whole)."""
    columns = question_columns(survey)
    frame = _frame(survey, lambda q: STATA_SKIP)
    labels = {"round": "Round of the survey"}
    value_label_map, missing = {}, {}
    for name, q in columns:
        labels[name] = _clip(f"{q.text} [{design_summary(q)}]")
        value_label_map[name] = {**value_labels(q, name), STATA_SKIP: SKIPPED_LABEL}
        missing[name] = [STATA_SKIP]
        if q.design.has_arms:
            arm = arm_column(name)
            labels[arm] = _clip(ARM_LABEL % name)
            value_label_map[arm] = {
                **dict(enumerate(q.design.arm_names)),
                STATA_SKIP: SKIPPED_LABEL,
            }
            missing[arm] = [STATA_SKIP]
    return _write(
        pyreadstat.write_dta,
        frame,
        ".dta",
        file_label=_clip(_file_label(survey)),
        column_labels=labels,
        variable_value_labels=value_label_map,
        missing_user_values=missing,
    )


def _note_lines(note: str) -> list[str]:
    """SPSS keeps its notes (documents) as lines of at most 80 bytes; a UTF-8 character
    takes at most 4."""
    width = SPSS_NOTE_LINE if note.isascii() else SPSS_NOTE_LINE // 4
    return textwrap.wrap(note, width, break_on_hyphens=False) or [""]


def _clip(text: str) -> str:
    """At most Stata's 80 bytes (of UTF-8), never cutting a character in half."""
    encoded = text.encode()
    if len(encoded) <= STATA_LABEL_MAX:
        return text
    return encoded[: STATA_LABEL_MAX - 3].decode(errors="ignore") + "..."


def _file_label(survey: Survey) -> str:
    return f"Deniable survey {survey.id}: {survey.title}"


def _file_note(survey: Survey) -> str:
    epsilon = json_epsilon(survey.epsilon_total)
    total = "infinite (no privacy)" if epsilon is None else f"{epsilon:.4g}"
    return (
        f"Randomized responses of the Deniable survey {survey.id} ({survey.title}); "
        f"simulated answers left out; total epsilon {total}. Values are the reports, not "
        "the true answers: estimate prevalences through each question's design (the "
        "codebook.json download holds every parameter)."
        + (SHUFFLED_NOTE if survey.shuffle_questions else "")
    )


def _reanalysis(question: Question, column: str) -> str:
    said = question_codebook(column, question).get("reanalysis")
    return "" if not said or not question.design.randomized else f"Reanalysis: {said}"
