"""Simulated answers are counted in n and the estimates, and said so wherever n is shown.

The CSV exports leave simulated answers out; the dashboard and the estimates API count
them (the demo and classroom rely on that). Without ``n_simulated`` a researcher comparing
the export's rows with the dashboard's n would get two numbers and no explanation.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from analysis.results import survey_results
from estimator.randomized_response import ForcedResponse
from responses.write import record_submission, simulate_respondents
from tests.storage import stored_reports

pytestmark = pytest.mark.django_db

REAL, SIMULATED = 30, 40
MESSAGE = f"(of which {SIMULATED} simulated; exports leave them out)"


def record_real(survey, n: int = REAL) -> None:
    """``n`` real respondents, a third of whom report yes to every question."""
    questions = list(survey.questions.all())
    for i in range(n):
        record_submission(survey, uuid.uuid4(), {q.id: int(i % 3 == 0) for q in questions})


@pytest.fixture
def mixed(make_survey):
    """Two questions, answered by REAL real and SIMULATED simulated respondents."""
    survey = make_survey(n_questions=2)
    record_real(survey)
    simulate_respondents(survey, SIMULATED, 0.6, np.random.default_rng(5))
    return survey


def estimates(api, survey) -> dict:
    response = api.get(f"/api/surveys/{survey.id}/estimates/")
    assert response.status_code == 200
    return response.json()


def dashboard(client, survey, **headers) -> str:
    return client.get(f"/surveys/{survey.id}/results/", **headers).content.decode()


def test_the_api_gives_the_simulated_count_next_to_n(api, mixed):
    body = estimates(api, mixed)
    assert (body["n_responses"], body["n_simulated"]) == (REAL + SIMULATED, SIMULATED)
    for row in body["questions"]:
        assert (row["n"], row["n_simulated"]) == (REAL + SIMULATED, SIMULATED)
        assert isinstance(row["n_simulated"], int)


def test_without_simulated_answers_the_api_says_zero(api, make_survey):
    survey = make_survey(n_questions=2)
    record_real(survey)
    body = estimates(api, survey)
    assert body["n_simulated"] == 0
    assert [(row["n"], row["n_simulated"]) for row in body["questions"]] == [(REAL, 0)] * 2


def test_a_survey_without_answers_has_no_simulated_ones(api, make_survey):
    body = estimates(api, make_survey(n_questions=2))
    assert body["n_simulated"] == 0
    assert [row["n_simulated"] for row in body["questions"]] == [0, 0]


def test_the_estimates_still_include_the_simulated_answers(api, mixed):
    """Only a count is added: each estimate is the one from all the round's reports."""
    rows = estimates(api, mixed)["questions"]
    for question, row in zip(mixed.questions.all(), rows, strict=True):
        real_yes = sum(1 for i in range(REAL) if i % 3 == 0)
        simulated_yes = sum(r[question.id] for r in stored_reports(mixed, simulated=True))
        expected = ForcedResponse().estimate(real_yes + simulated_yes, REAL + SIMULATED)
        low, high = expected.ci(0.95, "wilson")
        assert (row["n"], row["yes_count"]) == (REAL + SIMULATED, real_yes + simulated_yes)
        assert row["estimate"] == pytest.approx(expected.estimate)
        assert row["estimate_unbiased"] == pytest.approx(expected.estimate_unbiased)
        assert row["std_error"] == pytest.approx(expected.std_error)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))


def test_only_the_current_rounds_simulated_answers_are_counted(api, mixed):
    mixed.new_round()
    record_real(mixed, 5)
    body = estimates(api, mixed)
    assert [(row["n"], row["n_simulated"]) for row in body["questions"]] == [(5, 0)] * 2
    earlier = survey_results(mixed, round=1)
    assert [r.n_simulated for r in earlier.questions] == [SIMULATED] * 2


def test_the_simulated_count_costs_no_query_per_question(
    api, make_survey, django_assert_max_num_queries
):
    survey = make_survey(n_questions=5)
    record_real(survey)
    simulate_respondents(survey, SIMULATED, 0.5, np.random.default_rng(1))
    # The survey, its questions, the sealed tallies, the current hour's hours and its rows
    # (grouped), the designs.
    with django_assert_max_num_queries(6):
        body = estimates(api, survey)
    assert [row["n_simulated"] for row in body["questions"]] == [SIMULATED] * 5


def test_the_dashboard_says_how_many_responses_are_simulated(logged_in, mixed):
    page = dashboard(logged_in, mixed)
    assert f"<strong data-n-responses>{REAL + SIMULATED}</strong> responses" in page
    assert MESSAGE in page
    cell = (
        f'<td data-n>{REAL + SIMULATED} <span class="hint" data-n-simulated>'
        f"({SIMULATED}&nbsp;simulated)</span></td>"
    )
    assert page.count(cell) == 2


def test_the_chart_over_time_says_how_many_of_its_n_are_simulated(logged_in, mixed):
    page = dashboard(logged_in, mixed)
    assert f"(n = {REAL + SIMULATED}, {SIMULATED} simulated)</text>" in page
    assert f"UTC, n = {REAL + SIMULATED}, {SIMULATED} simulated:" in page  # its description


def test_a_chart_of_simulated_answers_only_says_all(logged_in, make_survey):
    survey = make_survey()
    simulate_respondents(survey, SIMULATED, 0.6, np.random.default_rng(5))
    assert f"(n = {SIMULATED}, all simulated)</text>" in dashboard(logged_in, survey)


def test_the_polled_fragment_says_it_too(logged_in, mixed):
    page = dashboard(logged_in, mixed, HTTP_HX_REQUEST="true")
    assert page.lstrip().startswith('<div id="results"')
    assert MESSAGE in page
    assert page.count("data-n-simulated") == 3


def test_without_simulated_answers_the_dashboard_says_nothing_of_them(logged_in, make_survey):
    survey = make_survey(n_questions=2)
    record_real(survey)
    for page in (dashboard(logged_in, survey), dashboard(logged_in, survey, HTTP_HX_REQUEST="1")):
        assert f"<strong data-n-responses>{REAL}</strong> responses" in page
        assert page.count(f"<td data-n>{REAL}</td>") == 2
        assert "data-n-simulated" not in page
        assert "of which" not in page
        assert " simulated)</text>" not in page and " simulated:" not in page
    assert f"(n = {REAL})</text>" in dashboard(logged_in, survey)
