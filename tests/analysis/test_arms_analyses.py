"""Designs with arms in the analyses: breakdowns (π and the design's other quantities per
group, small groups hidden alike), breakdowns.csv, the comparison of two groups and of
the two arms, the cross-tab's refusal, and the finite-population correction on the
estimates, all on fixed-seed simulated reports and checked against the maths on the same
counts."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from estimator.arms import CheatingDetection, StochasticLieDetector
from estimator.compare import compare as compare_groups
from estimator.compare import compare_arms
from responses.write import bulk_record
from tests.analysis.test_arms_question import CDM, PLAIN, SLD, create, simulate
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db
BREAKDOWN = "/api/surveys/{survey_id}/estimates/breakdown/"
COMPARE = "/api/surveys/{survey_id}/compare/"
DIRECT = {"name": "direct"}


def grouped_survey(api, design: dict, groups: dict[int, tuple[dict, int]], seed: int = 1):
    """A survey of (design, a direct yes/no question); per answer to the direct question,
    ``(truth, n)`` simulated reports. Returns the survey, the two questions and the
    report counts per group."""
    survey = create(api, design, DIRECT)
    question, by = survey.questions.order_by("id")
    rows, counts = [], {}
    for group, (truth, n) in groups.items():
        reports = simulate(question.design, truth, n, seed=seed + group)
        rows += [{question.id: int(r), by.id: group} for r in reports]
        counts[group] = np.bincount(reports, minlength=4)
    bulk_record(survey, rows, simulated=False)
    return survey, question, by, counts


def test_a_lie_detector_breaks_down_into_pi_and_t_per_group(api):
    groups = {0: ({"pi": 0.2, "second": 0.7}, 3000), 1: ({"pi": 0.5, "second": 0.7}, 4000)}
    survey, question, by, counts = grouped_survey(api, SLD, groups)
    path = BREAKDOWN.format(survey_id=survey.id)
    response = api.get(path, {"question": question.id, "by": by.id, "level": "0.9"})
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, BREAKDOWN, "GET")
    body = response.json()
    assert body["quantities"] == [{"key": "honesty", "label": "Carriers' honesty t"}]
    assert body["method"] == "profile"
    design = StochasticLieDetector()
    for cell in body["categories"]:
        expected = design.estimate(counts[cell["category"]])
        assert not cell["suppressed"] and cell["n"] == expected.n
        assert cell["estimate"] == pytest.approx(expected["pi"])
        assert (cell["ci_low"], cell["ci_high"]) == pytest.approx(expected.ci("pi", 0.9))
        assert cell["honesty"]["estimate"] == pytest.approx(expected["t"])
        assert cell["honesty"]["ci_high"] == pytest.approx(expected.ci("t", 0.9)[1])
        assert [a["n"] for a in cell["arms"]] == expected.per_arm.astype(int).tolist()
    low, high = (body["categories"][g][k] for g, k in ((0, "ci_high"), (1, "ci_low")))
    assert low < high  # 20 % and 50 % told apart
    overall = design.estimate(counts[0] + counts[1])
    assert body["overall"]["estimate"] == pytest.approx(overall["pi"])


def test_the_cheating_model_gives_pi_beta_and_gamma_per_group(api):
    groups = {0: ({"pi": 0.3, "second": 0.15}, 4000), 1: ({"pi": 0.3, "second": 0.0}, 4000)}
    survey, question, by, counts = grouped_survey(api, CDM, groups, seed=11)
    body = api.get(
        BREAKDOWN.format(survey_id=survey.id), {"question": question.id, "by": by.id}
    ).json()
    assert [q["key"] for q in body["quantities"]] == ["honest_no", "cheaters"]
    for cell in body["categories"]:
        expected = CheatingDetection().estimate(counts[cell["category"]])
        assert cell["cheaters"]["estimate"] == pytest.approx(expected["gamma"])
        assert cell["honest_no"]["estimate"] == pytest.approx(expected["beta"])
    cheating, honest = body["categories"]
    assert "is significantly above 0" in cheating["findings"][0]
    assert "is not significantly above 0" in honest["findings"][0]


def test_a_small_group_is_hidden_with_its_protecting_cell_and_carries_no_numbers(api):
    groups = {0: ({"pi": 0.3, "second": 0.8}, 600), 1: ({"pi": 0.3, "second": 0.8}, 6)}
    survey, question, by, _ = grouped_survey(api, SLD, groups)
    body = api.get(
        BREAKDOWN.format(survey_id=survey.id), {"question": question.id, "by": by.id}
    ).json()
    # 6 < k = 10, and the other group would give it away by differencing the total.
    assert [c["suppressed"] for c in body["categories"]] == [True, True]
    assert all(set(c) == {"category", "text", "suppressed"} for c in body["categories"])
    compared = api.get(
        COMPARE.format(survey_id=survey.id), {"question": question.id, "by": by.id, "a": 0, "b": 1}
    )
    assert compared.status_code == 400 and "hidden" in compared.json()["a"][0]
    csv_rows = list(
        csv.DictReader(
            io.StringIO(
                api.get(f"/api/surveys/{survey.id}/estimates/breakdowns.csv").content.decode()
            )
        )
    )
    hidden = [r for r in csv_rows if r["suppressed"] == "true"]
    assert len(hidden) == 2 and all(r["estimate"] == r["n"] == "" for r in hidden)


def test_the_breakdowns_csv_has_a_row_for_pi_and_one_for_t_per_group(api):
    groups = {0: ({"pi": 0.2, "second": 0.7}, 1500), 1: ({"pi": 0.5, "second": 0.7}, 1500)}
    survey, question, by, counts = grouped_survey(api, SLD, groups)
    response = api.get(f"/api/surveys/{survey.id}/estimates/breakdowns.csv")
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["category"], r["option"]) for r in rows] == [
        ("", ""),
        ("", "honesty"),
        ("0", ""),
        ("0", "honesty"),
        ("1", ""),
        ("1", "honesty"),
    ]
    expected = StochasticLieDetector().estimate(counts[1])
    assert float(rows[4]["estimate"]) == pytest.approx(expected["pi"])
    assert float(rows[5]["estimate"]) == pytest.approx(expected["t"])
    assert float(rows[5]["ci_low"]) == pytest.approx(expected.ci("t")[0])
    assert rows[5]["option_text"] == "Carriers' honesty t"


def test_two_groups_of_a_lie_detector_are_compared_with_wald_and_likelihood_ratio(api):
    groups = {0: ({"pi": 0.2, "second": 0.7}, 3000), 1: ({"pi": 0.45, "second": 0.7}, 3000)}
    survey, question, by, counts = grouped_survey(api, SLD, groups, seed=4)
    path = COMPARE.format(survey_id=survey.id)
    response = api.get(path, {"question": question.id, "by": by.id, "a": 1, "b": 0})
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, COMPARE, "GET")
    body = response.json()
    design = StochasticLieDetector()
    expected = compare_groups(design.estimate(counts[1]), design.estimate(counts[0]))
    assert body["difference"] == pytest.approx(expected.difference)
    assert body["ci"] == pytest.approx(list(expected.ci()))
    assert body["lr_p_value"] == pytest.approx(expected.lr_p_value)
    assert body["ci"][0] < 0.25 < body["ci"][1] and body["wald_p_value"] < 1e-4
    assert body["groups"][0]["std_error"] == pytest.approx(
        design.estimate(counts[1]).std_error("pi")
    )


def test_the_likelihood_ratio_of_no_difference_is_calibrated_when_t_differs(api):
    """Same π, different honesty in the two groups: t is free in each, so no difference
    is found in π."""
    groups = {0: ({"pi": 0.3, "second": 0.5}, 4000), 1: ({"pi": 0.3, "second": 0.9}, 4000)}
    survey, question, by, _ = grouped_survey(api, SLD, groups, seed=21)
    body = api.get(
        COMPARE.format(survey_id=survey.id), {"question": question.id, "by": by.id, "a": 0, "b": 1}
    ).json()
    assert body["lr_p_value"] > 0.05 and body["wald_p_value"] > 0.05


@pytest.mark.parametrize(("honesty", "differ"), [(1.0, False), (0.6, True)])
def test_the_two_arms_are_compared_as_if_everyone_followed_the_coins(api, honesty, differ):
    groups = {0: ({"pi": 0.3, "second": honesty}, 2500), 1: ({"pi": 0.3, "second": honesty}, 2500)}
    survey, question, _, counts = grouped_survey(api, SLD, groups, seed=8)
    path = COMPARE.format(survey_id=survey.id)
    response = api.get(path, {"question": question.id, "by": "arm", "a": 0, "b": 1})
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, COMPARE, "GET")
    body = response.json()
    expected = compare_arms(StochasticLieDetector().estimate(counts[0] + counts[1]))
    assert body["by"] == "arm" and "followed the coins" in body["meaning"]
    assert body["difference"] == pytest.approx(expected.difference)
    assert body["lr_p_value"] == pytest.approx(expected.lr_p_value)
    assert (body["lr_p_value"] < 0.01) is differ
    assert [g["text"] for g in body["groups"]] == ["arm 0", "arm 1"]
    flipped = api.get(path, {"question": question.id, "by": "arm", "a": 1, "b": 0}).json()
    assert flipped["difference"] == pytest.approx(-body["difference"])
    assert flipped["ci"] == pytest.approx([-body["ci"][1], -body["ci"][0]])
    assert [g["text"] for g in flipped["groups"]] == ["arm 1", "arm 0"]


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"by": "arm", "a": 0, "b": 1, "question": "plain"}, "by", "has no arms"),
        ({"by": "arm", "a": 2, "b": 1}, "a", "an arm of the design"),
        ({"by": "arm", "a": "x", "b": 1}, "a", "an arm of the design"),
        ({"by": "arm", "a": 1, "b": 1}, "b", "two different arms"),
        ({"by": "arm", "a": 0}, "b", "an arm of the design"),
        ({"by": "sld", "a": 0, "b": 1}, "by", "randomized"),
    ],
)
def test_bad_comparisons_are_a_400_naming_the_field(api, params, field, words):
    survey = create(api, SLD, PLAIN, DIRECT)
    sld, plain, _ = survey.questions.order_by("id")
    bulk_record(survey, [{sld.id: r % 4, plain.id: r % 2} for r in range(40)], simulated=False)
    query = {"question": sld.id} | params
    query = {k: {"plain": plain.id, "sld": sld.id}.get(v, v) for k, v in query.items()}
    response = api.get(COMPARE.format(survey_id=survey.id), query)
    assert response.status_code == 400
    assert words in response.json()[field][0], response.json()


def test_a_crosstab_with_a_design_with_arms_is_refused_naming_the_question_and_why(
    api, client, owner
):
    survey = create(api, SLD, PLAIN)
    sld, plain = survey.questions.order_by("id")
    bulk_record(survey, [{sld.id: r % 4, plain.id: r % 2} for r in range(40)], simulated=False)
    for a, b, field in ((sld.id, plain.id, "a"), (plain.id, sld.id, "b")):
        response = api.get(f"/api/surveys/{survey.id}/crosstab/", {"a": a, "b": b})
        assert response.status_code == 400
        message = response.json()[field][0]
        assert message.startswith("q1 (“Question 0”) uses a design with arms")
        assert "did not follow the coins" in message and "breakdown" in message
    client.force_login(owner)
    page = client.get(f"/surveys/{survey.id}/results/crosstab/").content.decode()
    assert 'id="crosstab-arms"' in page and "“Question 0”" in page
    assert "a joint model of both questions is not offered" in page


def test_the_breakdown_page_shows_t_per_group_and_whether_the_arms_agree(api, client, owner):
    groups = {0: ({"pi": 0.2, "second": 0.6}, 3000), 1: ({"pi": 0.5, "second": 0.6}, 3000)}
    survey, question, by, counts = grouped_survey(api, SLD, groups)
    client.force_login(owner)
    url = f"/surveys/{survey.id}/results/breakdown/"
    html = client.get(url, {"question": question.id, "by": by.id}).content.decode()
    assert 'th scope="col" data-quantity="honesty">Carriers&#x27; honesty t' in html
    assert html.count('<td data-quantity="honesty">') == 3  # all, and each group
    expected = StochasticLieDetector().estimate(counts[0])
    assert f"{100 * expected['t']:.1f} %" in html
    assert 'id="arms-comparison"' in html and "Do the two arms agree?" in html
    compared = client.get(url, {"question": question.id, "by": by.id, "a": 0, "b": 1})
    assert "a difference of" in compared.content.decode()


def test_a_stated_population_narrows_the_arms_intervals_and_is_echoed(api):
    survey = create(api, SLD)
    question = survey.questions.get()
    reports = simulate(StochasticLieDetector(), {"pi": 0.4, "second": 0.7}, 3000, seed=2)
    bulk_record(survey, [{question.id: int(r)} for r in reports], simulated=False)
    path = f"/api/surveys/{survey.id}/estimates/"
    infinite = api.get(path).json()["questions"][0]
    survey.population_size = 4000
    survey.save(update_fields=["population_size"])
    finite = api.get(path).json()["questions"][0]
    assert infinite["population"] is None and finite["population"] == 4000
    expected = StochasticLieDetector().estimate(np.bincount(reports, minlength=4), population=4000)
    assert finite["std_error"] == pytest.approx(expected.std_error("pi"))
    assert finite["std_error"] < infinite["std_error"]
    assert finite["ci_high"] - finite["ci_low"] < infinite["ci_high"] - infinite["ci_low"]
    assert finite["estimate"] == pytest.approx(infinite["estimate"])


def test_the_planner_gives_the_power_of_a_design_with_arms(api):
    body = {"design": CDM, "q": 0.3, "q_null": 0.2, "q_other": 0.15, "n": 2000}
    response = api.post("/api/planning/", body, format="json")
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, "/api/planning/", "POST")
    plan = response.json()
    design = CheatingDetection()
    assert plan["power_one"] == pytest.approx(design.power(0.3, 0.2, 2000))
    assert plan["power_two"] == pytest.approx(design.power_two_groups(0.3, 0.15, 2000))
    assert 0.05 < plan["power_one"] < plan["power_two"] < 1


def test_the_planner_takes_a_prevalence_of_0_for_the_lie_detector(api):
    """At π = 0 the honesty t drops out of the model; the power still has its limit."""
    body = {"design": SLD, "q": 0.2, "q_null": 0.0, "q_other": 0.0, "n": 500}
    response = api.post("/api/planning/", body, format="json")
    assert response.status_code == 200, response.json()
    plan = response.json()
    assert 0.5 < plan["power_two"] < plan["power_one"] <= 1
