"""Grouped counts for breakdowns, cross-tabs and regression: one GROUP BY each.

The maths of these analyses reads counts per combination of reports (a category of a
directly asked question and a randomized report; two randomized reports; a covariate
pattern and a report), never individual answers. The database joins the answers of the
questions involved on their submission and groups them, in one aggregate query, so
Python only ever sees one row per combination; where the answer patterns kept at write
time (:class:`survey.models.AnswerPattern`) account for every report, they are read
instead, so the cost does not grow with the respondents. Real and simulated answers count
together, as in the estimates (simulated respondents answer every question), and only
the survey's current round is read, as the dashboard does.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from django.db.models import Count, FilteredRelation, Q, Sum

from estimator.crosstab import crosstab
from estimator.disclosure import suppress_cells
from estimator.regression import design_matrix, fit
from survey.exports import question_columns
from survey.models import AnswerPattern, Question, Submission, Survey, Tally

RANDOMIZED_CATEGORICAL = (Question.Kind.BINARY, Question.Kind.CHOICE)
DIRECT_CATEGORICAL = (Question.Kind.BINARY, Question.Kind.CHOICE)


def joint_counts(
    survey: Survey, question_ids: Sequence[int], round: int | None = None
) -> Counter[tuple[int, ...]]:
    """``{(value of q1, value of q2, …): respondents}`` over the submissions of
    ``survey`` (current round unless given) that answered every one of ``question_ids``.

    From the answer patterns kept at write time when they account for every stored
    report (two small queries whatever the number of respondents), else from one
    GROUP BY over the answers joined on their submission (exact, but its cost grows
    with the respondents).
    """
    if not question_ids:
        raise ValueError("joint_counts needs at least one question")
    round = round or survey.current_round
    counts = _from_patterns(survey, question_ids, round)
    return counts if counts is not None else _from_answers(survey, question_ids, round)


def _from_patterns(survey: Survey, question_ids: Sequence[int], round: int):
    """Marginal counts from the pattern rows, or None when some stored submission is not
    among them (a write path that does not keep them): then every involved question's
    tallied reports outnumber the patterns."""
    patterns = AnswerPattern.objects.filter(survey=survey, round=round).values_list("key", "count")
    counts: Counter[tuple[int, ...]] = Counter()
    total = 0
    for key, n in patterns:
        total += n
        values = AnswerPattern.parse(key)
        if all(qid in values for qid in question_ids):
            counts[tuple(values[qid] for qid in question_ids)] += n
    tallied = list(
        Tally.objects.filter(question_id__in=question_ids, round=round)
        .values("question_id")
        .annotate(n=Sum("count"))
        .values_list("n", flat=True)
    )
    if any(n != total for n in tallied) or sum(counts.values()) != min(tallied, default=0):
        return None
    return counts


def _from_answers(survey: Survey, question_ids: Sequence[int], round: int):
    """One query: the submissions joined once per question to that question's answer,
    grouped by the answers' values."""
    joins = {
        f"q{i}": FilteredRelation("answers", condition=Q(answers__question_id=qid))
        for i, qid in enumerate(question_ids)
    }
    values = [f"q{i}__value" for i in range(len(question_ids))]
    rows = (
        Submission.objects.filter(survey=survey, round=round)
        .annotate(**joins)
        .filter(**{f"{value}__isnull": False for value in values})
        .values_list(*values)
        .annotate(n=Count("pk"))
        .order_by()
    )
    return Counter({tuple(row[:-1]): row[-1] for row in rows})


# --- The analyses the dashboard, the API and the exports share ------------------------------


