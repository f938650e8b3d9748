"""Storage and estimates for every kind of question: tallies keep count, sum and sum of
squares on every write path; the estimates endpoint answers per kind from them alone."""

from __future__ import annotations

import json
import math
import uuid
from collections import Counter
from datetime import timedelta

import numpy as np
import pytest

from analysis.results import survey_results
from estimator.estimates import NumberStats
from responses.counts import survey_counts
from responses.models import Tally
from responses.sealing import seal
from responses.write import bulk_record, record_submission, simulate_respondents
from survey.models import Survey, current_hour
from tests.storage import nothing_stored, stored_count, stored_reports
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db

CHOICES = ["never", "once", "more than once"]
COMMON_KEYS = {
    "question",
    "text",
    "n",
    "n_simulated",
    "skipped",
    "level",
    "method",
    "epsilon",
    "population",
}
BINARY_KEYS = COMMON_KEYS | {
    "yes_count",
    "raw_yes_rate",
    "estimate",
    "estimate_unbiased",
    "std_error",
    "ci_low",
    "ci_high",
}
OPTION_KEYS = {
    "index",
    "text",
    "count",
    "raw_rate",
    "estimate",
    "estimate_unbiased",
    "std_error",
    "ci_low",
    "ci_high",
}
NUMBER_KEYS = COMMON_KEYS | {
    "kind",
    "mean",
    "mean_unbiased",
    "std_error",
    "ci_low",
    "ci_high",
    "lower",
    "upper",
    "noise_variance",
    "typical_noise",
    "warning",
    "histogram",
}


@pytest.fixture
def mixed(owner) -> Survey:
    """One question of every kind, randomized, and three asked directly."""
    survey = Survey.objects.create(owner=owner, title="Mixed", status=Survey.Status.OPEN)
    specs = [
        ("binary", [], "forced_response", {"p_truth": 0.5, "p_yes": 0.5}),
        ("choice", CHOICES, "k_rr", {"epsilon": math.log(3)}),
        ("number", [], "laplace", {"epsilon": 1.0, "lower": 0, "upper": 10}),
        ("choice", ["first year", "second year"], "direct", {}),
        ("number", [], "direct", {"lower": 16, "upper": 99}),
        ("binary", [], "direct", {}),
    ]
    for i, (kind, options, name, params) in enumerate(specs):
        survey.questions.create(
            position=i,
            text=f"Q{i}",
            kind=kind,
            options=options,
            design_name=name,
            design_params=params,
        )
    return survey


def reports_for(survey: Survey, n: int, seed: int) -> list[dict[int, int]]:
    rng = np.random.default_rng(seed)
    questions = list(survey.questions.all())
    truths = [0.3, [0.5, 0.3, 0.2], {"mean": 4, "sd": 3}, [0.6, 0.4], {"mean": 22, "sd": 4}, 0.5]
    from estimator.simulation import simulate_reports

    columns = [
        simulate_reports(q.design, t, n, rng) for q, t in zip(questions, truths, strict=True)
    ]
    return [
        {q.id: int(col[i]) for q, col in zip(questions, columns, strict=True)} for i in range(n)
    ]


def answered(survey: Survey, q) -> list[int]:
    return [r[q.id] for r in stored_reports(survey) if r.get(q.id) is not None]


def sums_from_answers(survey: Survey) -> dict[int, NumberStats]:
    """What the tallies must hold, recomputed from every stored answer."""
    result = {}
    for q in survey.questions.all():
        values = answered(survey, q)
        result[q.id] = NumberStats(len(values), sum(values), sum(v * v for v in values))
    return result


def keyed_counts_from_answers(survey: Survey) -> dict[int, Counter]:
    return {
        q.id: Counter(q.design.tally_key(v) for v in answered(survey, q))
        for q in survey.questions.all()
    }


def assert_tallies_match_answers(survey: Survey) -> None:
    tallies = survey_counts(survey).tallies
    assert {q: tuple(t.stats) for q, t in tallies.items() if t.count} == {
        q: tuple(s) for q, s in sums_from_answers(survey).items() if s.count
    }
    for qid, expected in keyed_counts_from_answers(survey).items():
        assert dict(tallies[qid].counts) if qid in tallies else dict(expected) == {}


def submit(client, survey: Survey, values: dict[int, int]):
    body = {
        "submission_id": str(uuid.uuid4()),
        "answers": [{"question": q, "value": v} for q, v in values.items()],
    }
    return client.post(
        f"/api/public/surveys/{survey.slug}/responses/",
        json.dumps(body),
        content_type="application/json",
    )


# Every write path keeps count, sum and sum of squares --------------------------------


