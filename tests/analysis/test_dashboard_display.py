"""What the dashboard draws for each result object, and the charts drawn from it."""

from __future__ import annotations

import math
import re
from datetime import timedelta

import numpy as np
import pytest

from analysis.charts import (
    choice_chart,
    distribution_chart,
    histogram_chart,
    option_estimates_over_time,
)
from analysis.display import Bin, choice_display, number_display, report_bins
from estimator.designs import make_design
from responses.write import bulk_record
from survey.models import Question, Survey, current_hour
from tests.analysis.drawings import narrow, wide
from tests.storage import hours_of

LAPLACE = {"epsilon": 1.0, "lower": 0, "upper": 10}


def laplace_reports(true_values, seed: int = 3, params=LAPLACE):
    design = make_design("number", "laplace", params)
    reports = design.simulate(np.asarray(true_values), np.random.default_rng(seed))
    values, counts = np.unique(reports, return_counts=True)
    stats = (len(reports), int(reports.sum()), int((reports.astype(np.int64) ** 2).sum()))
    return design, design.estimate(stats), dict(zip(values.tolist(), counts.tolist(), strict=True))


def test_choice_rows_carry_the_result_objects_own_numbers():
    design = make_design("choice", "k_rr", {"epsilon": math.log(3)}, k=3)
    est = design.estimate([500, 300, 200])
    shown = choice_display(est, ["a", "b", "c"], 0.9, "exact")
    assert [r.count for r in shown.rows] == [500, 300, 200]
    assert [r.estimate for r in shown.rows] == pytest.approx(list(est.estimate))
    assert [r.unbiased for r in shown.rows] == pytest.approx(list(est.estimate_unbiased))
    assert [r.std_error for r in shown.rows] == pytest.approx(list(est.std_errors))
    assert [r.interval for r in shown.rows] == list(est.ci(0.9, "exact"))
    assert shown.warning is None and not shown.direct


def test_choice_rows_without_reports_have_no_numbers():
    est = make_design("choice", "k_rr", {"epsilon": 1.0}, k=2).estimate([0, 0])
    shown = choice_display(est, ["yes", "no"], 0.95, "wilson")
    assert not shown.has_data
    assert {(r.estimate, r.interval, r.raw_rate) for r in shown.rows} == {(None, None, None)}


def test_a_number_shows_the_mean_interval_and_noise_of_its_result():
    rng = np.random.default_rng(1)
    design, est, counts = laplace_reports(rng.integers(3, 8, 2000))
    shown = number_display(est, 0.95, report_bins(counts))
    assert shown.mean == est.estimate and shown.interval == est.ci(0.95)
    assert shown.noise_variance == pytest.approx(2 * design.alpha / (1 - design.alpha) ** 2)
    assert shown.typical_noise == pytest.approx(math.sqrt(shown.noise_variance))
    assert not shown.clipped and shown.warning is None
    assert sum(b.count for b in shown.bins) == 2000 and len(shown.bins) <= 24


def test_the_deconvolved_distribution_finds_where_the_true_values_are():
    _, est, counts = laplace_reports(np.full(5000, 8), params={**LAPLACE, "epsilon": 5.0})
    shown = number_display(est, 0.95, report_bins(counts))
    shares = dict(shown.distribution)
    assert sum(shares.values()) == pytest.approx(1)
    assert shares[7] + shares[8] + shares[9] > 0.8  # most mass near 8
    assert shares[0] + shares[1] + shares[2] < 0.05


def test_a_direct_number_has_no_noise_and_no_deconvolution():
    design = make_design("number", "direct", {"lower": 16, "upper": 99})
    est = design.estimate((3, 60, 1250))
    shown = number_display(est, 0.95, report_bins({18: 1, 20: 1, 22: 1}))
    assert shown.direct and shown.noise_variance == 0 and shown.distribution == ()
    assert math.isinf(shown.epsilon)


def test_a_mean_interval_reaching_past_a_bound_is_marked_clipped():
    _, est, counts = laplace_reports(np.zeros(30, dtype=int))
    shown = number_display(est, 0.95, report_bins(counts))
    assert shown.clipped and shown.interval[0] == 0


def test_equal_reports_give_no_interval_rather_than_a_zero_width_one():
    est = make_design("number", "direct", {"lower": 0, "upper": 10}).estimate((4, 20, 100))
    shown = number_display(est, 0.95, report_bins({5: 4}))
    assert shown.interval is None and "no spread" in shown.message


