"""Design parameters, declared once: their checks here, and a JSON form for everything else.

The builder form, the API serializer, the codebook and the browser sampler all read
:meth:`Param.to_json`; the design classes run :meth:`Param.check` on construction.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

# Bounds for a number question's range (SPEC §1.4).
NUMBER_LIMIT = 10**6
# ε per question: below 0.01 no sample size could estimate anything; above 20, e^ε (and the
# k-RR and Laplace maths built on it) leaves the range where every result stays finite.
EPSILON_MIN, EPSILON_MAX = 0.01, 20.0
CHOICE_MIN_OPTIONS, CHOICE_MAX_OPTIONS = 2, 10


@dataclass(frozen=True)
class Param:
    """One parameter of a design.

    ``type`` is ``"probability"`` (a real in [0, 1]), ``"real"``, ``"integer"`` or
    ``"probabilities"`` (one probability per option, summing to 1) or ``"probability_pair"``
    (one probability per arm of a design with two arms). ``low``/``high`` bound
    the value (``open_low``/``open_high`` exclude the bound itself). ``default`` ``None``
    means "depends on the question" (for ``probabilities``: uniform over the options).
    """

    name: str
    type: str
    default: Any
    label: str
    help: str
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False

    def check(self, value: Any) -> Any:
        """The value if valid, else a ValueError naming the parameter and the rule."""
        if self.type == "probability_pair":
            if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
                raise ValueError(f"{self.name} must be a list of two probabilities, got {value!r}")
            values = tuple(self._check_real(v, f"each entry of {self.name}") for v in value)
            if len(values) != 2 or not all(0 <= v <= 1 for v in values):
                raise ValueError(f"{self.name} must be two probabilities in [0, 1], got {value!r}")
            return values
        if self.type == "probabilities":
            if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
                raise ValueError(f"{self.name} must be a list of probabilities, got {value!r}")
            values = tuple(self._check_real(v, f"each entry of {self.name}") for v in value)
            for v in values:
                if not 0 <= v <= 1:
                    raise ValueError(f"each entry of {self.name} must be in [0, 1], got {v!r}")
            if abs(math.fsum(values) - 1) > 1e-9:
                raise ValueError(f"{self.name} must sum to 1, got {math.fsum(values)!r}")
            return values
        value = self._check_real(value, self.name)
        if self.type == "integer" and (
            not isinstance(value, numbers.Integral) and value != math.floor(value)
        ):
            raise ValueError(f"{self.name} must be a whole number, got {value!r}")
        if self.type == "integer":
            value = int(value)
        if self.type == "probability" and not 0 <= value <= 1:
            raise ValueError(f"{self.name} must be a probability between 0 and 1, got {value!r}")
        low = 0.0 if self.type == "probability" and self.low is None else self.low
        high = 1.0 if self.type == "probability" and self.high is None else self.high
        if low is not None and (value < low or (self.open_low and value == low)):
            raise ValueError(
                f"{self.name} must be {'>' if self.open_low else '≥'} {low:g}, got {value!r}"
            )
        if high is not None and (value > high or (self.open_high and value == high)):
            raise ValueError(
                f"{self.name} must be {'<' if self.open_high else '≤'} {high:g}, got {value!r}"
            )
        return value

    @staticmethod
    def _check_real(value: Any, what: str) -> float | int:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"{what} must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{what} must be finite, got {value!r}")
        return value

    def to_json(self) -> dict:
        """The declaration as plain JSON (for forms, serializers, the codebook, the browser)."""
        low = 0.0 if self.type == "probability" and self.low is None else self.low
        high = 1.0 if self.type == "probability" and self.high is None else self.high
        return {
            "name": self.name,
            "type": self.type,
            "default": list(self.default) if isinstance(self.default, tuple) else self.default,
            "label": self.label,
            "help": self.help,
            "min": low,
            "max": high,
            "exclusive_min": self.open_low,
            "exclusive_max": self.open_high,
        }


def probability(name: str, default: float, label: str, help: str, **bounds: Any) -> Param:
    return Param(name, "probability", default, label, help, **bounds)


EPSILON = Param(
    "epsilon",
    "real",
    1.0986122886681098,
    "Privacy loss ε",
    "a report is at most e^ε times more likely under one true value than under any other",
    low=EPSILON_MIN,
    high=EPSILON_MAX,
)
BOUNDS = (
    Param(
        "lower",
        "integer",
        0,
        "Lowest value",
        "smaller true values count as this",
        low=-NUMBER_LIMIT,
        high=NUMBER_LIMIT,
    ),
    Param(
        "upper",
        "integer",
        10,
        "Highest value",
        "larger true values count as this",
        low=-NUMBER_LIMIT,
        high=NUMBER_LIMIT,
    ),
)


def epsilon_param(default: float) -> Param:
    return Param(
        "epsilon", EPSILON.type, default, EPSILON.label, EPSILON.help, EPSILON.low, EPSILON.high
    )


def check_bounds(lower: int, upper: int) -> None:
    if not lower < upper:
        raise ValueError(f"lower must be below upper, got lower={lower} and upper={upper}")


def check_options_count(k: Any) -> int:
    """The number of options of a choice question: a whole number from 2 to 10."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"a choice question needs a whole number of options, got {k!r}")
    if not CHOICE_MIN_OPTIONS <= k <= CHOICE_MAX_OPTIONS:
        raise ValueError(
            f"a choice question has {CHOICE_MIN_OPTIONS} to {CHOICE_MAX_OPTIONS} options, got {k}"
        )
    return int(k)
