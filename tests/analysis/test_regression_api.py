"""The regression endpoint and the Model page: a randomized yes/no question on directly
asked covariates, fitted from the counts per (covariate pattern, report)."""

from __future__ import annotations

import pytest

from estimator.regression import design_matrix, fit, fit_with_randomized_covariate
from tests.analysis.analysis_data import (
    FACULTIES,
    api_for,
    fill,
    questions,
)
from tests.storage import stored_reports
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db
PATH = "/api/surveys/{survey_id}/regression/"


def post(user, survey, body):
    return api_for(user).post(PATH.format(survey_id=survey.id), body, format="json")


def rows(survey) -> list[dict[int, int]]:
    """Every submission's answers, read one by one (only the test does this)."""
    return stored_reports(survey)


def test_the_fit_matches_the_maths_on_one_row_per_respondent(owner, study):
    fill(study, [400, 300, 300, 300])
    q = questions(study)
    response = post(owner, study, {"outcome": q["cheat"], "covariates": [q["faculty"], q["age"]]})
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, PATH, "POST")
    body = response.json()
    assert [c["term"] for c in body["coefficients"]] == [
        "(Intercept)",
        "q1[Law]",
        "q1[Science]",
        "q1[Medicine]",
        "q2",
    ]
    # The same model fitted from one row per respondent (every row its own pattern).
    data = rows(study)
    design = study.questions.get(id=q["cheat"]).design
    expected = fit(
        design_matrix(
            {
                "q1": [FACULTIES[r[q["faculty"]]] for r in data],
                "q2": [r[q["age"]] for r in data],
            },
            levels={"q1": FACULTIES},
        ),
        yes=[r[q["cheat"]] for r in data],
        n=[1] * len(data),
        t=design.t,
        c=design.c,
    )
    assert body["n"] == expected.n == 1300
    assert body["log_likelihood"] == pytest.approx(expected.log_likelihood, rel=1e-9)
    for coefficient, want in zip(body["coefficients"], expected.coefficients, strict=True):
        assert coefficient["estimate"] == pytest.approx(want.estimate, rel=1e-6, abs=1e-9)
        assert coefficient["std_error"] == pytest.approx(want.std_error, rel=1e-6)
        assert coefficient["odds_ratio"] == pytest.approx(want.odds_ratio, rel=1e-6)
        assert coefficient["ci_low"] == pytest.approx(want.ci_low, rel=1e-6)
        assert coefficient["ci_high"] == pytest.approx(want.ci_high, rel=1e-6)
        assert coefficient["std_error_opg"] == pytest.approx(want.std_error_opg, rel=1e-6)
        if want.name == "(Intercept)":
            assert coefficient["lr_p_value"] is None
        else:
            assert coefficient["lr_p_value"] == pytest.approx(want.lr_p_value, rel=1e-5)
    assert body["std_error_method"] == "observed_information"
    assert body["n_patterns"] < body["n"]  # grouped: one row per pattern


def test_the_seeded_faculty_effect_is_found(owner, study):
    fill(study, [1500, 1500, 1500, 1500], seed=11)
    q = questions(study)
    body = post(owner, study, {"outcome": q["cheat"], "covariates": [q["faculty"]]}).json()
    medicine = next(c for c in body["coefficients"] if c["term"] == "q1[Medicine]")
    assert medicine["ci_low"] > 1  # truth: 40 % + age vs 10 % + age in Arts


