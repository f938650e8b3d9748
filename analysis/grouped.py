"""Breakdowns, cross-tabs and regression, from joint counts of reports.

The maths of these analyses reads counts per combination of reports (a category of a
directly asked question and a randomized report; two randomized reports; a covariate
pattern and a report), never individual answers: :meth:`responses.counts.SurveyCounts.joint`
gives them, one row per combination. Real and simulated answers count together, as in the
estimates (simulated respondents answer every question), and only the survey's current
round is read, as the dashboard does.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from analysis.results import ARMS_METHOD, arms_entry, population_for
from estimator.arms import sld_regression
from estimator.compare import compare as compare_groups
from estimator.compare import compare_arms, prevalence_std_error
from estimator.crosstab import crosstab
from estimator.disclosure import suppress_linked
from estimator.estimates import MEAN_METHODS, NumberStats
from estimator.regression import (
    INTERCEPT,
    STD_ERROR_METHOD,
    design_matrix,
    fit,
    fit_with_randomized_covariate,
)
from estimator.split import RANDOMIZED_BALLOT
from responses.counts import SurveyCounts, survey_counts
from survey.codebook import question_columns
from survey.models import Question, Survey
from survey.spreadsheets import csv_text

RANDOMIZED_CATEGORICAL = (Question.Kind.BINARY, Question.Kind.CHOICE)
DIRECT_CATEGORICAL = (Question.Kind.BINARY, Question.Kind.CHOICE)
BROKEN_DOWN = (*RANDOMIZED_CATEGORICAL, Question.Kind.NUMBER)


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


def named(question: Question) -> str:
    """A question as the researcher knows it: its column (q4: the fourth question, as in
    the builder and the exports) and its text, not its database id."""
    return f"q{question.position + 1} (“{question.text}”)"


def _randomized(
    survey: Survey, field: str, raw, kinds: tuple[str, ...], *, arms_refused: str | None = None
) -> Question:
    """A randomized question of one of ``kinds``; a design with arms is refused with the
    reason ``arms_refused`` where the analysis cannot take it."""
    question = _question(survey, field, raw)
    if not question.design.randomized:
        raise AnalysisError(
            field,
            f"{named(question)} is asked directly: {field} must be a randomized question",
        )
    if question.kind not in kinds:
        raise AnalysisError(
            field,
            f"{named(question)} is a {question.kind} question; {field} must be "
            f"a randomized {' or '.join(kinds)} question",
        )
    if question.design.split_ballot and arms_refused:
        raise AnalysisError(field, f"{named(question)} is a split ballot: {SPLIT_REFUSED}")
    if question.design.has_arms and arms_refused:
        raise AnalysisError(field, f"{named(question)} uses a design with arms: {arms_refused}")
    return question


# Why a cross-tab refuses a design with arms (the API's 400 and the page say it).
CROSSTAB_ARMS = (
    "a cross-tab inverts each question's response matrix, and the reports of a design with "
    "arms also depend on how many respondents did not follow the coins (its honesty t or "
    "cheaters γ), which no matrix fixes; a joint model of both questions is not offered. "
    "Its prevalence per group of a directly asked question is in the breakdown"
)
# Why a cross-tab and a model refuse a split ballot.
SPLIT_REFUSED = (
    "its direct ballot's answers are not randomized and its randomized ballot is a part of "
    "the respondents drawn apart, so this analysis of it is not offered; its breakdown and "
    "comparisons read the randomized ballot, and the export's q<k>_arm column (0) selects "
    "it for your own analysis"
)
# Why a model refuses a design with arms other than the stochastic lie detector's.
MODEL_ARMS = (
    "a model takes a design with arms only where its fit estimates the second "
    "parameter beside the coefficients (the stochastic lie detector), so choose another outcome"
)


def _covariate(survey: Survey, outcome: Question, raw) -> Question:
    """A model's covariate: a directly asked yes/no, choice or number question, or a
    randomized yes/no question other than the outcome (its truth enters as a latent 0/1)."""
    question = _question(survey, "covariates", raw)
    if not question.design.randomized:
        return _direct(survey, "covariates", raw, DIRECT_CATEGORICAL + (Question.Kind.NUMBER,))
    if question.id == outcome.id:
        raise AnalysisError("covariates", f"{named(question)} is the outcome itself")
    if not has_line(question):
        raise AnalysisError(
            "covariates",
            f"{named(question)} is a randomized {question.kind} question; a randomized "
            "covariate must be a yes/no question whose report says yes with probability "
            "c + t × the truth",
        )
    return question


def has_line(question: Question) -> bool:
    """A yes/no design whose report is "yes" with probability c + t·truth (numbers)."""
    design = question.design
    try:
        return question.kind == Question.Kind.BINARY and all(
            isinstance(v, float | int) and math.isfinite(v) for v in (design.t, design.c)
        )
    except (AttributeError, NotImplementedError):
        return False


def _direct(survey: Survey, field: str, raw, kinds: tuple[str, ...]) -> Question:
    question = _question(survey, field, raw)
    if question.design.randomized:
        raise AnalysisError(
            field,
            f"{named(question)} is randomized: {field} must be a directly asked "
            f"({' or '.join(kinds)}) question",
        )
    if question.kind not in kinds:
        raise AnalysisError(
            field,
            f"{named(question)} is a {question.kind} question; {field} must be "
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


def estimate_entry(
    question: Question,
    reports: Mapping[int, int],
    level: float,
    method: str,
    population: int | None = None,
) -> dict:
    """A randomized question's estimate from its reports (``{report: respondents}``), as
    the estimates endpoint gives it: yes/no keys for a binary question, one entry per
    option for a choice one, the mean and its t interval for a number one; ``population``
    (N) applies the finite-population correction."""
    if question.kind == Question.Kind.NUMBER:
        return _number_entry(question, reports, level, population) | {"population": population}
    if _with_arms(question):
        est = _prevalence(question, reports, population)
        return arms_entry(est, level) | {"population": est.population}
    counts = [reports.get(r, 0) for r in range(len(categories(question)))]
    if question.kind == Question.Kind.BINARY:
        # A split ballot's groups: the randomized ballot's estimate (its direct answers
        # are on the results page).
        est = _prevalence(question, reports, population)
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
            "population": population,
        }
    design = question.design
    if design.split_ballot:  # its groups: the randomized ballot's shares
        design = design.randomized_design
    est = design.estimate(counts, population=population)
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
        "population": population,
    }


def _number_entry(
    question: Question, reports: Mapping[int, int], level: float, population: int | None
) -> dict:
    """The mean of a number question's reports with its interval, as on the results
    page: from (count, Σ report, Σ report²), or the counts of each report (one bit). A
    split ballot's groups read its randomized ballot (its direct answers are on the
    results page)."""
    design = question.design
    if design.split_ballot:
        decoded = (design.decode(report) + (n,) for report, n in reports.items())
        reports = {value: n for ballot, value, n in decoded if ballot == RANDOMIZED_BALLOT}
        design = design.randomized_design
    stats = NumberStats(
        sum(reports.values()),
        sum(r * n for r, n in reports.items()),
        sum(r * r * n for r, n in reports.items()),
    )
    keyed = Counter()
    for report, n in reports.items():
        keyed[design.tally_key(report)] += n
    est = design.estimate_from_tally(keyed, stats, population)
    low, high = est.ci(level) or (None, None)
    return {
        "n": est.n,
        "mean": est.estimate,
        "mean_unbiased": est.estimate_unbiased,
        "std_error": est.std_error,
        "ci_low": low,
        "ci_high": high,
        "contradicts_design": est.contradicts_design(level),
    }


NO_ANSWER = "No answer"
Atoms = Counter[tuple[int, tuple[int | None, ...]]]


def grouping_questions(survey: Survey) -> list[Question]:
    """The directly asked yes/no and choice questions: what a breakdown can group by."""
    return [
        q
        for q in survey.questions.all()
        if not q.design.randomized and q.kind in DIRECT_CATEGORICAL
    ]


def respondent_atoms(counts: SurveyCounts, question: Question, groups: Sequence[Question]) -> Atoms:
    """``{(report, (answer to each of groups or None)): respondents}`` over everyone who
    answered ``question``, None meaning the grouping question was left unanswered.

    When no respondent of ``question`` skipped any of ``groups`` (the usual case) that
    is one joint count over them all, checked against the question's own count.
    Otherwise one more per group finds the groups someone skipped, and the counts per
    exact set of answered groups come by inclusion–exclusion from one
    joint count per subset of those (the others always among them).
    """
    read_before: dict[tuple[int, ...], Counter] = {}

    def counts_of(*asked: int) -> Counter[tuple[int, ...]]:
        if asked not in read_before:
            read_before[asked] = counts.joint([question.id, *asked])
        return read_before[asked]

    n = sum(counts_of().values())
    ids = [g.id for g in groups]
    full = counts_of(*ids)
    if sum(full.values()) == n:
        return Counter({(key[0], tuple(key[1:])): count for key, count in full.items()})
    skipped = [i for i, qid in enumerate(ids) if sum(counts_of(qid).values()) < n]
    always = [i for i in range(len(ids)) if i not in skipped]

    def read(subset: tuple[int, ...]) -> Counter:
        """Keyed ((report, answers to ``always``), answers to the subset of ``skipped``)."""
        asked = sorted([*always, *(skipped[j] for j in subset)])
        keyed: Counter = Counter()
        for (report, *values), count in counts_of(*(ids[i] for i in asked)).items():
            answers = dict(zip(asked, values, strict=True))
            head = (report, *(answers[i] for i in always))
            keyed[(head, *(answers[skipped[j]] for j in subset))] += count
        return keyed

    atoms: Atoms = Counter()
    for subset, counts in _by_answered_set(len(skipped), read).items():
        for (head, *values), count in counts.items():
            answers = dict(zip(always, head[1:], strict=True))
            answers |= {skipped[j]: v for j, v in zip(subset, values, strict=True)}
            atoms[(head[0], tuple(answers.get(i) for i in range(len(ids))))] += count
    return atoms


def _by_answered_set(size: int, read) -> dict[tuple[int, ...], Counter]:
    """Inclusion–exclusion: ``read(subset)`` counts everyone who answered at least the
    groups in ``subset``, keyed (report, their answers); the result, everyone who
    answered exactly those, is what remains after taking away every larger subset's."""
    exact: dict[tuple[int, ...], Counter] = {}
    for length in range(size, -1, -1):
        for subset in itertools.combinations(range(size), length):
            counts = Counter(read(subset))
            for larger, its in exact.items():
                if set(subset) < set(larger):
                    at = [larger.index(i) for i in subset]
                    for (report, *values), n in its.items():
                        counts[(report, *(values[j] for j in at))] -= n
            exact[subset] = +counts
    return exact


