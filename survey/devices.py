"""Physical chance devices for a design's probabilities, in words a respondent can follow.

The no-JavaScript page asks respondents to randomize by hand, and the JavaScript page
animates the same devices. Two fair coins are only right for probabilities of ½; a die
does thirds and sixths exactly; anything else becomes numbered slips or a random number.
A choice design is "keep your true option with probability t, else draw an option with a
die or slips": every choice design has that shape (its response matrix is t·I + c·1ᵀ), so
its steps come from t and c alone. Crosswise asks a second, innocuous statement instead
of a device, and a number needs noise no everyday device draws (the page says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce

from estimator.designs import BinaryDesign, ChoiceDesign, Crosswise, Design

# Beyond this many slips of paper, ask for a random number instead.
MAX_SLIPS = 20
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


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
        return f"{float(self.probability) * 100:.4g}\u00a0%"


def _numbers(low: int, high: int) -> str:
    if low == high:
        return f"{low:,}"
    return f"{low:,} or {high:,}" if high == low + 1 else f"{low:,}–{high:,}"


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
    kind, name, action = _numbered(den)
    return ChanceDevice(kind, name, action, _numbers(1, num), _numbers(num + 1, den), f)


def at_most(p: float) -> float:
    """``p`` itself when it is a simple fraction, else rounded down to millionths: a
    probability of telling the truth that a person can draw and that never weakens the
    design's privacy (less truth, more protection)."""
    if as_fraction(p).denominator <= 1000:
        return p
    return math.floor(p * 10**6) / 10**6


def _numbered(den: int) -> tuple[str, str, str]:
    """Slips of paper numbered 1…den, or a random whole number when there are too many."""
    if den <= MAX_SLIPS:
        action = f"Shuffle {den} slips of paper numbered 1 to {den} face down and draw one"
        return "slips", "the slip", action
    action = f"Pick a random whole number from 1 to {den:,} (a random-number app will do)"
    return "number", "the number", action


@dataclass(frozen=True)
class Step:
    """One randomizing step: the device and what each of its outcomes means."""

    device: ChanceDevice
    if_win: str
    if_lose: str


@dataclass(frozen=True)
class Draw:
    """A step that picks one of several options: ``faces[j]`` are the faces (die faces,
    slip numbers) that give option j, empty when option j cannot come up."""

    kind: str  # "coin", "die", "slips" or "number"
    name: str
    action: str
    faces: tuple[str, ...]
    meanings: tuple[str, ...]
    sides: int = 2

    @property
    def done_for_you(self) -> str:
        """What the respondent's device does in its place, in words."""
        return {
            "coin": "flips a coin for you",
            "die": "rolls a six-sided die for you",
            "slips": f"draws one of {self.sides} numbered slips for you",
        }.get(self.kind, f"picks a number from 1 to {self.sides:,} for you")

    @property
    def outcomes(self) -> list[tuple[str, str]]:
        return [(f, m) for f, m in zip(self.faces, self.meanings, strict=True) if f]


def draw_for(probabilities: list[float], meanings: list[str]) -> Draw:
    """One everyday device that picks option j with probability ``probabilities[j]``
    exactly: a coin, a die, slips numbered 1…D, or a random number from 1 to D."""
    fractions = [as_fraction(p) for p in probabilities]
    den = reduce(math.lcm, (f.denominator for f in fractions), 1)
    if den == 2:
        kind, name, action, den, labels = "coin", "the coin", "Flip a coin", 2, ["heads", "tails"]
    else:
        if den in (3, 6):
            kind, name, action, den = "die", "the die", "Roll a six-sided die", 6
        else:
            kind, name, action = _numbered(den)
        labels = [str(i) for i in range(1, den + 1)]
    faces, start = [], 0
    for f in fractions:
        count = f.numerator * den // f.denominator
        if kind == "coin":
            faces.append(" or ".join(labels[start : start + count]))
        else:
            faces.append(_numbers(start + 1, start + count) if count else "")
        start += count
    return Draw(kind, name, action, tuple(faces), tuple(meanings), den)


# What each outcome of a design's chance steps means, in the respondent's words.
OUTCOMES = {
    "truth": "your true answer",
    "opposite": "the opposite of your true answer",
    "next": "go on to step 2",
    "yes": "“yes”",
    "no": "“no”",
}


def option_meaning(option: str) -> str:
    return f"“{option}”"


def steps_for(design: Design, options: list[str] | None = None) -> list[Step | Draw]:
    """The steps that turn a true answer into the report, as the design defines them."""
    if not design.randomized or isinstance(design, Crosswise):
        return []
    if isinstance(design, ChoiceDesign):
        labels = [option_meaning(o) for o in options or [str(j + 1) for j in range(design.k)]]
        forced = design.c / (1 - design.t)
        return [
            Step(device_for(at_most(design.t)), "your true answer", "go on to step 2"),
            draw_for([float(p) for p in forced], labels),
        ]
    if not isinstance(design, BinaryDesign):
        return []  # numbers: no everyday device draws the noise
    return [
        Step(device_for(p), OUTCOMES[win], OUTCOMES[lose]) for p, win, lose in design.chance_steps()
    ]


def needs_javascript(design: Design) -> bool:
    """A randomized number: its noise cannot be drawn by hand, so the paper page leaves it
    unanswered rather than ask for the true number."""
    return design.kind == "number" and design.randomized


def innocuous_statement(design: Crosswise) -> str:
    """A statement about the respondent that is true with probability ``p``: a mother's
    birthday month when p is a whole number of twelfths, else a drawn number."""
    f = as_fraction(design.p)
    if (12 * f).denominator == 1:
        months = MONTHS[: int(12 * f)]
        span = months[0] if len(months) == 1 else f"{months[0]} to {months[-1]}"
        return f"My mother's birthday is in {span}."
    device = device_for(design.p)
    return f"{device.action}: it shows {device.win}."


def is_two_fair_coins(design: Design) -> bool:
    steps = steps_for(design)
    return design.kind == "binary" and [s.device.kind for s in steps] == ["coin", "coin"]
