from __future__ import annotations

from fractions import Fraction

import pytest

from estimator.randomized_response import ForcedResponse, Mirrored, UnrelatedQuestion
from survey.devices import as_fraction, device_for, is_two_fair_coins, steps_for


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