@pytest.mark.django_db(transaction=True)
def test_every_write_path_keeps_counts_sums_and_squares(mixed, client):
    reports = reports_for(mixed, 60, seed=1)
    for values in reports[:20]:  # the respondents' fast path (one statement on PostgreSQL)
        assert submit(client, mixed, values).status_code == 201
    for values in reports[20:30]:  # the full path
        assert record_submission(mixed, uuid.uuid4(), values)
    bulk_record(mixed, reports[30:], simulated=False)  # import
    simulate_respondents(
        mixed,  # simulation
        25,
        {
            q.id: t
            for q, t in zip(
                mixed.questions.all(),
                [0.2, [0.2, 0.3, 0.5], {"uniform": True}, [0.5, 0.5], {"mean": 30, "sd": 9}, 0.1],
                strict=True,
            )
        },  # fmt: skip
        np.random.default_rng(2),
    )
    assert stored_count() == 85
    assert_tallies_match_answers(mixed)


def test_a_number_report_is_tallied_in_a_bin_with_its_exact_sums(mixed):
    number = mixed.questions.get(kind="number", design_name="laplace")
    others = {q.id: 0 for q in mixed.questions.exclude(pk=number.pk)}
    design = number.design
    far = design.upper + design.max_distance  # the farthest report the design can make
    for value in (far, -design.max_distance, 7, 7):
        assert record_submission(mixed, uuid.uuid4(), others | {number.id: value})
    _, _, bins = design.report_bins
    for _ in ("current hour", "sealed"):
        tally = survey_counts(mixed).tally(number.id)
        assert tuple(tally.stats) == (
            4,
            far - design.max_distance + 14,
            far**2 + design.max_distance**2 + 98,
        )
        assert set(tally.counts) == {bins + 1, 0, design.tally_key(7)}
        seal(everything=True)


def test_sums_of_squares_beyond_a_bigint_stay_exact(owner):
    """Reports of a few 10⁹ (wide bounds, the smallest ε) from many respondents: Σr² passes
    2⁶³ and stays exact on PostgreSQL (numeric); estimates still work on both."""
    survey = Survey.objects.create(owner=owner, title="Wide", status=Survey.Status.OPEN)
    q = survey.questions.create(
        text="Income?",
        kind="number",
        design_name="laplace",
        design_params={"epsilon": 0.01, "lower": -1_000_000, "upper": 1_000_000},
    )
    big = 3_000_000_000
    assert q.design.check_report(big) == big
    bulk_record(survey, [{q.id: big}] * 600 + [{q.id: -big}] * 400, simulated=False)
    for _ in ("current hour", "sealed"):
        (count, total, total_sq) = survey_counts(survey).tally(q.id).stats
        assert (count, total) == (1000, 200 * big)
        assert total_sq == pytest.approx(1000 * big * big, rel=1e-15)
        assert total_sq > 2**63
        [entry] = survey_results(survey).as_dict()["questions"]
        assert entry["mean_unbiased"] == pytest.approx(0.2 * big)
        seal(everything=True)


def test_sealing_keeps_every_sum_and_one_tally_row_per_key(mixed, monkeypatch):
    earlier = current_hour() - timedelta(hours=2)
    for i in range(6):
        bulk_record(mixed, reports_for(mixed, 10, seed=10 + i), simulated=False, hour=earlier)
    record_submission(mixed, uuid.uuid4(), reports_for(mixed, 1, seed=3)[0])  # this hour
    before = survey_results(mixed).as_dict()
    assert_tallies_match_answers(mixed)
    monkeypatch.setattr("responses.sealing.CHUNK", 7)  # many chunks, each its own rows
    seal(everything=True)
    assert survey_results(mixed).as_dict() == before
    assert_tallies_match_answers(mixed)
    keys = list(
        Tally.objects.filter(question__survey=mixed).values_list(
            "question_id", "round", "simulated", "hour", "value"
        )
    )
    assert len(keys) == len(set(keys))


# Bad reports of every kind ----------------------------------------------------------


def bad_cases(survey: Survey) -> list[tuple[str, int, object]]:
    by = {(q.kind, q.design_name): q for q in survey.questions.all()}
    laplace = by[("number", "laplace")].design
    return [
        ("binary 2", by[("binary", "forced_response")].id, 2),
        ("choice out of range", by[("choice", "k_rr")].id, 3),
        ("choice negative", by[("choice", "k_rr")].id, -1),
        ("choice as string", by[("choice", "k_rr")].id, "1"),
        ("choice as float", by[("choice", "k_rr")].id, 1.0),
        ("choice as fraction", by[("choice", "k_rr")].id, 1.5),
        (
            "number beyond the mechanism",
            by[("number", "laplace")].id,
            laplace.upper + laplace.max_distance + 1,
        ),  # fmt: skip
        (
            "number far below",
            by[("number", "laplace")].id,
            laplace.lower - laplace.max_distance - 1,
        ),
        ("number as float", by[("number", "laplace")].id, 2.5),
        ("number as string", by[("number", "laplace")].id, "7"),
        ("direct number outside its bounds", by[("number", "direct")].id, 100),
        ("direct choice out of range", by[("choice", "direct")].id, 2),
    ]


