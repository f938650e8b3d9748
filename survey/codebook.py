"""The codebook: what each column of a survey's exports holds, and every design
parameter needed to re-analyse it elsewhere.

Columns are named by question position (``q1``, ``q2``, …), which is what lets an export
be imported into another survey with the same designs.
"""

from __future__ import annotations

import math

from estimator.designs import Design, json_epsilon
from survey.models import Question, Survey

CODEBOOK_FORMAT = "deniable-codebook/1"
SAME_ORDER = "shown in the order listed here"
SHUFFLED_QUESTIONS = (
    "shuffled: each device showed the questions in its own random order (a conditional "
    "question right after the one it depends on); pages without JavaScript showed the "
    "order listed here. Columns keep the order listed here; the order shown is unknown."
)
SHUFFLED_OPTIONS = (
    "shuffled: each device showed the options in its own random order (pages without "
    "JavaScript: the order listed here); a report is the index in the list here, whatever "
    "order was shown, which is unknown."
)


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
        "shuffle_options": question.shuffle_options,
        "texts": question.texts,
        "direct_share": question.direct_share,
        "innocuous_text": question.innocuous_text,
        "not_sensitive": not design.randomized,
        "allow_no_privacy": design.randomized and math.isinf(epsilon),
        "column": column,
        "question_id": question.id,
        "epsilon": json_epsilon(epsilon),
        "no_privacy": math.isinf(epsilon),
        "direct": not design.randomized,
        "outputs": design.output_description(),
        "option_order": SHUFFLED_OPTIONS if question.shuffle_options else SAME_ORDER,
        # Wording changed after answers arrived (old text, new text, hour): the design
        # stayed frozen, but a reader of the data should know what each respondent saw.
        "wording_history": question.wording_history(),
        **(
            _split_codebook(column, question, design)
            if design.direct_share is not None
            else _arms_codebook(column, design)
            if design.has_arms
            else _KIND_CODEBOOK[question.kind](question, design)
        ),
    }


def _split_codebook(column: str, question: Question, design: Design) -> dict:
    """A split ballot: the randomized design's codebook for the randomized ballot, the
    ballot in the arm column, and how the two ballots are compared."""
    randomized = _KIND_CODEBOOK[question.kind](question, design.randomized_design)
    entry = {
        **randomized,
        "arm_column": f"{column}_arm",
        "arm_values": {
            "0": "randomized ballot: the column holds the randomized report",
            "1": "direct ballot: asked directly (told so before answering), the column holds "
            "the answer as given",
        },
    }
    if question.kind == Question.Kind.NUMBER:
        return entry | {
            "reanalysis": f"randomized ballot (arm 0): {randomized['reanalysis']}; direct "
            "ballot (arm 1): the mean of the answers, with a t interval; difference = "
            "randomized mean - direct mean, standard error the root of the sum of both "
            "squared standard errors, Welch's t (t.test(x0, x1) in R)",
        }
    answers = ", ".join(question.options) if question.kind == Question.Kind.CHOICE else "no, yes"
    m = design.answers
    return entry | {
        "rrreg": f"{randomized['rrreg']}, on the rows where {column}_arm == 0",
        "ballot_matrix": {
            "rows": f"arm * {m} + report (randomized ballot: {answers}; direct ballot: {answers})",
            "columns": f"the true value (0 … {m - 1})",
            "values": design.response_matrix.tolist(),
        },
        "reanalysis": f"randomized ballot (arm 0): {randomized['reanalysis']}; direct ballot "
        "(arm 1): the share of each answer; difference = randomized - direct, standard "
        "error the root of the sum of both squared standard errors (Wald)",
    }


def _arms_codebook(column: str, design: Design) -> dict:
    """A design with arms: the 0/1 report in the question's column, the arm in its arm
    column, the response matrix over (arm, report) and the yes-rate of each arm."""
    return {
        "values": {"0": "reported no", "1": "reported yes"},
        "arm_column": f"{column}_arm",
        "arm_values": {"0": "arm 0", "1": "arm 1"},
        "response_matrix": {
            "rows": "arm * 2 + report (arm 0: no, yes; arm 1: no, yes)",
            "columns": "the true value (0, 1)",
            "values": design.response_matrix.tolist(),
        },
        "reanalysis": design.reanalysis_words,
        "rrreg": design.rrreg_call(column),
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
        "noise": design.noise_words,
        "noise_variance": design.noise_variance,
        "reanalysis": design.reanalysis_words,
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
        "languages": survey.languages,
        "texts": survey.texts,
        "allow_skip": survey.allow_skip,
        "shuffle_questions": survey.shuffle_questions,
        "question_order": SHUFFLED_QUESTIONS if survey.shuffle_questions else SAME_ORDER,
        "epsilon_total": json_epsilon(privacy.epsilon_total),
        "no_privacy": math.isinf(privacy.epsilon_total),
        "asked_directly": len(privacy.direct),
        "rows": "one row per submission, in random order; simulated answers are excluded",
        "columns": {
            "round": "the round the submission belongs to (classroom rounds; 1 otherwise)",
            "q<k>": "the randomized report to the k-th question: 0/1 for a binary question "
            "(1 = yes), the option index (0 = the first option) for a choice question, a "
            'whole number for a number question; empty when the respondent chose "Prefer '
            'not to answer" (a skip, sent as such and never randomized) or did not answer; '
            "estimates leave empty cells out and count them as skipped",
            "q<k>_arm": "for a question whose design has arms (see its arm_column): the arm "
            "(0 or 1) the respondent's device drew, independently of the true answer, "
            "before randomizing with that arm's parameters; q<k> holds the 0/1 report. "
            "For a split ballot (direct_share): 0 = randomized ballot, 1 = asked directly, "
            "q<k> then holding the answer as given",
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