def test_a_randomized_yes_no_covariate_enters_as_its_latent_truth(owner, study):
    """As rr::rrreg.predictor: plagiarism's true answer is never seen, only its report;
    the grouped fit is the maths' fit on one row per respondent."""
    fill(study, [300, 300, 300, 300])
    q = questions(study)
    response = post(
        owner, study, {"outcome": q["cheat"], "covariates": [q["plagiarise"], q["age"]]}
    )
    assert response.status_code == 200, response.json()
    assert_matches_schema(response, PATH, "POST")
    body = response.json()
    # The direct covariates first, then the randomized one's latent truth.
    assert [c["term"] for c in body["coefficients"]] == ["(Intercept)", "q2", "q4"]
    assert [c["randomized"] for c in body["covariates"]] == [False, True]
    data = rows(study)
    outcome = study.questions.get(id=q["cheat"]).design
    covariate = study.questions.get(id=q["plagiarise"]).design
    expected = fit_with_randomized_covariate(
        design_matrix({"q2": [r[q["age"]] for r in data]}),
        [r[q["plagiarise"]] for r in data],
        yes=[r[q["cheat"]] for r in data],
        n=[1] * len(data),
        t=outcome.t,
        c=outcome.c,
        covariate_t=covariate.t,
        covariate_c=covariate.c,
        covariate_name="q4",
    )
    assert body["log_likelihood"] == pytest.approx(expected.log_likelihood, rel=1e-6)
    for coefficient, want in zip(body["coefficients"], expected.coefficients, strict=True):
        assert coefficient["estimate"] == pytest.approx(want.estimate, rel=1e-3, abs=1e-4)
        assert coefficient["std_error"] == pytest.approx(want.std_error, rel=1e-2)
    latent = body["coefficients"][-1]
    assert latent["lr_p_value"] is not None and latent["std_error_opg"] is None


def test_a_yes_no_covariate_enters_as_its_0_1(owner, study):
    fill(study, [200, 200, 200, 200])
    q = questions(study)
    body = post(owner, study, {"outcome": q["cheat"], "covariates": [q["job"]]}).json()
    assert [c["term"] for c in body["coefficients"]] == ["(Intercept)", "q6"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"covariates": ["faculty"]}, "outcome"),
        ({"outcome": "zzz", "covariates": []}, "outcome"),
        ({"outcome": 999999, "covariates": []}, "outcome"),
        ({"outcome": "faculty", "covariates": []}, "outcome"),  # asked directly
        ({"outcome": "job", "covariates": []}, "outcome"),  # yes/no, but direct
        ({"outcome": "often", "covariates": []}, "outcome"),  # not yes/no
        ({"outcome": "cheat", "covariates": ["often"]}, "covariates"),  # randomized choice
        ({"outcome": "cheat", "covariates": ["cheat"]}, "covariates"),  # the outcome itself
        ({"outcome": "cheat", "covariates": [999999]}, "covariates"),
        ({"outcome": "cheat", "covariates": ["faculty", "faculty"]}, "covariates"),
        ({"outcome": "cheat", "covariates": "faculty"}, "covariates"),
        ({"outcome": "cheat", "covariates": []}, "covariates"),
        ({"outcome": "cheat"}, "covariates"),
        ({"outcome": "cheat", "covariates": [], "level": 3}, "detail"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(owner, study, body, field):
    fill(study, [50, 50, 50, 50])
    q = questions(study)

    def resolve(value):
        if isinstance(value, list):
            return [resolve(v) for v in value]
        return q.get(value, value) if isinstance(value, str) else value

    response = post(owner, study, {key: resolve(value) for key, value in body.items()})
    assert response.status_code == 400
    assert field in response.json(), response.json()


def test_too_little_data_is_a_400_that_says_why(owner, study):
    q = questions(study)
    nothing_yet = post(owner, study, {"outcome": q["cheat"], "covariates": [q["faculty"]]})
    assert nothing_yet.status_code == 400 and "outcome" in nothing_yet.json()
    fill(study, [40, 0, 0, 0])  # only Arts: the other faculties' dummies never vary
    response = post(owner, study, {"outcome": q["cheat"], "covariates": [q["faculty"]]})
    assert response.status_code == 400
    assert "covariates" in response.json()


def test_a_body_that_is_not_an_object_is_a_400(owner, study):
    response = api_for(owner).post(PATH.format(survey_id=study.id), [1, 2], format="json")
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("persona", "status"), [("owner", 200), ("viewer", 200), ("outsider", 404)]
)
def test_only_the_surveys_team_fits_a_model(personas, study, persona, status):
    fill(study, [100, 100, 100, 100])
    q = questions(study)
    response = post(personas[persona], study, {"outcome": q["cheat"], "covariates": [q["faculty"]]})
    assert response.status_code == status


