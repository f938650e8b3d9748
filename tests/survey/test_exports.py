"""Exports and imports shared by the pages, the API and the management commands."""

from __future__ import annotations

import csv
import io
import uuid

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from estimator.analysis import survey_results
from survey import exports
from survey.models import Submission, Survey, Tally, new_slug

pytestmark = pytest.mark.django_db


def answer(survey: Survey, *values: int) -> None:
    ids = list(survey.questions.values_list("id", flat=True))
    survey.record_submission(uuid.uuid4(), dict(zip(ids, values, strict=True)))


def test_rows_follow_question_order_not_creation_order(make_survey):
    survey = make_survey(n_questions=2)
    first, second = survey.questions.all()
    second.position, first.position = 0, 1
    second.save()
    first.save()
    answer(survey, 1, 0)  # ids in position order: second → 1, first → 0
    assert list(exports.response_rows(survey)) == [["round", "q1", "q2"], [1, 1, 0]]


def test_the_export_never_contains_simulated_answers(make_survey):
    survey = make_survey(n_questions=1)
    survey.simulate(100, 0.5, np.random.default_rng(4))
    answer(survey, 1)
    assert exports.responses_csv(survey) == "round,q1\n1,1\n"


def test_the_codebook_says_no_privacy_for_an_infinite_epsilon(make_survey):
    survey = make_survey(n_questions=1)
    survey.questions.update(design_name="mirrored", design_params={"p": 1.0})
    book = exports.codebook(survey)
    assert (book["epsilon_total"], book["no_privacy"]) == (None, True)
    assert book["questions"][0]["epsilon"] is None


def test_a_bom_and_blank_lines_are_tolerated(make_survey):
    survey = make_survey(n_questions=1)
    assert exports.import_responses(survey, "\ufeffq1\n1\n\n0\n") == 2


def test_errors_stop_after_a_limit(make_survey):
    survey = make_survey(n_questions=1)
    text = "q1\n" + "7\n" * 500
    with pytest.raises(exports.ImportRejected) as rejected:
        exports.import_responses(survey, text)
    assert len(rejected.value.errors) == exports.MAX_REPORTED_ERRORS
    assert not Submission.objects.exists()


def test_a_survey_without_questions_accepts_no_import(make_survey):
    survey = make_survey(n_questions=0)
    with pytest.raises(exports.ImportRejected, match="no questions"):
        exports.import_responses(survey, "round\n1\n")


def test_estimates_csv_leaves_missing_values_empty(make_survey):
    survey = make_survey(n_questions=1)
    text = exports.estimates_csv(survey_results(survey))
    header, row = text.splitlines()
    assert header.startswith("question,text,n,n_simulated,yes_count,raw_yes_rate,estimate")
    assert ",0,0,0,,,," in row


def test_estimates_csv_says_how_many_answers_are_simulated(make_survey):
    """The responses file leaves them out, so the estimates file must say they are in n."""
    survey = make_survey(n_questions=1)
    survey.simulate(40, 0.3, np.random.default_rng(1))
    survey.record_submission(uuid.uuid4(), {survey.questions.get().id: 1})
    rows = list(csv.DictReader(io.StringIO(exports.estimates_csv(survey_results(survey)))))
    assert (rows[0]["n"], rows[0]["n_simulated"]) == ("41", "40")


def test_simulate_responses_adds_marked_answers(make_survey, capsys):
    survey = make_survey(n_questions=2)
    call_command(
        "simulate_responses", str(survey.id), "--n", "300", "--true-rate", "0.2", "--seed", "1"
    )
    assert survey.submissions.filter(simulated=True).count() == 300
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
    assert not Submission.objects.exists()


def test_commands_find_a_survey_by_slug_or_join_code_and_refuse_unknown_ones(survey, tmp_path):
    path = tmp_path / "dice.csv"
    path.write_text("q1\n1\n0\n")
    call_command("import_responses", survey.slug, str(path))
    call_command("import_responses", survey.join_code.lower(), str(path))
    assert survey.submissions.count() == 4
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
    assert not Submission.objects.exists()


def test_import_responses_reports_an_unreadable_file(survey, tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_responses", str(survey.id), str(tmp_path / "missing.csv"))


def test_the_demo_spreads_its_simulated_answers_over_twelve_hours():
    call_command("seed_demo", "--responses", "120", stdout=io.StringIO())
    research = Survey.objects.get(mode="research")
    hours = Tally.objects.filter(question__survey=research).counts_by_hour()
    assert len(hours) == 12
    assert sum(n for _, _, n, _ in hours) == 120 * research.questions.count()
    assert [n for _, _, n, _ in hours] == [simulated for *_, simulated in hours]