class AnalysisError(ValueError):
    """A request the analysis cannot answer; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


def _question(survey: Survey, field: str, raw) -> Question:
    """The question of ``survey`` named by ``raw`` (an id), or an AnalysisError."""
    if isinstance(raw, bool) or raw in (None, ""):
        raise AnalysisError(field, f"give the id of a question of this survey as {field}")
    try:
        question_id = int(raw)
    except (TypeError, ValueError):
        raise AnalysisError(field, f"{field} must be a question id, got {raw!r}") from None
    question = next((q for q in survey.questions.all() if q.id == question_id), None)
    if question is None:
        raise AnalysisError(field, f"this survey has no question {question_id}")
    return question


def _randomized(survey: Survey, field: str, raw, kinds: tuple[str, ...]) -> Question:
    question = _question(survey, field, raw)
    if not question.design.randomized:
        raise AnalysisError(
            field,
            f"question {question.id} is asked directly: {field} must be a randomized question",
        )
    if question.kind not in kinds:
        raise AnalysisError(
            field,
            f"question {question.id} is a {question.kind} question; {field} must be "
            f"a randomized {' or '.join(kinds)} question",
        )
    return question


def _direct(survey: Survey, field: str, raw, kinds: tuple[str, ...]) -> Question:
    question = _question(survey, field, raw)
    if question.design.randomized:
        raise AnalysisError(
            field,
            f"question {question.id} is randomized: {field} must be a directly asked "
            f"({' or '.join(kinds)}) question",
        )
    if question.kind not in kinds:
        raise AnalysisError(
            field,
            f"question {question.id} is a {question.kind} question; {field} must be "
            f"a directly asked {' or '.join(kinds)} question",
        )
    return question


def categories(question: Question) -> list[str]:
    """What each report of a yes/no or choice question means, by its index."""
    return list(question.options) if question.kind == Question.Kind.CHOICE else ["No", "Yes"]


def _finite(value) -> float | None:
    """JSON has no NaN or infinity: both are sent as null (the docs say what null means)."""
    value = float(value)
    return value if math.isfinite(value) else None


def estimate_entry(question: Question, counts: Sequence[int], level: float, method: str) -> dict:
    """A randomized question's estimate from its report counts, as the estimates endpoint
    gives it: yes/no keys for a binary question, one entry per option for a choice one."""
    if question.kind == Question.Kind.BINARY:
        est = question.design.estimate(counts[1], sum(counts))
        low, high = est.ci(level, method) or (None, None)
        return {
            "n": est.n,
            "yes_count": est.yes_count,
            "raw_yes_rate": est.raw_yes_rate,
            "estimate": est.estimate,
            "estimate_unbiased": est.estimate_unbiased,
            "std_error": est.std_error,
            "ci_low": low,
            "ci_high": high,
            "contradicts_design": est.contradicts_design(level, method),
        }
    est = question.design.estimate(list(counts))
    options = []
    for j, text in enumerate(question.options):
        line = est.options[j]
        low, high = line.ci(level, method) or (None, None)
        options.append(
            {
                "index": j,
                "text": text,
                "count": counts[j],
                "raw_rate": line.raw_yes_rate,
                "estimate": float(est.estimate[j]) if est.n else None,
                "estimate_unbiased": float(est.estimate_unbiased[j]) if est.n else None,
                "std_error": float(est.std_errors[j]) if est.n else None,
                "ci_low": low,
                "ci_high": high,
            }
        )
    return {
        "n": est.n,
        "options": options,
        "contradicts_design": any(est.contradicts_design(level, method)) if est.n else False,
    }


def breakdown(survey: Survey, question_raw, by_raw, level: float, method: str) -> dict:
    """A randomized question's estimate per category of a directly asked question, with
    the cells that could single out a small group hidden (:func:`suppress_cells`).

    A hidden cell carries no numbers at all, and every hidden cell looks the same. The
    overall figure beside the cells is over the same respondents (those who answered
    both questions), so that total minus the shown cells is exactly the pooled hidden
    cells: at least k respondents in at least two cells.
    """
    question = _randomized(survey, "question", question_raw, RANDOMIZED_CATEGORICAL)
    by = _direct(survey, "by", by_raw, DIRECT_CATEGORICAL)
    reports = range(len(categories(question)))
    counts = joint_counts(survey, [by.id, question.id])
    labels = categories(by)
    cells = [[counts.get((i, r), 0) for r in reports] for i in range(len(labels))]
    k = survey.min_cell_count
    hidden = set(suppress_cells([sum(cell) for cell in cells], k=k))
    total = [sum(column) for column in zip(*cells, strict=True)] if cells else []
    entries = []
    for i, (label, cell) in enumerate(zip(labels, cells, strict=True)):
        entry = {"category": i, "text": label, "suppressed": i in hidden}
        if i not in hidden:
            entry.update(estimate_entry(question, cell, level, method))
        entries.append(entry)
    return {
        "survey": survey.id,
        "question": question.id,
        "text": question.text,
        "kind": question.kind,
        "by": by.id,
        "by_text": by.text,
        "min_cell_count": k,
        "level": level,
        "method": method,
        "overall": estimate_entry(question, total, level, method),
        "categories": entries,
    }


def crosstab_of(survey: Survey, a_raw, b_raw, level: float) -> dict:
    """The joint prevalences of two randomized questions (:func:`estimator.crosstab.crosstab`
    on their joint report counts), with phi and the odds ratio for two yes/no questions."""
    a = _randomized(survey, "a", a_raw, RANDOMIZED_CATEGORICAL)
    b = _randomized(survey, "b", b_raw, RANDOMIZED_CATEGORICAL)
    if a.id == b.id:
        raise AnalysisError("b", "a and b must be two different questions")
    rows, columns = categories(a), categories(b)
    counts = joint_counts(survey, [a.id, b.id])
    table = np.array(
        [[counts.get((i, j), 0) for j in range(len(columns))] for i in range(len(rows))]
    )
    if table.sum() == 0:
        raise AnalysisError("a", "no respondent has answered both questions yet")
    tab = crosstab(table, a.design.response_matrix, b.design.response_matrix, level)
    cells = [
        {
            "a": i,
            "b": j,
            "a_text": rows[i],
            "b_text": columns[j],
            "estimate": float(tab.estimate[i, j]),
            "estimate_unbiased": float(tab.estimate_unbiased[i, j]),
            "std_error": float(tab.std_error[i, j]),
            "ci_low": float(tab.ci_low[i, j]),
            "ci_high": float(tab.ci_high[i, j]),
        }
        for i in range(len(rows))
        for j in range(len(columns))
    ]
    return {
        "survey": survey.id,
        "a": a.id,
        "b": b.id,
        "a_text": a.text,
        "b_text": b.text,
        "a_options": rows,
        "b_options": columns,
        "n": int(table.sum()),
        "level": level,
        "cells": cells,
        "phi": _association(tab.phi),
        "odds_ratio": _association(tab.odds_ratio),
        "design_p_value": tab.design_p_value,
        "contradicts_design": bool(tab.contradicts_design),
    }


def _association(value) -> dict | None:
    if value is None:
        return None
    defined = not math.isnan(value.estimate)
    return {
        "estimate": _finite(value.estimate),
        "ci_low": _finite(value.ci_low),
        "ci_high": _finite(value.ci_high),
        "defined": defined,
    }


def regression(survey: Survey, outcome_raw, covariates_raw, level: float = 0.95) -> dict:
    """Logistic regression of a randomized yes/no question on directly asked covariates
    (:func:`estimator.regression.fit`), from the counts per (covariate pattern, report).

    Terms are named by the export's columns (``q2``, ``q3[Law]``) so that the same model
    fitted in R on the export names them alike: a choice covariate is dummy-coded against
    its first option, a yes/no or number covariate enters as its 0/1 or number.
    """
    outcome = _randomized(survey, "outcome", outcome_raw, (Question.Kind.BINARY,))
    if not isinstance(covariates_raw, list) or not covariates_raw:
        raise AnalysisError(
            "covariates",
            "covariates must be a list of one or more directly asked questions' ids (the "
            "prevalence alone is on the estimates page)",
        )
    covariates = [
        _direct(survey, "covariates", raw, DIRECT_CATEGORICAL + (Question.Kind.NUMBER,))
        for raw in covariates_raw
    ]
    if len({q.id for q in covariates}) < len(covariates):
        raise AnalysisError("covariates", "each covariate may be named only once")
    columns = {q.id: name for name, q in question_columns(survey)}
    counts = joint_counts(survey, [outcome.id, *(q.id for q in covariates)])
    patterns: dict[tuple, list[int]] = {}
    for (report, *values), n in counts.items():
        yes_n = patterns.setdefault(tuple(values), [0, 0])
        yes_n[0] += n if report == 1 else 0
        yes_n[1] += n
    if not patterns:
        raise AnalysisError("outcome", "no respondent has answered all of these questions yet")
    keys = sorted(patterns)
    values = {}
    levels = {}
    for position, question in enumerate(covariates):
        name = columns[question.id]
        column = [key[position] for key in keys]
        if question.kind == Question.Kind.CHOICE:
            levels[name] = list(question.options)
            column = [question.options[v] for v in column]
        values[name] = column
    try:
        result = fit(
            design_matrix(values, levels),
            yes=[patterns[key][0] for key in keys],
            n=[patterns[key][1] for key in keys],
            t=outcome.design.t,
            c=outcome.design.c,
            level=level,
        )
    except ValueError as error:
        raise AnalysisError("covariates", str(error)) from None
    return {
        "survey": survey.id,
        "outcome": outcome.id,
        "outcome_column": columns[outcome.id],
        "covariates": [
            {"question": q.id, "column": columns[q.id], "text": q.text, "kind": q.kind}
            for q in covariates
        ],
        "t": result.t,
        "c": result.c,
        "n": result.n,
        "n_patterns": result.n_patterns,
        "log_likelihood": result.log_likelihood,
        "level": level,
        "coefficients": [
            {
                "term": coef.name,
                "estimate": coef.estimate,
                "std_error": coef.std_error,
                "z": coef.z,
                "p_value": coef.p_value,
                "odds_ratio": coef.odds_ratio,
                "ci_low": coef.ci_low,
                "ci_high": coef.ci_high,
            }
            for coef in result.coefficients
        ],
    }


BREAKDOWN_COLUMNS = [
    "question",
    "question_text",
    "by",
    "by_text",
    "category",
    "category_text",
    "suppressed",
    "option",
    "option_text",
    "n",
    "count",
    "raw_rate",
    "estimate",
    "estimate_unbiased",
    "std_error",
    "ci_low",
    "ci_high",
]
ALL = "(all)"


def breakdown_pairs(survey: Survey) -> list[tuple[Question, Question]]:
    """Every (randomized yes/no or choice question, directly asked yes/no or choice
    question) pair of the survey: the breakdowns the exports hold."""
    found = list(survey.questions.all())
    return [
        (question, by)
        for question in found
        if question.design.randomized and question.kind in RANDOMIZED_CATEGORICAL
        for by in found
        if not by.design.randomized and by.kind in DIRECT_CATEGORICAL
    ]


def _csv_rows(question: Question, by: Question, category, text, entry: dict | None):
    """One row per estimate of a breakdown cell (per option for a choice question);
    a hidden cell is one row with nothing but its name."""
    base = {
        "question": question.id,
        "question_text": question.text,
        "by": by.id,
        "by_text": by.text,
        "category": category,
        "category_text": text,
        "suppressed": "true" if entry is None else "false",
    }
    if entry is None:
        yield base
    elif "options" in entry:
        for option in entry["options"]:
            yield {
                **base,
                "option": option["index"],
                "option_text": option["text"],
                "n": entry["n"],
                "raw_rate": option["raw_rate"],
                **{key: option[key] for key in BREAKDOWN_COLUMNS[10:] if key in option},
            }
    else:
        yield {
            **base,
            "n": entry["n"],
            "count": entry["yes_count"],
            "raw_rate": entry["raw_yes_rate"],
            **{key: entry[key] for key in BREAKDOWN_COLUMNS[12:]},
        }


def breakdowns_csv(survey: Survey, level: float, method: str) -> str:
    """Every breakdown of the survey as CSV, hidden cells hidden exactly as in the API:
    one ``(all)`` row (or one per option) and then the categories, per pair."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=BREAKDOWN_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for question, by in breakdown_pairs(survey):
        result = breakdown(survey, question.id, by.id, level, method)
        rows = list(_csv_rows(question, by, "", ALL, result["overall"]))
        for cell in result["categories"]:
            entry = None if cell["suppressed"] else cell
            rows.extend(_csv_rows(question, by, cell["category"], cell["text"], entry))
        writer.writerows(
            {key: "" if value is None else value for key, value in row.items()} for row in rows
        )
    return out.getvalue()
