"""simulate_responses with a truth per question: rates, option probabilities, number
distributions, a JSON file; and a clear error (never a traceback) for anything else."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from analysis.results import survey_results
from responses.write import simulate_respondents
from survey.models import Survey
from tests.storage import nothing_stored, stored_count

pytestmark = pytest.mark.django_db


@pytest.fixture
def mixed(owner) -> Survey:
    survey = Survey.objects.create(owner=owner, title="Mixed", status="open")
    survey.questions.create(
        position=0, text="Cheated?", design_params={"p_truth": 0.5, "p_yes": 0.5}
    )
    survey.questions.create(
        position=1,
        text="How often?",
        kind="choice",
        options=["never", "once", "often"],
        design_name="k_rr",
        design_params={"epsilon": float(np.log(3))},
    )
    survey.questions.create(
        position=2,
        text="Hours?",
        kind="number",
        design_name="laplace",
        design_params={"epsilon": 2.0, "lower": 0, "upper": 20},
    )
    return survey


def simulate(survey: Survey, *args: str) -> None:
    call_command("simulate_responses", str(survey.id), "--n", "3000", "--seed", "3", *args)


def test_a_truth_per_question_is_what_the_estimates_find(mixed, capsys):
    simulate(mixed, "--truth", "q1=0.2", "--truth", "q2=0.5,0.3,0.2", "--truth", "q3=mean:8,sd:3")
    assert stored_count(mixed, simulated=True) == 3000
    cheat, often, hours = survey_results(mixed).questions
    # Within 4.9 standard errors (p < 1e-6) of each truth.
    assert abs(cheat.estimate.estimate_unbiased - 0.2) < 4.9 * cheat.estimate.std_error
    for truth, share, se in zip(
        [0.5, 0.3, 0.2], often.estimate.estimate_unbiased, often.estimate.std_errors, strict=True
    ):
        assert abs(share - truth) < 4.9 * se
    assert abs(hours.estimate.estimate_unbiased - 8) < 4.9 * hours.estimate.std_error
    assert "Added 3000 simulated respondents" in capsys.readouterr().out


def test_a_json_file_and_true_rate_for_the_yes_no_questions_left(mixed, tmp_path):
    truths = tmp_path / "truths.json"
    truths.write_text(json.dumps({"q2": {"uniform": True}, "q3": [0.05] * 20 + [0.0]}))
    simulate(mixed, "--truth-file", str(truths), "--true-rate", "0.4", "--truth", "q3=uniform")
    assert stored_count(mixed, simulated=True) == 3000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "q1 (“Cheated?”, binary) needs a truth: --truth q1=0.3"),
        (
            ["--true-rate", "0.3"],
            "q2 (“How often?”, choice) needs a truth: --truth q2=0.33,0.33,0.33 "
            "(one probability per option: never, once, often)",
        ),
        (
            ["--true-rate", "0.3", "--truth", "q2=0.5,0.5", "--truth", "q3=uniform"],
            "q2 (“How often?”)",
        ),
        (["--true-rate", "0.3", "--truth", "q2=uniform", "--truth", "q3=0.5"], "q3 (“Hours?”)"),
        (["--truth", "q9=0.3"], "no question q9 in this survey; its columns are q1, q2, q3"),
        (["--truth", "q1"], "write it as qN=TRUTH"),
        (["--truth", "q1=lots"], "cannot read the truth 'lots'"),
        (["--truth", "q3=mean:3"], "cannot read the truth 'mean:3'"),
        (["--truth-file", "/nonexistent.json"], "cannot read /nonexistent.json"),
    ],
)
def test_what_is_wrong_is_said_and_nothing_is_stored(mixed, args, message):
    with pytest.raises(CommandError) as raised:
        simulate(mixed, *args)
    assert message in str(raised.value)
    assert nothing_stored()


def test_simulated_respondents_without_a_truth_answer_every_kind_of_question(mixed):
    """Once a ValueError: the default was a yes/no rate, which a choice question refuses."""
    assert simulate_respondents(mixed, 3000, rng=np.random.default_rng(5)) == 3000
    assert stored_count(simulated=True) == 3000
    yes_no, choice, number = survey_results(mixed).questions
    assert yes_no.estimate.estimate == pytest.approx(0.5, abs=0.07)
    assert choice.estimate.estimate == pytest.approx([1 / 3] * 3, abs=0.07)
    assert number.estimate.estimate == pytest.approx(10, abs=1)


def test_a_single_rate_for_a_choice_question_is_refused_and_nothing_stored(mixed):
    with pytest.raises(ValueError, match="a single true rate fits a yes/no question"):
        simulate_respondents(mixed, 10, 0.3)
    assert nothing_stored()