@dataclass(frozen=True)
class LinkedBreakdowns:
    """Every breakdown of one randomized question, by each grouping question, with the
    cells hidden across all of them (:func:`estimator.disclosure.suppress_linked`)."""

    question: Question
    groups: list[Question]
    atoms: Atoms
    hidden: dict[int, set[int | None]]
    min_cell_count: int

    @classmethod
    def of(
        cls, survey: Survey, question: Question, counts: SurveyCounts | None = None
    ) -> LinkedBreakdowns:
        groups = grouping_questions(survey)
        counts = counts or survey_counts(survey)
        atoms = respondent_atoms(counts, question, groups)
        # Those who skipped the question are atoms too (report None), so that a group's
        # size, which decides what is hidden, counts everyone asked in it.
        for values, n in counts.skipped_by(question.id, [g.id for g in groups]).items():
            atoms[(None, values)] += n
        per_atom: Counter[tuple] = Counter()
        for (_, values), n in atoms.items():
            per_atom[values] += n
        combos = sorted(per_atom, key=lambda v: tuple((x is None, x or 0) for x in v))
        shown = [_shown_categories(g, {v[t] for v in combos}) for t, g in enumerate(groups)]
        k = survey.min_cell_count
        hidden = suppress_linked(
            [[shown[t].index(v[t]) for t in range(len(groups))] for v in combos],
            [per_atom[v] for v in combos],
            [len(s) for s in shown],
            k=k,
        )
        return cls(
            question,
            groups,
            atoms,
            {g.id: {shown[t][i] for i in hidden[t]} for t, g in enumerate(groups)},
            k,
        )

    def cells(self, by: Question) -> list[tuple[int | None, str, Counter[int], int]]:
        """``(category, text, {report: respondents}, skipped)`` per category of ``by``,
        "No answer" (category None) last when anyone left ``by`` unanswered."""
        t = self.groups.index(by)
        reports: dict[int | None, Counter] = {}
        for (report, values), n in self.atoms.items():
            reports.setdefault(values[t], Counter())[report] += n
        labels = categories(by)
        listed = _shown_categories(by, set(reports))
        return [
            (c, NO_ANSWER if c is None else labels[c], *_answered(reports.get(c, Counter())))
            for c in listed
        ]

    def overall(self) -> tuple[Counter[int], int]:
        """Everyone's reports, and how many skipped the question."""
        everyone: Counter = Counter()
        for (report, _), n in self.atoms.items():
            everyone[report] += n
        return _answered(everyone)

    def population(self, reports: Mapping[int, int]) -> int | None:
        """A group's N for the finite-population correction: its share of the survey's
        population size, at the survey's sampling fraction (the same N in the breakdown
        and in a comparison, so that both show the same standard error)."""
        total = sum(self.overall()[0].values())
        return population_for(self.question.survey, sum(reports.values()), total)


