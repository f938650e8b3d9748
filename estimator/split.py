"""The split ballot: a randomized yes/no question of which a share ``s`` of respondents,
drawn by their own device before they answer, is asked directly and told so.

The ballot is an arm: a report is stored as ``ballot · 2 + answer`` (ballot 0 randomized,
1 direct), like the reports of the designs with arms (:mod:`estimator.arms`), so that
tallies, exports and imports keep the two ballots apart. The randomized estimate reads
the randomized ballot alone; the direct ballot gives a plain proportion, and
:mod:`estimator.compare` their difference ("did randomized response help?").

References
----------
.. [1] D. W. Heck and M. Moshagen, "RRreg: An R package for correlation and regression
   analyses of randomized response data", J. Stat. Softw. 85(2), 2018 (§4: the minarets
   study's randomized and direct questioning groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from estimator.compare import Comparison, check_direct_share, simulate_split, split_ballot
from estimator.designs import BinaryDesign, _check_index, _count_vector
from estimator.estimates import BinaryEstimate, NumberStats
from estimator.intervals import DEFAULT_LEVEL

BALLOTS = 2
# The ballot of a report (its arm): what the export's arm column holds.
RANDOMIZED_BALLOT, DIRECT_BALLOT = 0, 1


@dataclass(frozen=True)
class SplitEstimate(BinaryEstimate):
    """The randomized ballot's estimate (every attribute of :class:`BinaryEstimate`
    speaks of it alone), with the direct ballot's counts beside it.

    Examples
    --------
    >>> from estimator.designs import ForcedResponse
    >>> est = SplitDesign(ForcedResponse(), 0.2).estimate([600, 400, 180, 20])
    >>> round(est.estimate, 3), round(est.direct.estimate, 3)
    (0.3, 0.1)
    >>> round(est.comparison().difference, 3)
    0.2
    """

    direct_yes: int = 0
    direct_n: int = 0

    @property
    def direct(self) -> BinaryEstimate:
        """The direct ballot's proportion of "yes" (answers taken as given)."""
        return split_ballot(self, self.direct_yes, self.direct_n).direct

    def comparison(self, level: float = DEFAULT_LEVEL) -> Comparison | None:
        """Randomized minus direct, with interval and tests; None until both ballots
        have answers."""
        if not (self.has_data and self.direct_n):
            return None
        return split_ballot(self, self.direct_yes, self.direct_n).comparison(level)


@dataclass(frozen=True)
class SplitDesign:
    """A randomized yes/no design of which a share ``direct_share`` is asked directly.

    Everything not defined here (ε, chance steps, declaration, parameters) is the
    randomized design's: ε is the promise made to the randomized ballot; the direct
    ballot is told, before answering, that its answer is taken as given (ε = ∞).
    """

    randomized_design: BinaryDesign
    direct_share: float
    has_arms: ClassVar[bool] = True
    split_ballot: ClassVar[bool] = True
    arms: ClassVar[int] = BALLOTS
    regression_with_arms: ClassVar[bool] = False
    output_values: ClassVar[tuple[int, ...]] = tuple(range(2 * BALLOTS))
    arm_names: ClassVar[tuple[str, str]] = ("randomized ballot", "direct ballot")

    def __post_init__(self) -> None:
        object.__setattr__(self, "direct_share", check_direct_share(self.direct_share))
        inner = self.randomized_design
        if inner.kind != "binary" or inner.has_arms or not inner.randomized:
            raise ValueError(
                "direct_share: a split ballot needs a randomized yes/no design without arms "
                "(not a choice or number question, a design with arms or a direct question)"
            )

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("randomized_design")
        if inner is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(inner, name)

    @property
    def arm_weights(self) -> tuple[float, float]:
        """The chance of each ballot: randomized 1 − s, direct s."""
        return 1 - self.direct_share, self.direct_share

    def encode(self, arm: Any, answer: Any) -> int:
        """The stored report of ``answer`` (0/1) given on ballot ``arm``."""
        arm = _check_index(arm, BALLOTS, "ballot (arm)")
        return arm * 2 + self.randomized_design.check_report(answer)

    @staticmethod
    def decode(report: int) -> tuple[int, int]:
        """(ballot, answer) of a stored report."""
        return divmod(int(report), 2)

    def check_report(self, report: Any) -> int:
        return _check_index(report, 2 * BALLOTS, "a report with its ballot")

    def output_description(self) -> dict:
        return {"type": "options", "values": [0, 1], "arms": BALLOTS, "direct_arm": DIRECT_BALLOT}

    def arm_chance_steps(self) -> tuple[tuple[tuple[float, str, str], ...], ...]:
        """The randomized ballot follows the design's coins; the direct one has none."""
        return self.randomized_design.chance_steps(), ()

    @property
    def response_matrix(self) -> np.ndarray:
        """M[ballot·2 + report, truth]: the randomized design's rows weighted 1 − s, then
        the direct ballot's (its report is the truth) weighted s."""
        s = self.direct_share
        return np.vstack(((1 - s) * self.randomized_design.response_matrix, s * np.eye(2)))

    def likelihood(self, report: Any) -> np.ndarray:
        return self.response_matrix[self.check_report(report)]

    def estimate(self, counts: Any, *, population: int | None = None) -> SplitEstimate:
        """From the report counts ``[no, yes]`` of the randomized ballot then the direct."""
        no, yes, direct_no, direct_yes = _count_vector(counts, 2 * BALLOTS)
        return SplitEstimate(
            self.randomized_design,
            yes,
            no + yes,
            population,
            direct_yes=direct_yes,
            direct_n=direct_no + direct_yes,
        )

    def estimate_from_tally(
        self, counts: Mapping[int, int], stats: NumberStats, population: int | None = None
    ) -> SplitEstimate:
        return self.estimate(
            [int(counts.get(v, 0)) for v in self.output_values], population=population
        )

    def simulate(self, true_answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports (ballot·2 + answer): the direct share answers truthfully."""
        direct, reports = simulate_split(
            self.randomized_design, self.direct_share, true_answers, rng
        )
        return 2 * direct.astype(np.int64) + reports


def with_direct_share(design: Any, share: Any) -> Any:
    """``design`` itself, or its split ballot when a direct share is given."""
    return design if share is None else SplitDesign(design, share)