def test_the_model_page_shows_the_coefficients(client, owner, study):
    fill(study, [400, 300, 300, 300])
    q = questions(study)
    client.force_login(owner)
    page = client.get(
        f"/surveys/{study.id}/results/model/",
        {"outcome": q["cheat"], "covariates": [q["faculty"], q["age"]]},
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and "<title" in html and "<desc" in html
    assert "q1[Medicine]" in html and "Odds ratio" in html
    assert "p (LR)" in html and "Std. error (OPG)" in html
    # The other randomized yes/no question is offered as a covariate, said to be latent.
    assert f'value="{q["plagiarise"]}"' in html and "enters as an unseen 0/1" in html


def test_the_model_page_is_404_for_outsiders(client, outsider, study):
    client.force_login(outsider)
    assert client.get(f"/surveys/{study.id}/results/model/").status_code == 404


def test_the_fit_reads_grouped_counts_only(owner, study, django_assert_max_num_queries):
    fill(study, [50, 50, 50, 50])
    q = questions(study)
    from analysis.grouped import regression

    study = type(study).objects.prefetch_related("questions").get(id=study.id)
    # The model's grouped counts, and the breakdowns' (to refuse a hidden group): a
    # fixed number of GROUP BY queries whatever the number of respondents.
    with django_assert_max_num_queries(6):
        regression(study, q["cheat"], [q["faculty"]])


def test_the_model_page_says_why_a_model_cannot_be_fitted(client, owner, study):
    fill(study, [40, 0, 0, 0])
    q = questions(study)
    client.force_login(owner)
    page = client.get(
        f"/surveys/{study.id}/results/model/", {"outcome": q["cheat"], "covariates": [q["faculty"]]}
    )
    assert page.status_code == 200
    assert 'role="alert"' in page.content.decode() and "<svg" not in page.content.decode()


def test_a_model_never_shows_a_group_the_breakdowns_hide(client, owner, study):
    """With faculty as its only covariate the model fits each faculty's share exactly:
    a faculty of 6 (hidden in the breakdown, with another one to protect it) would be
    published, and the total minus the rest would give it away. The fit is refused,
    saying which groups and why, on the API and the page."""
    fill(study, [300, 250, 200, 6])
    q = questions(study)
    response = post(owner, study, {"outcome": q["cheat"], "covariates": [q["faculty"]]})
    assert response.status_code == 400
    message = response.json()["covariates"][0]
    assert "Medicine" in message and "fewer than 10 respondents" in message
    assert "Science" in message  # hidden to protect Medicine: not shown by the model either
    assert post(owner, study, {"outcome": q["cheat"], "covariates": [q["age"]]}).status_code == 200
    client.force_login(owner)
    page = client.get(
        f"/surveys/{study.id}/results/model/", {"outcome": q["cheat"], "covariates": [q["faculty"]]}
    ).content.decode()
    assert 'role="alert"' in page and "Medicine" in page and "<svg" not in page


def test_the_model_page_speaks_of_this_surveys_questions_and_options(client, owner, study):
    """Its hint names one of this model's own terms, its errors the question's column
    (q3, as in the builder and exports), never a database id or another survey's option."""
    fill(study, [100, 100, 100, 100])
    q = questions(study)
    client.force_login(owner)
    url = f"/surveys/{study.id}/results/model/"
    by_age = client.get(url, {"outcome": q["cheat"], "covariates": [q["age"]]}).content.decode()
    assert "q1[" not in by_age and "A term such as" not in by_age
    by_faculty = client.get(
        url, {"outcome": q["cheat"], "covariates": [q["faculty"]]}
    ).content.decode()
    assert "A term such as q1[Law] compares" in by_faculty
    response = post(owner, study, {"outcome": q["faculty"], "covariates": [q["age"]]})
    assert response.json()["outcome"] == [
        "q1 (“Faculty?”) is asked directly: outcome must be a randomized question"
    ]
    response = post(owner, study, {"outcome": q["cheat"], "covariates": [q["often"]]})
    assert response.json()["covariates"][0].startswith(
        "q5 (“How often?”) is a randomized choice question"
    )