def _answered(reports: Counter) -> tuple[Counter[int], int]:
    """The reports of those who answered, and the number who skipped (report None)."""
    return Counter({r: n for r, n in reports.items() if r is not None}), reports[None]


def _shown_categories(group: Question, present: set) -> list[int | None]:
    """Every option of ``group``, and None ("No answer") if someone left it unanswered:
    listing an empty "No answer" would only cost another hidden cell, and its absence
    says that nobody skipped, nothing about anyone."""
    listed: list[int | None] = list(range(len(categories(group))))
    return listed + [None] if None in present else listed


def breakdown(
    survey: Survey,
    question_raw,
    by_raw,
    level: float,
    method: str,
    counts: SurveyCounts | None = None,
) -> dict:
    """A randomized question's estimate per category of a directly asked question, with
    the cells that could single out a small group hidden.

    The overall figure is the question's own estimate over all its respondents (the
    results page's), the same for every grouping; those who left the grouping question
    unanswered are one more category, "No answer". The hidden cells are chosen over all
    breakdowns of the question at once (:class:`LinkedBreakdowns`), so that no hidden
    cell can be recovered by combining several of them. A hidden cell carries no
    numbers at all, and every hidden cell looks the same.
    """
    question = _randomized(survey, "question", question_raw, BROKEN_DOWN)
    by = _direct(survey, "by", by_raw, DIRECT_CATEGORICAL)
    return breakdown_of(LinkedBreakdowns.of(survey, question, counts), by, level, method)