@pytest.mark.django_db(transaction=True)
def test_bad_reports_of_every_kind_are_400_naming_the_field_and_store_nothing(mixed, client):
    good = reports_for(mixed, 1, seed=3)[0]
    for label, qid, value in bad_cases(mixed):
        body = {
            "submission_id": str(uuid.uuid4()),
            "answers": [
                {"question": q, "value": value if q == qid else v} for q, v in good.items()
            ],
        }
        response = client.post(
            f"/api/public/surveys/{mixed.slug}/responses/",
            json.dumps(body),
            content_type="application/json",
        )
        assert response.status_code == 400, label
        assert "answers" in response.json(), label
        assert nothing_stored(), label
    assert submit(client, mixed, good).status_code == 201


# Simulation -------------------------------------------------------------------------


def test_simulate_every_kind_from_its_true_distribution(mixed):
    questions = list(mixed.questions.all())
    truths = [0.3, [0.6, 0.3, 0.1], {"mean": 4, "sd": 2}, [0.25, 0.75], {"uniform": True}, 0.9]
    truth = dict(zip([q.id for q in questions], truths, strict=True))
    assert simulate_respondents(mixed, 4000, truth, np.random.default_rng(7)) == 4000
    assert stored_count(mixed, simulated=True) == stored_count(mixed) == 4000
    entries = {e["question"]: e for e in survey_results(mixed).as_dict()["questions"]}
    binary, choice, number, direct_choice, direct_number, direct_binary = (
        entries[q.id] for q in questions
    )
    assert binary["ci_low"] <= 0.3 <= binary["ci_high"]
    for option, share in zip(choice["options"], truths[1], strict=True):
        assert option["ci_low"] <= share <= option["ci_high"]
    # The mean of the clipped normal: close to 4 (clipping at 0 adds a little).
    assert number["ci_low"] <= 4.05 <= number["ci_high"]
    assert [o["count"] for o in direct_choice["options"]][0] == pytest.approx(1000, abs=150)
    assert direct_number["mean"] == pytest.approx((16 + 99) / 2, abs=1.5)
    assert direct_binary["raw_yes_rate"] == pytest.approx(0.9, abs=0.03)


def test_simulate_keeps_the_classic_true_rate_call(survey):
    assert simulate_respondents(survey, 500, 0.3, np.random.default_rng(3)) == 500
    [row] = survey_results(survey).as_dict()["questions"]
    assert row["n"] == row["n_simulated"] == 500


@pytest.mark.parametrize(
    "truth",
    [0.5, [0.5, 0.5], [0.5, 0.3, 0.3], [1.2, -0.1, -0.1], "uniform", {"mean": 1}, {"sd": 1}],
    ids=["rate-for-choice", "too-few", "not-summing", "out-of-range", "string", "no-sd", "no-mean"],
)
def test_a_truth_that_does_not_fit_the_question_is_refused_and_stores_nothing(owner, truth):
    survey = Survey.objects.create(owner=owner, title="Choice", status=Survey.Status.OPEN)
    survey.questions.create(
        text="How often?", kind="choice", options=CHOICES, design_name="k_rr", design_params={}
    )
    with pytest.raises(ValueError):
        simulate_respondents(survey, 10, truth, np.random.default_rng(1))
    assert nothing_stored()


# The estimates endpoint ---------------------------------------------------------------


