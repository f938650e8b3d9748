"""The dashboard for every kind of question: yes/no, multiple choice, numbers, and
directly asked ones, with and without answers, and when the data contradict the design."""

from __future__ import annotations

import re
from datetime import timedelta

import numpy as np
import pytest

from analysis import views
from analysis.charts import means_over_time
from analysis.display import choice_display
from estimator.intervals import NO_DATA_MESSAGE
from responses.counts import survey_counts
from responses.write import bulk_record
from survey.models import Survey, current_hour
from tests.analysis.dashboard_survey import (
    COLOURS,
    FACULTY,
    SLEEP,
    add_question,
    answer,
    mixed_survey,
)
from tests.analysis.drawings import narrow, wide
from tests.storage import hours_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def mixed(owner) -> Survey:
    return mixed_survey(owner)


def page(client, survey, query: str = "", **headers) -> str:
    response = client.get(f"/surveys/{survey.id}/results/{query}", **headers)
    assert response.status_code == 200
    return response.content.decode()


def section(html: str, kind: str, n: int = 0) -> str:
    parts = re.findall(
        rf'<section class="panel question-result" data-kind="{kind}".*?</section>', html, re.S
    )
    return parts[n]


def empty(owner, *questions) -> Survey:
    survey = Survey.objects.create(owner=owner, title="Empty", status=Survey.Status.OPEN)
    for args in questions:
        add_question(survey, *args)
    return survey


def test_a_choice_question_has_a_bar_chart_with_whiskers_and_a_table(logged_in, mixed):
    html = section(page(logged_in, mixed), "choice")
    colour = mixed.questions.get(kind="choice", design_name="forced_response")
    est = views.survey_results(mixed).questions[1].estimate
    shown = choice_display(est, COLOURS, 0.95, "wilson")
    for drawing in (wide(html), narrow(html)):
        assert drawing.count('class="svg-whisker"') == 3 * len(COLOURS)
        assert drawing.count('<rect class="svg-bar') == len(COLOURS)
    for row in shown.rows:
        assert f"<strong>{row.estimate * 100:.1f} %</strong>" in html  # the MLE, shown
        assert f"{row.unbiased * 100:.1f} %" in html
        assert f"{row.interval[0] * 100:.1f} % – {row.interval[1] * 100:.1f} %" in html
    assert "maximum-likelihood share on the simplex" in html
    assert f"ε = {colour.epsilon:.2f}" in html
    for header in ("Option", "Count", "Raw rate", "Estimate (MLE)", "Unbiased", "Std. error"):
        assert f'<th scope="col">{header}</th>' in html


def test_the_choice_estimate_shown_lies_on_the_simplex(mixed):
    est = views.survey_results(mixed).questions[1].estimate
    shown = choice_display(est, COLOURS, 0.95, "wilson")
    assert sum(r.estimate for r in shown.rows) == pytest.approx(1)
    assert all(r.interval[0] < r.interval[1] for r in shown.rows)


def test_a_number_question_shows_its_mean_interval_and_privacy_price(logged_in, mixed):
    html = section(page(logged_in, mixed), "number")
    est = views.survey_results(mixed).questions[2].estimate
    low, high = est.ci(0.95)
    assert f"<strong data-mean>{est.estimate:.2f}</strong>" in html
    assert f"{low:.2f} – {high:.2f}" in html
    assert f"±{est.noise_variance**0.5:.1f}" in html
    assert "Number from 0 to 12" in html
    assert 'id="hist-' in html and "histogram of the reports" in html
    assert "Caution:" in html and 'id="dist-' in html  # the deconvolution, with its caution


def test_a_mean_interval_cut_at_a_bound_says_it_was_clipped(logged_in, owner):
    survey = empty(owner, ("number", SLEEP, "laplace", {"epsilon": 1.0, "lower": 0, "upper": 10}))
    sleep = survey.questions.get()
    answer(survey, {sleep: np.zeros(40, dtype=int)})
    html = section(page(logged_in, survey), "number")
    assert "(clipped to 0–10)" in html
    assert "clipped to the bounds 0–10" in html