def breakdown_of(linked: LinkedBreakdowns, by: Question, level: float, method: str) -> dict:
    """One breakdown of :class:`LinkedBreakdowns`, as the API gives it."""
    question = linked.question
    if question.kind == Question.Kind.NUMBER:
        method = MEAN_METHODS[0]
    if _with_arms(question):
        method = ARMS_METHOD
    overall, skipped = linked.overall()
    total = sum(overall.values())
    survey = question.survey
    entries = []
    for category, text, reports, group_skipped in linked.cells(by):
        entry = {"category": category, "text": text, "suppressed": category in linked.hidden[by.id]}
        if not entry["suppressed"]:
            population = linked.population(reports)
            entry.update(estimate_entry(question, reports, level, method, population))
            entry["skipped"] = group_skipped
        entries.append(entry)
    result = {
        "survey": question.survey_id,
        "question": question.id,
        "text": question.text,
        "kind": question.kind,
        "by": by.id,
        "by_text": by.text,
        "min_cell_count": linked.min_cell_count,
        "level": level,
        "method": method,
        "overall": estimate_entry(question, overall, level, method, population_for(survey, total))
        | {"skipped": skipped},
        "categories": entries,
    }
    if question.kind == Question.Kind.NUMBER:
        result |= {"lower": question.design.lower, "upper": question.design.upper}
    if _with_arms(question):
        design = question.design
        result["quantities"] = [
            {"key": key, "label": design.quantity_labels[name]}
            for name, key in design.quantity_keys.items()
        ]
    return result


