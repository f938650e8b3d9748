from __future__ import annotations

import math

from survey.templatetags.privacy import epsilon, odds_bound, percent


def test_odds_bound_reads_as_whole_times_for_ln3():
    assert odds_bound(math.log(3)) == "3×"


def test_odds_bound_keeps_two_decimals_for_small_ratios():
    assert odds_bound(math.log(5 / 3)) == "1.67×"


def test_odds_bound_rounds_large_ratios_to_whole_numbers():
    assert odds_bound(math.log(117.04)) == "117×"


def test_infinite_epsilon_is_shown_as_no_privacy():
    assert epsilon(math.inf) == "∞ (no privacy)"
    assert odds_bound(math.inf) == "unbounded"


def test_percent_of_nothing_is_a_dash():
    assert percent(None) == "—"
