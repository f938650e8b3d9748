from __future__ import annotations

import math
from fractions import Fraction

import pytest

from estimator.designs import Crosswise, make_design
from estimator.randomized_response import ForcedResponse, Mirrored, UnrelatedQuestion
from survey.devices import (
    as_fraction,
    at_most,
    device_for,
    draw_for,
    innocuous_statement,
    is_two_fair_coins,
    needs_javascript,
    steps_for,
)


@pytest.mark.parametrize(
    ("p", "kind", "win", "lose"),
    [
        (0.5, "coin", "heads", "tails"),
        (1 / 3, "die", "1 or 2", "3–6"),
        (2 / 3, "die", "1–4", "5 or 6"),
        (1 / 6, "die", "1", "2–6"),
        (0.75, "slips", "1–3", "4"),
        (0.7, "slips", "1–7", "8–10"),
        (0.0833, "number", "1–833", "834–10,000"),
        (1.0, "certain", "always", "never"),
        (0.0, "certain", "never", "always"),
    ],
)
def test_each_probability_gets_an_exact_everyday_device(p, kind, win, lose):
    device = device_for(p)
    assert (device.kind, device.win, device.lose) == (kind, win, lose)
    assert device.probability == as_fraction(p)


def test_fractions_are_exact_for_thirds_and_decimals():
    assert as_fraction(1 / 3) == Fraction(1, 3)
    assert as_fraction(0.123456) == Fraction(123456, 10**6)


def test_the_steps_follow_each_design():
    assert is_two_fair_coins(ForcedResponse())
    assert not is_two_fair_coins(ForcedResponse(p_truth=2 / 3))
    (only,) = steps_for(Mirrored(p=0.75))
    assert only.if_lose == "the opposite of your true answer"
    first, second = steps_for(UnrelatedQuestion(p_truth=0.5, pi=0.25))
    assert (first.device.kind, second.device.kind, second.device.win) == ("coin", "slips", "1")


@pytest.mark.parametrize(
    ("probabilities", "kind", "faces"),
    [
        ([1 / 3, 1 / 3, 1 / 3], "die", ("1 or 2", "3 or 4", "5 or 6")),
        ([0.5, 0.5], "coin", ("heads", "tails")),
        ([0.5, 0.25, 0.25], "slips", ("1 or 2", "3", "4")),
        ([0.25, 0, 0.75], "slips", ("1", "", "2–4")),
        ([0.001, 0.999], "number", ("1", "2–1,000")),
    ],
)
def test_a_draw_picks_each_option_with_exactly_its_probability(probabilities, kind, faces):
    draw = draw_for(probabilities, ["a", "b", "c"][: len(probabilities)])
    assert (draw.kind, draw.faces) == (kind, faces)
    assert [m for _, m in draw.outcomes] == [
        m for m, p in zip("abc", probabilities, strict=False) if p
    ]


def test_choice_steps_come_from_the_response_matrix():
    k_rr = make_design("choice", "k_rr", {"epsilon": math.log(3)}, k=3)
    keep, draw = steps_for(k_rr, ["Never", "Sometimes", "Often"])
    assert keep.device.probability == Fraction(2, 5) and keep.device.kind == "slips"
    assert draw.kind == "die" and draw.meanings == ("“Never”", "“Sometimes”", "“Often”")
    die = make_design("choice", "forced_response", {"p_truth": 2 / 3, "p_forced": [0.5, 0.5]}, k=2)
    keep, draw = steps_for(die)
    assert keep.device.kind == "die" and draw.kind == "coin"


def test_an_irrational_keep_probability_is_rounded_down_never_weakening_privacy():
    design = make_design("choice", "k_rr", {"epsilon": 1.0}, k=4)
    keep, _ = steps_for(design)
    assert keep.device.probability.denominator == 10**6
    assert design.t - 1e-6 < float(keep.device.probability) <= design.t
    assert at_most(0.4) == 0.4


def test_crosswise_asks_an_innocuous_statement_and_numbers_need_javascript():
    assert innocuous_statement(Crosswise(p=0.25)) == "My mother's birthday is in January to March."
    assert innocuous_statement(Crosswise(p=1 / 12)) == "My mother's birthday is in January."
    assert innocuous_statement(Crosswise(p=0.3)).endswith("draw one: it shows 1–3.")
    assert steps_for(Crosswise(p=0.25)) == []
    laplace = make_design("number", "laplace", {"epsilon": 1.0, "lower": 0, "upper": 20})
    assert needs_javascript(laplace) and steps_for(laplace) == []
    direct = make_design("number", "direct", {"lower": 0, "upper": 20})
    assert not needs_javascript(direct) and steps_for(direct) == []
    assert steps_for(make_design("choice", "direct", {}, k=3)) == []


def test_a_draw_with_an_awkward_probability_names_ranges_without_listing_every_number():
    """A probability such as 0.0653… needs a number from 1 to about a billion squared:
    the page names the ranges (listing every number would exhaust the memory)."""
    draw = draw_for([0.06532019724705541, 1 - 0.06532019724705541], ["“yes”", "“no”"])
    assert draw.kind == "number" and draw.sides > 10**9
    assert all("–" in face for face in draw.faces)