def _category(by: Question, field: str, raw, listed: list[int | None]) -> int | None:
    """A category of ``by`` named in the query: an option index, or "none" for those who
    left ``by`` unanswered."""
    if isinstance(raw, str) and raw.strip().lower() == "none":
        value: int | None = None
    else:
        try:
            value = int(raw)
        except (TypeError, ValueError):
            raise AnalysisError(
                field, f"{field} must be an option index of the grouping question, or none"
            ) from None
    if value not in listed:
        raise AnalysisError(
            field, f"{field} must be one of the grouping question's categories: {listed}"
        )
    return value


def _with_arms(question: Question) -> bool:
    """A design with arms estimated as one (not a split ballot, read as its randomized
    ballot's yes/no estimate)."""
    return question.design.has_arms and not question.design.split_ballot


def _prevalence(question: Question, reports: Mapping[int, int], population: int | None = None):
    """A group's estimate of a yes/no question's prevalence from its reports (a design
    with arms or a split ballot: from its four, arm × answer)."""
    design = question.design
    if design.has_arms:
        counts = [reports.get(r, 0) for r in design.output_values]
        return design.estimate(counts, population=population)
    return design.estimate(reports.get(1, 0), sum(reports.values()), population=population)


def _group(category, text: str, est) -> dict:
    return {
        "category": category,
        "text": text,
        "n": est.n,
        "estimate": est.estimate,
        "std_error": prevalence_std_error(est),
        "population": est.population,
    }


# ``by`` of a comparison of the two arms of a design with arms.
BY_ARM = "arm"
ARMS_COMPARED = (
    "The prevalence read from each arm alone as if everyone followed the coins, arm 0 "
    "minus arm 1: following the coins makes both read the same, so a difference says that "
    "some respondents did not (the design's own detection, asked arm against arm). The "
    "readings are not clipped to 0–100 %: one outside it is itself such a sign."
)


def compare(
    survey: Survey,
    question_raw,
    by_raw,
    a_raw,
    b_raw,
    level: float,
    counts: SurveyCounts | None = None,
) -> dict:
    """The difference of a randomized yes/no question's prevalence between two categories
    of a directly asked question (:func:`estimator.compare.compare`: interval, Wald and
    likelihood-ratio p-values); with ``by=arm``, between the two arms of a design with
    arms (:func:`arms_compared`). A category the breakdowns hide cannot be compared: the
    difference would publish it."""
    question = _randomized(survey, "question", question_raw, (Question.Kind.BINARY,))
    if isinstance(by_raw, str) and by_raw.strip().lower() == BY_ARM:
        return arms_compared(survey, question, a_raw, b_raw, level, counts)
    by = _direct(survey, "by", by_raw, DIRECT_CATEGORICAL)
    linked = LinkedBreakdowns.of(survey, question, counts)
    cells = {category: (text, reports) for category, text, reports, _ in linked.cells(by)}
    a = _category(by, "a", a_raw, list(cells))
    b = _category(by, "b", b_raw, list(cells))
    if a == b:
        raise AnalysisError("b", "a and b must be two different categories")
    estimates = {}
    for field, category in (("a", a), ("b", b)):
        if category in linked.hidden[by.id]:
            raise AnalysisError(
                field,
                f"{field}: this group is hidden in the breakdown (too few respondents in it "
                "or in another group), so it cannot be compared",
            )
        reports = cells[category][1]
        estimates[field] = _prevalence(question, reports, linked.population(reports))
        if not estimates[field].has_data:
            why = estimates[field].message if estimates[field].n else "nobody has answered yet"
            raise AnalysisError(field, f"{field}: in this group, {why[0].lower()}{why[1:]}")
    comparison = compare_groups(estimates["a"], estimates["b"], level)
    return {
        "survey": survey.id,
        "question": question.id,
        "text": question.text,
        "by": by.id,
        "by_text": by.text,
        "min_cell_count": linked.min_cell_count,
        "groups": [
            _group(category, cells[category][0], estimates[field])
            for field, category in (("a", a), ("b", b))
        ],
        **comparison.to_dict(),
    }