def test_directly_asked_questions_are_labelled_and_left_out_of_epsilon(logged_in, mixed):
    html = page(logged_in, mixed)
    faculty = section(html, "choice", 1)
    assert FACULTY in faculty
    assert "asked directly" in faculty and "∞ (no privacy)" in faculty
    assert "Unbiased" not in faculty  # plain shares: nothing to de-bias
    randomized = sum(q.epsilon for q in mixed.questions.all() if q.design.randomized)
    assert f"total ε = {randomized:.2f}</span> over 3 randomized questions" in html
    assert "<span data-n-direct>1 question asked directly</span>" in html


def test_infinite_epsilon_is_never_shown_as_a_number(logged_in, owner):
    survey = empty(
        owner,
        ("binary", "Are you a student?", "direct"),
        ("number", "How old are you?", "direct", {"lower": 16, "upper": 99}),
    )
    html = page(logged_in, survey)
    assert "inf" not in html.lower().replace("info", "")
    assert "1.8e308" not in html and "no randomized questions" in html
    assert "<span data-n-direct>2 questions asked directly</span>" in html
    assert html.count("∞ (no privacy)") >= 2


def test_without_answers_every_kind_says_so(logged_in, owner):
    survey = empty(
        owner,
        ("binary", "Cheated?", "forced_response"),
        ("choice", "Colour?", "k_rr", {"epsilon": 1.0}, COLOURS),
        ("number", SLEEP, "laplace", {"epsilon": 1.0, "lower": 0, "upper": 10}),
    )
    html = page(logged_in, survey)
    assert "No answers yet: estimates appear once respondents answer." in html
    choice, number = section(html, "choice"), section(html, "number")
    assert "No answers yet." in choice and "<desc id=" in choice
    assert "svg-whisker" not in choice and '<rect class="svg-bar' not in choice
    assert NO_DATA_MESSAGE in number and 'id="hist-' not in number
    assert "data-mean>—</strong>" in number


def test_contradicting_data_are_flagged_and_never_get_a_zero_width_interval(logged_in, owner):
    survey = empty(
        owner,
        ("binary", "Cheated?", "forced_response"),
        ("choice", "Colour?", "forced_response", {"p_truth": 0.5}, COLOURS[:3]),
        ("number", SLEEP, "laplace", {"epsilon": 1.0, "lower": 0, "upper": 10}),
    )
    binary, choice, number = survey.questions.all()

    # Nobody follows the coins: always "no", always option 0, always far below the bounds.
    bulk_record(
        survey, ({binary.id: 0, choice.id: 0, number.id: -40} for _ in range(200)), simulated=False
    )
    html = page(logged_in, survey)
    assert html.count("data-warning") == 3
    shown = [re.findall(r"(-?[\d.]+)(?: %)? – (-?[\d.]+)", part) for part in html.split("<h2")]
    assert all(float(high) > float(low) for part in shown for low, high in part)
    assert "(one-sided: data contradict the design)" in section(html, "choice")
    assert "All reports are equal" in section(html, "number")


def test_a_choice_question_where_every_report_is_one_option(logged_in, owner):
    survey = empty(owner, ("choice", "Colour?", "k_rr", {"epsilon": 3.0}, ["Yes", "No"]))
    answer(survey, {survey.questions.get(): np.zeros(50, dtype=int)})
    html = section(page(logged_in, survey), "choice")
    assert html.count('<tr data-option="') == 2
    assert "No answers yet." not in html


def test_over_time_a_choice_question_has_a_line_per_option(logged_in, mixed):
    colour = mixed.questions.get(kind="choice", design_name="forced_response")
    html = page(logged_in, mixed, f"?question={colour.id}")
    chart = re.search(rf'<svg[^>]*aria-labelledby="time-{colour.id}-title.*?</svg>', html, re.S)
    assert chart is not None
    for j in range(len(COLOURS)):
        assert f'class="svg-point svg-series-{j}"' in chart.group(0)
    assert "Share of each option over time as a table" in html
    assert html.count(">Red</th>") == 2  # the option table and the over-time table


