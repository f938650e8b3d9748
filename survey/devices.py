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

from django.utils.translation import gettext, gettext_noop

from estimator.designs import BinaryDesign, ChoiceDesign, Design
from survey.templatetags.privacy import local_number, whole

# Beyond this many slips of paper, ask for a random number instead.
MAX_SLIPS = 20
MONTHS = [
    gettext_noop("January"),
    gettext_noop("February"),
    gettext_noop("March"),
    gettext_noop("April"),
    gettext_noop("May"),
    gettext_noop("June"),
    gettext_noop("July"),
    gettext_noop("August"),
    gettext_noop("September"),
    gettext_noop("October"),
    gettext_noop("November"),
    gettext_noop("December"),
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
        return local_number(f"{float(self.probability) * 100:.4g}") + "\u00a0%"


def _numbers(low: int, high: int) -> str:
    if low == high:
        return whole(low)
    if high == low + 1:
        return gettext("%(low)s or %(high)s") % {"low": whole(low), "high": whole(high)}
    return f"{whole(low)}–{whole(high)}"


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
        always, never = gettext("always"), gettext("never")
        outcomes = (always, never) if num == 1 else (never, always)
        return ChanceDevice(
            "certain", gettext("nothing"), gettext("No device is needed"), *outcomes, f
        )
    if den == 2:
        return ChanceDevice(
            "coin",
            gettext("the coin"),
            gettext("Flip a coin"),
            gettext("heads"),
            gettext("tails"),
            f,
        )
    if den in (3, 6):
        k = num * 6 // den
        name, action = gettext("the die"), gettext("Roll a six-sided die")
        return ChanceDevice("die", name, action, _numbers(1, k), _numbers(k + 1, 6), f)
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
        action = gettext(
            "Shuffle %(n)s slips of paper numbered 1 to %(n)s face down and draw one"
        ) % {"n": den}
        return "slips", gettext("the slip"), action
    action = gettext("Pick a random whole number from 1 to %(n)s (a random-number app will do)") % {
        "n": whole(den)
    }
    return "number", gettext("the number"), action


@dataclass(frozen=True)
class Step:
    """One randomizing step: the device and what each of its outcomes means."""

    device: ChanceDevice
    if_win: str
    if_lose: str
    goes_on: bool = False  # losing means "go on to step 2", not a result


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
        if self.kind == "coin":
            return gettext("flips a coin for you")
        if self.kind == "die":
            return gettext("rolls a six-sided die for you")
        if self.kind == "slips":
            return gettext("draws one of %(n)s numbered slips for you") % {"n": self.sides}
        return gettext("picks a number from 1 to %(n)s for you") % {"n": whole(self.sides)}

    @property
    def outcomes(self) -> list[tuple[str, str]]:
        return [(f, m) for f, m in zip(self.faces, self.meanings, strict=True) if f]


def draw_for(probabilities: list[float], meanings: list[str]) -> Draw:
    """One everyday device that picks option j with probability ``probabilities[j]``
    exactly: a coin, a die, slips numbered 1…D, or a random number from 1 to D."""
    fractions = [as_fraction(p) for p in probabilities]
    den = reduce(math.lcm, (f.denominator for f in fractions), 1)
    if den == 2:
        kind, name, action, den = "coin", gettext("the coin"), gettext("Flip a coin"), 2
        labels = [gettext("heads"), gettext("tails")]
    else:
        if den in (3, 6):
            kind, name, action, den = "die", gettext("the die"), gettext("Roll a six-sided die"), 6
        else:
            kind, name, action = _numbered(den)
        labels = []  # faces are ranges of numbers (never listed one by one: den may be huge)
    faces, start = [], 0
    for f in fractions:
        count = f.numerator * den // f.denominator
        if kind == "coin":
            faces.append(gettext(" or ").join(labels[start : start + count]))
        else:
            faces.append(_numbers(start + 1, start + count) if count else "")
        start += count
    return Draw(kind, name, action, tuple(faces), tuple(meanings), den)


# What each outcome of a design's chance steps means, in the respondent's words.
OUTCOMES = {
    "truth": gettext_noop("your true answer"),
    "opposite": gettext_noop("the opposite of your true answer"),
    "next": gettext_noop("go on to step 2"),
    "yes": gettext_noop("“yes”"),
    "no": gettext_noop("“no”"),
    "innocuous": gettext_noop("your true answer to the second question"),
}


def option_meaning(option: str) -> str:
    return gettext("“%(option)s”") % {"option": option}


def steps_for(design: Design, options: list[str] | None = None) -> list[Step | Draw]:
    """The steps that turn a true answer into the report, as the design defines them (for
    a split ballot, those of its randomized ballot)."""
    if design.direct_share is not None:
        design = design.randomized_design
    if not design.randomized or design.compares_statements:
        return []
    if isinstance(design, ChoiceDesign):
        if design.t >= 1:
            return []  # the truth always (ε = ∞): no device decides anything
        labels = [option_meaning(o) for o in options or [str(j + 1) for j in range(design.k)]]
        forced = design.c / (1 - design.t)
        return [
            Step(
                device_for(at_most(design.t)),
                gettext(OUTCOMES["truth"]),
                gettext(OUTCOMES["next"]),
                goes_on=True,
            ),
            draw_for([float(p) for p in forced], labels),
        ]
    if not isinstance(design, BinaryDesign):
        return []  # numbers: no everyday device draws the noise
    return [
        Step(device_for(p), gettext(OUTCOMES[win]), gettext(OUTCOMES[lose]), lose == "next")
        for p, win, lose in design.chance_steps()
    ]


def arm_steps_for(design: Design) -> list[tuple[float, list[Step]]]:
    """A design with arms: per arm its weight (the chance the device draws it) and the
    steps that then turn the true answer into the report; empty for other designs."""
    if not design.has_arms:
        return []
    return [
        (
            weight,
            [
                Step(device_for(p), gettext(OUTCOMES[win]), gettext(OUTCOMES[lose]), lose == "next")
                for p, win, lose in steps
            ],
        )
        for weight, steps in zip(design.arm_weights, design.arm_chance_steps(), strict=True)
    ]


def needs_javascript(design: Design) -> bool:
    """A randomized number: its noise cannot be drawn by hand, so the paper page leaves it
    unanswered rather than ask for the true number."""
    return design.kind == "number" and design.randomized


def innocuous_statement(design: BinaryDesign) -> str:
    """A statement about the respondent that is true with probability ``p``: a mother's
    birthday month when p is a whole number of twelfths, else a drawn number."""
    f = as_fraction(design.p)
    if f > 0 and (12 * f).denominator == 1:  # p = 0 has no month: "never", as the device says
        months = [gettext(month) for month in MONTHS[: int(12 * f)]]
        if len(months) == 1:
            return gettext("My mother's birthday is in %(month)s.") % {"month": months[0]}
        return gettext("My mother's birthday is in %(first)s to %(last)s.") % {
            "first": months[0],
            "last": months[-1],
        }
    device = device_for(design.p)
    return gettext("%(action)s: it shows %(face)s.") % {"action": device.action, "face": device.win}


def is_two_fair_coins(design: Design) -> bool:
    steps = steps_for(design)
    # A split ballot's paper steps start with the ballot's own draw: not the two coins alone.
    return (
        design.kind == "binary"
        and design.direct_share is None
        and [s.device.kind for s in steps] == ["coin", "coin"]
    )