def arms_compared(
    survey: Survey, question: Question, a_raw, b_raw, level: float, counts: SurveyCounts | None
) -> dict:
    """The two arms of a design with arms against each other, over all the question's
    respondents (:func:`estimator.compare.compare_arms`). Each arm's reports are already
    on the results page, so nothing here is hidden."""
    if not question.design.has_arms:
        raise AnalysisError(
            "by",
            f"{named(question)} has no arms: by={BY_ARM} compares the two arms of a design "
            "with arms; give a directly asked question to compare two of its groups",
        )
    if question.design.split_ballot:
        raise AnalysisError(
            "by",
            f"{named(question)} is a split ballot: its two ballots are compared on the "
            'results page and in the estimates ("difference"), not here',
        )
    if question.design.compliant_lines() is None:
        raise AnalysisError(
            "by",
            f"{named(question)}: the arms of this design do not each estimate the "
            "prevalence, so they cannot be compared",
        )
    arms = list(range(question.design.arms))
    picked = [_arm(field, raw, arms) for field, raw in (("a", a_raw), ("b", b_raw))]
    if picked[0] == picked[1]:
        raise AnalysisError("b", "a and b must be two different arms")
    tally = (counts or survey_counts(survey)).tally(question.id)
    est = tally.estimate(question.design)
    if not est.has_data:
        raise AnalysisError("question", f"{named(question)}: {est.message}")
    comparison = compare_arms(est, level)
    lines = question.design.compliant_lines()
    readings = [
        line.estimate(int(est.yes[arm]), int(est.per_arm[arm]))
        for arm, line in zip(arms, lines, strict=True)
    ]
    groups = [
        _group(arm, f"arm {arm}", reading) | {"estimate": reading.estimate_unbiased}
        for arm, reading in zip(arms, readings, strict=True)
    ]
    result = comparison.to_dict()
    if picked[0] > picked[1]:
        groups.reverse()
        result |= {"a": result["b"], "b": result["a"], "difference": -result["difference"]}
        result["ci"] = [-result["ci"][1], -result["ci"][0]]
    return {
        "survey": survey.id,
        "question": question.id,
        "text": question.text,
        "by": BY_ARM,
        "by_text": "the arm the respondent's device drew",
        "min_cell_count": survey.min_cell_count,
        "groups": groups,
        **result,
        "meaning": ARMS_COMPARED,
    }


def _arm(field: str, raw, arms: list[int]) -> int:
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = None
    if value not in arms:
        raise AnalysisError(field, f"{field} must be an arm of the design: one of {arms}")
    return value