def test_report_bins_group_reports_into_at_most_the_limit():
    bins = report_bins({-30: 2, 0: 5, 1: 1, 45: 3}, max_bins=10)
    assert len(bins) <= 10 and sum(b.count for b in bins) == 11
    assert bins[0].low == -30 and bins[-1].high >= 45
    assert all(b.high - b.low + 1 == 8 for b in bins)
    assert report_bins({}) == ()


def test_bins_are_labelled_with_their_reports():
    assert [Bin(3, 3, 1).label, Bin(0, 3, 1).label] == ["3", "0…3"]
    assert [Bin(None, -5, 1).label, Bin(20, None, 1).label] == ["≤ -5", "≥ 20"]


def test_charts_escape_question_and_option_text():
    question = Question(id=9, text="<script>alert(1)</script>?")
    est = make_design("choice", "k_rr", {"epsilon": 1.0}, k=2).estimate([5, 5])
    svg = choice_chart(
        question, choice_display(est, ["<b>x</b>", "y"], 0.95, "wilson"), 0.95, "wilson"
    )
    assert "<script>" not in svg and "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg


def test_every_chart_has_a_narrow_drawing_for_phones_with_its_own_ids():
    question = Question(id=9, text="Colour?")
    est = make_design("choice", "k_rr", {"epsilon": 1.0}, k=2).estimate([5, 5])
    svg = choice_chart(question, choice_display(est, ["red", "blue"], 0.95, "wilson"), 0.95, "")
    assert 'viewBox="0 0 720 ' in wide(svg) and 'viewBox="0 0 300 ' in narrow(svg)
    assert '<title id="choice-9-title">' in wide(svg)
    assert '<title id="choice-9-narrow-title">' in narrow(svg)
    desc = re.search(r"<desc [^>]*>(.*?)</desc>", wide(svg)).group(1)
    assert f">{desc}</desc>" in narrow(svg) and "red: 50.0 %" in desc


def test_histogram_and_distribution_charts_describe_every_bar():
    question = Question(id=4, text="Hours?")
    _, est, counts = laplace_reports(np.full(300, 6))
    shown = number_display(est, 0.95, report_bins(counts))
    hist = histogram_chart(question, shown)
    assert wide(hist).count("<rect ") == narrow(hist).count("<rect ") == len(shown.bins)
    assert all(f"{b.label}: {b.count:,} reports." in hist for b in shown.bins)
    dist = distribution_chart(question, shown)
    assert wide(dist).count("<rect ") == narrow(dist).count("<rect ") == 11
    assert "(rough)" in dist
    assert re.search(r'<title id="dist-4-title">', dist)


@pytest.mark.django_db
def test_each_options_share_over_time_ends_at_its_estimate(owner):
    survey = Survey.objects.create(owner=owner, title="Colours")
    question = survey.questions.create(
        text="Colour?", kind="choice", design_name="k_rr", design_params={"epsilon": 1.5},
        options=["red", "green", "blue"],
    )  # fmt: skip
    hour = current_hour()
    for h, counts in enumerate(([40, 30, 30], [10, 50, 20])):
        reports = [{question.id: j} for j, c in enumerate(counts) for _ in range(c)]
        bulk_record(survey, reports, simulated=h == 0, hour=hour - timedelta(hours=1 - h))
    series = option_estimates_over_time(question, hours_of(question), 0.95, "wilson")
    final = question.design.estimate([50, 80, 50])
    assert [len(s) for s in series] == [2, 2, 2]
    for j, points in enumerate(series):
        assert (points[0].n, points[1].n, points[1].n_simulated) == (100, 180, 100)
        assert (points[-1].ci_low, points[-1].ci_high) == pytest.approx(final.ci()[j])
        assert points[-1].estimate == pytest.approx(min(1, max(0, final.estimate_unbiased[j])))


@pytest.mark.django_db
def test_a_choice_question_without_answers_has_empty_series(owner):
    survey = Survey.objects.create(owner=owner, title="Colours")
    question = survey.questions.create(
        text="Colour?", kind="choice", design_name="direct", options=["a", "b"]
    )
    assert option_estimates_over_time(question, hours_of(question), 0.95, "wilson") == [[], []]
