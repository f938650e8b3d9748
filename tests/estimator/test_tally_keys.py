"""Where a design counts a report in the tallies: the report itself for yes/no and
choice, a bounded histogram bin for numbers; and the estimate from what tallies keep."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from estimator.designs import MAX_REPORT_BINS, make_design
from estimator.estimates import BinaryEstimate, NumberStats

LAPLACE = make_design("number", "laplace", {"epsilon": 1.0, "lower": 0, "upper": 10})
DIRECT_AGE = make_design("number", "direct", {"lower": 16, "upper": 99})


@pytest.mark.parametrize(
    ("kind", "name", "k", "reports"),
    [("binary", "forced_response", None, [0, 1]), ("choice", "k_rr", 4, [0, 1, 2, 3])],
)
def test_few_output_designs_tally_a_report_under_itself(kind, name, k, reports):
    design = make_design(kind, name, {}, k=k)
    assert [design.tally_key(r) for r in reports] == reports
    assert design.tally_keys(np.array(reports)).tolist() == reports


def test_number_bins_cover_the_bounds_and_the_noise_with_few_keys():
    start, width, count = LAPLACE.report_bins
    margin = np.ceil(3 * np.sqrt(LAPLACE.noise_variance))
    assert start == -margin and count <= MAX_REPORT_BINS
    assert start + count * width - 1 >= 10 + margin
    # A direct question with 84 values: 21 bins of 4 integers, none below or above in use.
    assert DIRECT_AGE.report_bins == (16, 4, 21)
    assert DIRECT_AGE.tally_key(16) == 1 and DIRECT_AGE.tally_key(99) == 21


@given(st.integers(-(10**12), 10**12))
def test_every_report_lands_in_the_bin_whose_range_holds_it(report):
    for design in (LAPLACE, DIRECT_AGE):
        key = design.tally_key(report)
        _, _, count = design.report_bins
        assert 0 <= key <= count + 1
        low, high = design.bin_range(key)
        assert (low is None or low <= report) and (high is None or report <= high)
        assert design.tally_keys(np.array([report]))[0] == key


def test_the_histogram_lists_every_bin_with_its_count():
    reports = [-500, 0, 0, 5, 10, 10, 10, 600]
    counts: dict[int, int] = {}
    for r in reports:
        counts[LAPLACE.tally_key(r)] = counts.get(LAPLACE.tally_key(r), 0) + 1
    bins = LAPLACE.histogram(counts)
    assert len(bins) == LAPLACE.report_bins[2] + 2
    assert bins[0]["low"] is None and bins[-1]["high"] is None
    assert sum(b["count"] for b in bins) == len(reports)
    assert (bins[0]["count"], bins[-1]["count"]) == (1, 1)


def test_estimates_from_tallies_match_the_designs_own_estimates():
    choice = make_design("choice", "k_rr", {}, k=3)
    est = choice.estimate_from_tally({0: 50, 2: 30}, NumberStats(80, 60, 120))
    assert est.counts == (50, 0, 30)
    binary = make_design("binary", "mirrored", {"p": 0.75})
    assert binary.estimate_from_tally({1: 40, 0: 60}, NumberStats(100, 40, 40)).yes_count == 40
    stats = NumberStats(3, 12, 66)
    assert LAPLACE.estimate_from_tally({}, stats).estimate_unbiased == 4


@pytest.mark.parametrize(
    ("name", "params", "counts"),
    [
        ("k_rr", {}, [120, 0, 35, 300]),
        ("direct", {}, [0, 0, 10, 4]),
        ("forced_response", {"p_forced": [0.1, 0.2, 0.3, 0.4]}, [50, 60, 70, 80]),
    ],
)
@pytest.mark.parametrize("method", ["wilson", "exact", "wald", "uniform_hpd"])
def test_choice_intervals_computed_together_equal_each_options_own(name, params, counts, method):
    design = make_design("choice", name, params, k=4)
    together = design.estimate(counts).ci(0.9, method)
    alone = [
        BinaryEstimate(design.option_line(j), count, sum(counts)).ci(0.9, method)
        for j, count in enumerate(counts)
    ]
    assert np.ravel(together) == pytest.approx(np.ravel(alone), abs=1e-12)