def crosstab_of(
    survey: Survey, a_raw, b_raw, level: float, counts: SurveyCounts | None = None
) -> dict:
    """The joint prevalences of two randomized questions (:func:`estimator.crosstab.crosstab`
    on their joint report counts), with phi and the odds ratio for two yes/no questions."""
    a = _randomized(survey, "a", a_raw, RANDOMIZED_CATEGORICAL, arms_refused=CROSSTAB_ARMS)
    b = _randomized(survey, "b", b_raw, RANDOMIZED_CATEGORICAL, arms_refused=CROSSTAB_ARMS)
    if a.id == b.id:
        raise AnalysisError("b", "a and b must be two different questions")
    rows, columns = categories(a), categories(b)
    joint = (counts or survey_counts(survey)).joint([a.id, b.id])
    table = np.array(
        [[joint.get((i, j), 0) for j in range(len(columns))] for i in range(len(rows))]
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


def _refuse_hidden_groups(
    survey: Survey, outcome: Question, covariates: list[Question], counts: SurveyCounts
) -> None:
    """A model on a grouping question fits each of its groups' share of the outcome
    (exactly, with that question alone), so it would publish what the breakdowns hide:
    refuse a covariate with any group hidden in the outcome's breakdowns."""
    grouping = [q for q in covariates if q.kind in DIRECT_CATEGORICAL]
    if not grouping:
        return
    linked = LinkedBreakdowns.of(survey, outcome, counts)
    for question in grouping:
        hidden = linked.hidden.get(question.id)
        if hidden:
            names = categories(question)
            groups = ", ".join(
                "no answer" if category is None else names[category]
                for category in sorted(
                    hidden, key=lambda category: (category is None, category or 0)
                )
            )
            raise AnalysisError(
                "covariates",
                f"{named(question)} has groups hidden in the "
                f"breakdowns of this outcome ({groups}: fewer than "
                f"{survey.min_cell_count} respondents in them or in another group); a "
                "model on it would show them: leave it out or wait for more respondents",
            )


def regression(
    survey: Survey,
    outcome_raw,
    covariates_raw,
    level: float = 0.95,
    counts: SurveyCounts | None = None,
) -> dict:
    """Logistic regression of a randomized yes/no question on directly asked covariates
    (:func:`estimator.regression.fit`), from the counts per (covariate pattern, report).

    Terms are named by the export's columns (``q2``, ``q3[Law]``) so that the same model
    fitted in R on the export names them alike: a choice covariate is dummy-coded against
    its first option, a yes/no or number covariate enters as its 0/1 or number.
    """
    outcome = _randomized(survey, "outcome", outcome_raw, (Question.Kind.BINARY,))
    if outcome.design.split_ballot:
        raise AnalysisError("outcome", f"{named(outcome)} is a split ballot: {SPLIT_REFUSED}")
    if outcome.design.has_arms and not outcome.design.regression_with_arms:
        raise AnalysisError("outcome", f"{named(outcome)} uses a design with arms: {MODEL_ARMS}")
    with_arms = outcome.design.has_arms
    if not isinstance(covariates_raw, list) or not covariates_raw:
        raise AnalysisError(
            "covariates",
            "covariates must be a list of one or more questions' ids: directly asked ones, "
            "and at most one randomized yes/no question (the prevalence alone is on the "
            "estimates page)",
        )
    covariates = [_covariate(survey, outcome, raw) for raw in covariates_raw]
    if len({q.id for q in covariates}) < len(covariates):
        raise AnalysisError("covariates", "each covariate may be named only once")
    randomized = [q for q in covariates if q.design.randomized]
    if len(randomized) > 1:
        raise AnalysisError(
            "covariates",
            "at most one covariate may be randomized: "
            + " and ".join(named(q) for q in randomized)
            + " both are",
        )
    direct = [q for q in covariates if not q.design.randomized]
    covariates = direct + randomized  # the randomized one, whose truth is latent, last
    columns = {q.id: name for name, q in question_columns(survey)}
    counts = counts or survey_counts(survey)
    patterns: dict[tuple, list[int]] = {}
    for (report, *values), n in counts.joint([outcome.id, *(q.id for q in covariates)]).items():
        # A design with arms: one pattern per arm too (its report is arm·2 + answer).
        arm, report = divmod(report, 2) if with_arms else (None, report)
        key = (*values, arm) if with_arms else tuple(values)
        yes_n = patterns.setdefault(key, [0, 0])
        yes_n[0] += n if report == 1 else 0
        yes_n[1] += n
    if not patterns:
        raise AnalysisError("outcome", "no respondent has answered all of these questions yet")
    _refuse_hidden_groups(survey, outcome, direct, counts)
    keys = sorted(patterns)
    values = {}
    levels = {}
    for position, question in enumerate(direct):
        name = columns[question.id]
        column = [key[position] for key in keys]
        if question.kind == Question.Kind.CHOICE:
            levels[name] = list(question.options)
            column = [question.options[v] for v in column]
        values[name] = column
    matrix = design_matrix(values, levels) if values else None
    yes = [patterns[key][0] for key in keys]
    n = [patterns[key][1] for key in keys]
    if with_arms and randomized:
        raise AnalysisError(
            "covariates",
            f"{named(outcome)} uses a design with arms: its model takes directly asked "
            "covariates only, so leave out " + " and ".join(named(q) for q in randomized),
        )
    honesty = None
    try:
        if with_arms:
            fitted = sld_regression(
                outcome.design, matrix, [key[-1] for key in keys], yes, n, level=level
            )
            result = fitted.regression
            low, high = fitted.honesty_ci()
            honesty = {
                "estimate": fitted.honesty,
                "std_error": fitted.honesty_std_error,
                "ci_low": low,
                "ci_high": high,
            }
        elif randomized:
            covariate = randomized[0]
            result = fit_with_randomized_covariate(
                matrix.rows if matrix else np.ones((len(keys), 1)),
                [key[-1] for key in keys],
                yes,
                n,
                t=outcome.design.t,
                c=outcome.design.c,
                covariate_t=covariate.design.t,
                covariate_c=covariate.design.c,
                covariate_name=columns[covariate.id],
                names=matrix.names if matrix else (INTERCEPT,),
                level=level,
            )
        else:
            result = fit(matrix, yes=yes, n=n, t=outcome.design.t, c=outcome.design.c, level=level)
    except ValueError as error:
        raise AnalysisError("covariates", str(error)) from None
    return ({"honesty": honesty} if honesty else {}) | {
        "survey": survey.id,
        "outcome": outcome.id,
        "outcome_column": columns[outcome.id],
        "covariates": [
            {
                "question": q.id,
                "column": columns[q.id],
                "text": q.text,
                "kind": q.kind,
                "randomized": q.design.randomized,
            }
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
                "std_error_opg": _json_number(coef.std_error_opg),
                "lr_p_value": _json_number(coef.lr_p_value),
            }
            for coef in result.coefficients
        ],
        "std_error_method": STD_ERROR_METHOD,
    }


