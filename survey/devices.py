"""Physical chance devices for a design's probabilities, in words a respondent can follow.

The no-JavaScript page asks respondents to randomize by hand, and the JavaScript page
animates the same devices. Two fair coins are only right for probabilities of ½; a die
does thirds and sixths exactly; anything else becomes numbered slips or a random number.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from estimator.randomized_response import BinaryDesign

# Beyond this many slips of paper, ask for a random number instead.
MAX_SLIPS = 20


@dataclass(frozen=True)
class ChanceDevice:
    """Something that comes up ``win`` with probability ``probability``, else ``lose``."""

    kind: str  # "coin", "die", "slips", "number" or "certain"
    name: str
    action: str
    win: str
    lose: str
    probability: Fraction

    @property
    def percent(self) -> str:
        return f"{float(self.probability) * 100:.4g} %"


def _numbers(low: int, high: int) -> str:
    if low == high:
        return str(low)
    return f"{low} or {high}" if high == low + 1 else f"{low}–{high}"


def as_fraction(p: float) -> Fraction:
    """The simplest fraction equal to ``p`` up to float rounding (0.333… → 1/3)."""
    simple = Fraction(p).limit_denominator(1000)
    if abs(float(simple) - p) < 1e-12:
        return simple
    return Fraction(p).limit_denominator(10**9)


def device_for(p: float) -> ChanceDevice:
    """The simplest everyday device that comes up with probability exactly ``p``."""
    f = as_fraction(p)
    num, den = f.numerator, f.denominator
    if den == 1:
        outcomes = ("always", "never") if num == 1 else ("never", "always")
        return ChanceDevice("certain", "nothing", "No device is needed", *outcomes, f)
    if den == 2:
        return ChanceDevice("coin", "the coin", "Flip a coin", "heads", "tails", f)
    if den in (3, 6):
        k = num * 6 // den
        return ChanceDevice(
            "die", "the die", "Roll a six-sided die", _numbers(1, k), _numbers(k + 1, 6), f
        )
    if den <= MAX_SLIPS:
        action = f"Shuffle {den} slips of paper numbered 1 to {den} face down and draw one"
        return ChanceDevice(
            "slips", "the slip", action, _numbers(1, num), _numbers(num + 1, den), f
        )
    action = f"Pick a random whole number from 1 to {den:,} (a random-number app will do)"
    return ChanceDevice("number", "the number", action, f"1–{num:,}", f"{num + 1:,}–{den:,}", f)


@dataclass(frozen=True)
class Step:
    """One randomizing step: the device and what each of its outcomes means."""

    device: ChanceDevice
    if_win: str
    if_lose: str


def steps_for(design: BinaryDesign) -> list[Step]:
    """The steps that turn a true answer into the report, as the design defines them."""
    params = design.params()
    if design.name == "mirrored":
        return [
            Step(device_for(params["p"]), "your true answer", "the opposite of your true answer")
        ]
    second = params["p_yes"] if design.name == "forced_response" else params["pi"]
    return [
        Step(device_for(params["p_truth"]), "your true answer", "go on to step 2"),
        Step(device_for(second), "“yes”", "“no”"),
    ]


def is_two_fair_coins(design: BinaryDesign) -> bool:
    return [s.device.kind for s in steps_for(design)] == ["coin", "coin"]