def test_over_time_offers_every_question_numbers_included(logged_in, mixed):
    html = page(logged_in, mixed)
    select = re.search(r'<select id="question".*?</select>', html, re.S).group(0)
    assert "Have you ever cheated" in select and "Which colour" in select
    assert SLEEP[:30] in select


def test_over_time_a_number_question_shows_its_mean_with_the_bounds_as_axis(logged_in, owner):
    earlier = current_hour() - timedelta(hours=2)
    survey = mixed_survey(owner, n=300, hours=(earlier, None))
    sleep = survey.questions.get(kind="number")
    html = page(logged_in, survey, f"?question={sleep.id}")
    chart = re.search(rf'<svg[^>]*aria-labelledby="time-{sleep.id}-title.*?</svg>', html, re.S)
    assert chart is not None and "Mean over time for" in chart.group(0)
    ticks = re.findall(r'text-anchor="end">([^<]+)</text>', chart.group(0))
    assert ticks[:5] == ["0", "3", "6", "9", "12"]  # the bounds, not percentages
    assert "Mean over time as a table" in html and "the mean after each hour" in html
    rows = re.findall(
        r"<tr><td>[\d-]+ \d\d:00</td><td>(\d+)</td><td>([-\d.]+)</td>"
        r"<td>([-\d.]+) – ([-\d.]+)</td></tr>",
        html,
    )
    assert [int(n) for n, *_ in rows] == [300, 600]
    final = sleep.design.estimate(survey_counts(sleep.survey).tally(sleep.id).stats)
    low, high = final.ci()
    assert [float(x) for x in rows[-1][1:]] == pytest.approx([final.estimate, low, high], abs=0.005)


def test_a_number_questions_mean_over_time_adds_up_hour_by_hour(owner):
    survey = empty(owner, ("number", SLEEP, "laplace", {"epsilon": 1.0, "lower": 0, "upper": 10}))
    sleep = survey.questions.get()
    hour = current_hour()
    batches = ([3, 5, 7, -4, 20], [6, 6, 8])
    for h, reports in enumerate(batches):
        bulk_record(
            survey, ({sleep.id: r} for r in reports), simulated=h == 0,
            hour=hour - timedelta(hours=1 - h),
        )  # fmt: skip
    points = means_over_time(sleep, hours_of(sleep), 0.9)
    assert [(p.n, p.n_simulated) for p in points] == [(5, 5), (8, 5)]
    everything = [r for batch in batches for r in batch]
    assert points[-1].estimate == pytest.approx(np.mean(everything))
    t = sleep.design.estimate((8, sum(everything), sum(r * r for r in everything)))
    assert (points[-1].ci_low, points[-1].ci_high) == pytest.approx(t.ci(0.9))
    assert (
        means_over_time(
            empty(owner, ("number", "x", "direct", {"lower": 0, "upper": 1})).questions.get(),
            [],
            0.9,
        )
        == []
    )


def test_the_htmx_poll_gets_every_panel(logged_in, mixed):
    html = page(logged_in, mixed, HTTP_HX_REQUEST="true")
    assert html.lstrip().startswith('<div id="results"')
    assert html.count('class="panel question-result"') == 3
    assert "<html" not in html


def test_every_chart_has_a_title_and_description_and_no_inline_style(logged_in, mixed):
    html = page(logged_in, mixed)
    charts = re.findall(r'<svg [^>]*aria-labelledby="([^"]+)-title \1-desc"', html)
    assert len(charts) >= 6  # forest, choice ×2, histogram, distribution, over time
    for label in charts:
        assert f'<title id="{label}-title">' in html and f'<desc id="{label}-desc">' in html
    assert "style=" not in html and "<script>" not in html