def _json_number(value: float) -> float | None:
    """JSON has no NaN: a quantity that could not be computed is null."""
    return value if math.isfinite(value) else None


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
    "skipped",
]
ALL = "(all)"


def breakdown_pairs(survey: Survey) -> list[tuple[Question, Question]]:
    """Every (randomized yes/no, choice or number question, directly asked yes/no or
    choice question) pair of the survey: the breakdowns the exports hold."""
    groups = grouping_questions(survey)
    return [
        (question, by)
        for question in survey.questions.all()
        if question.design.randomized and question.kind in BROKEN_DOWN
        for by in groups
    ]


def _csv_rows(question: Question, by: Question, category, text, entry: dict | None):
    """One row per estimate of a breakdown cell (per option for a choice question; the
    mean in ``estimate`` for a number question); a hidden cell is one row with nothing
    but its name."""
    base = {
        "question": question.id,
        "question_text": question.text,
        "by": by.id,
        "by_text": by.text,
        "category": category,
        "category_text": text,
        "suppressed": "true" if entry is None else "false",
        "skipped": None if entry is None else entry["skipped"],
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
    elif "mean" in entry:
        yield {
            **base,
            "n": entry["n"],
            "estimate": entry["mean"],
            "estimate_unbiased": entry["mean_unbiased"],
            **{key: entry[key] for key in BREAKDOWN_COLUMNS[14:]},
        }
    else:
        yield {
            **base,
            "n": entry["n"],
            "count": entry["yes_count"],
            "raw_rate": entry["raw_yes_rate"],
            **{key: entry[key] for key in BREAKDOWN_COLUMNS[12:]},
        }
        # A design with arms: a row per other quantity, named in ``option`` (as in the
        # estimates CSV), with its SE and interval.
        design = question.design
        for name, key in (design.quantity_keys if design.has_arms else {}).items():
            yield {
                **base,
                "option": key,
                "option_text": design.quantity_labels[name],
                "n": entry["n"],
                **{k: entry[key][k] for k in ("estimate", "std_error", "ci_low", "ci_high")},
            }


def breakdowns_csv(
    survey: Survey, level: float, method: str, counts: SurveyCounts | None = None
) -> str:
    """Every breakdown of the survey as CSV, hidden cells hidden exactly as in the API:
    one ``(all)`` row (or one per option) and then the categories, per pair ("No
    answer" with an empty category)."""
    lines = []
    linked = {}
    for question, by in breakdown_pairs(survey):
        if question.id not in linked:
            linked[question.id] = LinkedBreakdowns.of(survey, question, counts)
        result = breakdown_of(linked[question.id], by, level, method)
        rows = list(_csv_rows(question, by, "", ALL, result["overall"]))
        for cell in result["categories"]:
            entry = None if cell["suppressed"] else cell
            rows.extend(_csv_rows(question, by, cell["category"], cell["text"], entry))
        lines.extend([row.get(key) for key in BREAKDOWN_COLUMNS] for row in rows)
    # CRLF line ends (RFC 4180) make the writer quote a text holding a lone CR.
    return csv_text(lines, BREAKDOWN_COLUMNS, lineterminator="\r\n")