def test_estimates_give_one_entry_per_kind_from_the_design(mixed, api):
    bulk_record(mixed, reports_for(mixed, 400, seed=5), simulated=False)
    response = api.get(f"/api/surveys/{mixed.id}/estimates/", {"level": "0.9"})
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{survey_id}/estimates/", "GET")
    body = response.json()
    questions = list(mixed.questions.all())
    binary, choice, number, direct_choice, direct_number, direct_binary = body["questions"]
    assert body["epsilon_total"] == pytest.approx(2 * math.log(3) + 1.0)
    assert body["n_direct"] == 3 and body["n_responses"] == 400

    assert set(binary) == BINARY_KEYS
    assert set(choice) == COMMON_KEYS | {"kind", "options", "warning"}
    assert set(number) == NUMBER_KEYS
    assert set(direct_binary) == BINARY_KEYS | {"direct"}
    assert set(direct_choice) == COMMON_KEYS | {"kind", "options", "warning", "direct"}
    assert set(direct_number) == NUMBER_KEYS | {"direct"}

    answers = {q.id: answered(mixed, q) for q in questions}
    # Choice: the design's estimate from the counts of each option.
    counts = np.bincount(answers[questions[1].id], minlength=3).tolist()
    expected = questions[1].design.estimate(counts)
    intervals = expected.ci(0.9, "wilson")
    assert choice["kind"] == "choice" and choice["epsilon"] == pytest.approx(math.log(3))
    for j, option in enumerate(choice["options"]):
        assert set(option) == OPTION_KEYS
        assert (option["index"], option["text"], option["count"]) == (j, CHOICES[j], counts[j])
        assert option["raw_rate"] == pytest.approx(counts[j] / 400)
        assert option["estimate"] == pytest.approx(expected.estimate[j])
        assert option["estimate_unbiased"] == pytest.approx(expected.estimate_unbiased[j])
        assert option["std_error"] == pytest.approx(expected.std_errors[j])
        assert (option["ci_low"], option["ci_high"]) == pytest.approx(intervals[j])
    # Number: mean and t interval from count, sum and sum of squares.
    values = answers[questions[2].id]
    mean = np.mean(values)
    expected = questions[2].design.estimate((len(values), sum(values), sum(v * v for v in values)))
    assert number["kind"] == "number" and number["method"] == "t"
    assert number["mean_unbiased"] == pytest.approx(mean)
    assert number["mean"] == pytest.approx(min(10, max(0, mean)))
    assert number["std_error"] == pytest.approx(np.std(values, ddof=1) / 20)
    assert (number["ci_low"], number["ci_high"]) == pytest.approx(expected.ci(0.9))
    assert number["noise_variance"] == pytest.approx(questions[2].design.noise_variance)
    assert sum(b["count"] for b in number["histogram"]) == 400
    # Directly asked: plain shares and means, no ε.
    assert direct_choice["epsilon"] is None and direct_choice["direct"] is True
    plain = np.bincount(answers[questions[3].id], minlength=2) / 400
    assert [o["estimate"] for o in direct_choice["options"]] == pytest.approx(plain.tolist())
    assert direct_number["mean"] == pytest.approx(np.mean(answers[questions[4].id]))
    assert direct_number["noise_variance"] == 0
    assert direct_binary["estimate"] == pytest.approx(np.mean(answers[questions[5].id]))


def test_an_empty_mixed_survey_gives_nulls_and_validates(mixed, api):
    response = api.get(f"/api/surveys/{mixed.id}/estimates/")
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{survey_id}/estimates/", "GET")
    _, choice, number, *_ = response.json()["questions"]
    assert all(o["estimate"] is None and o["ci_low"] is None for o in choice["options"])
    assert number["mean"] is None and number["ci_low"] is None and number["n"] == 0


def test_a_400_for_a_bad_method_validates_against_the_schema(mixed, api):
    response = api.get(f"/api/surveys/{mixed.id}/estimates/", {"method": "bootstrap"})
    assert response.status_code == 400
    assert_matches_schema(response, "/api/surveys/{survey_id}/estimates/", "GET")


def test_the_number_warning_says_when_the_reports_contradict_the_design(owner, api):
    survey = Survey.objects.create(owner=owner, title="Odd", status=Survey.Status.OPEN)
    q = survey.questions.create(
        text="Hours?", kind="number", design_name="laplace",
        design_params={"epsilon": 5.0, "lower": 0, "upper": 10},
    )  # fmt: skip
    bulk_record(survey, [{q.id: 40}, {q.id: 41}] * 50, simulated=False)
    [entry] = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"]
    assert "contradict" in entry["warning"]


def test_estimates_of_a_mixed_survey_read_the_counts_in_a_few_queries(
    mixed, api, django_assert_max_num_queries
):
    bulk_record(mixed, reports_for(mixed, 50, seed=8), simulated=False)
    # Session user, survey, its questions, the sealed tallies, the current hour's hours and
    # its reports grouped: a few queries, however many answers.
    with django_assert_max_num_queries(6):
        response = api.get(f"/api/surveys/{mixed.id}/estimates/")
    assert [row["n"] for row in response.json()["questions"]] == [50] * 6


# The dashboard ----------------------------------------------------------------------


def test_the_dashboard_of_a_mixed_survey_shows_every_kind(mixed, client, owner):
    bulk_record(mixed, reports_for(mixed, 200, seed=9), simulated=False)
    client.force_login(owner)
    response = client.get(f"/surveys/{mixed.id}/results/")
    assert response.status_code == 200
    page = response.content.decode()
    for option in CHOICES:
        assert option in page
    assert page.count('data-kind="number"') == 2 and page.count('data-kind="choice"') == 2
    assert "3 questions asked directly" in page
    htmx = client.get(f"/surveys/{mixed.id}/results/", headers={"HX-Request": "true"})
    assert htmx.status_code == 200


def test_the_dashboard_of_an_empty_mixed_survey_renders(mixed, client, owner):
    client.force_login(owner)
    assert client.get(f"/surveys/{mixed.id}/results/").status_code == 200
