"""Which cells of a breakdown to hide so that no small group can be recovered.

A breakdown shows, per category of a directly asked question (faculty, year …), the
number of respondents and the estimate of a randomized question, next to the overall
total and estimate. A category with fewer than k respondents is a small group whose
members could be singled out, so it is hidden (*primary suppression*). Hiding it alone
is not enough: the total minus the shown cells gives its count back, and the overall
estimate minus the shown cells' estimates weighted by their n gives its estimate back
(the differencing attack of statistical disclosure control [1]_ [2]_). So further cells
are hidden (*complementary suppression*), smallest first, until

* no cell or at least two cells are hidden — then the total minus the shown cells is a
  sum of several unknowns, and no single one of them is determined by it; and
* the hidden cells hold at least k respondents together — what differencing does reveal
  (their pooled count and pooled estimate) is itself a group of at least k.

Every count below k is hidden, zero included, so that an empty category cannot be told
from a small one. The "yes" counts that the estimates reveal are reports already
randomized on the respondent's device (ε-private): the rule protects the directly asked
category counts, which are not.

References
----------
.. [1] A. Hundepool et al., "Statistical Disclosure Control", Wiley, 2012, §5.2
   (threshold rule) and §5.4 (secondary suppression, the differencing attack).
.. [2] L. Willenborg and T. de Waal, "Elements of Statistical Disclosure Control",
   Lecture Notes in Statistics 155, Springer, 2001, ch. 6.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

DEFAULT_MIN_CELL = 10


def _check_counts(counts: Sequence[int], total: int | None) -> list[int]:
    checked = []
    for value in counts:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"counts must be whole numbers, got {value!r}")
        if not math.isfinite(value) or value != int(value) or value < 0:
            raise ValueError(f"counts must be whole numbers >= 0, got {value!r}")
        checked.append(int(value))
    if total is not None and total != sum(checked):
        raise ValueError(
            f"the cells hold {sum(checked)} respondents but the total is {total}: count "
            "those who skipped the grouping question as a cell of their own (the total "
            "minus the cells would reveal them)"
        )
    return checked


def _protected(counts: list[int], hidden: set[int], k: int) -> bool:
    """Nothing hidden, or ≥ 2 cells holding ≥ k together, not all exactly k − 1 (then
    the attacker would know each one: below k, and summing to the most they can)."""
    if not hidden:
        return True
    values = [counts[i] for i in hidden]
    return len(values) >= 2 and sum(values) >= k and any(v != k - 1 for v in values)


def suppress_cells(
    counts: Sequence[int], k: int = DEFAULT_MIN_CELL, total: int | None = None
) -> tuple[int, ...]:
    """Cells of a breakdown to hide so that none can be recovered by differencing.

    Parameters
    ----------
    counts
        Respondents per category, in the order the categories are shown.
    k
        Minimum number of respondents in a shown cell (the survey's setting).
    total
        The overall number of respondents shown beside the breakdown; checked to be the
        sum of ``counts``.

    Returns
    -------
    tuple of int
        Indexes of the cells to hide, ascending: none, or at least two holding at least
        k respondents together (all of them when the cells cannot reach that). With a
        single category its one cell is the overall figure itself, hidden when below k.
        Show every hidden cell the same way: saying which ones were below k and which
        were hidden to protect them would tell an attacker more.

    Notes
    -----
    Against an attacker who reads the published numbers the guarantee is proven: with
    m ≥ 2 hidden cells summing to R ≥ k, each hidden cell can be anything from 0 to R.
    An attacker who also knows this rule learns bounds (a cell hidden for protection is
    no larger than the smallest shown one, the others are below k). Two details close
    the ways those bounds pinned a cell in a brute-force search: equal-sized candidates
    are hidden together rather than chosen by position (counts (12, 12, 9) with k = 10
    would otherwise hide cells 0 and 2, which only (12, 9) reproduces), and hidden cells
    that are all exactly k − 1 take another cell with them. The tests search every
    alternative of small breakdowns for a pinned cell; that is evidence, not a proof.

    Examples
    --------
    >>> suppress_cells([120, 4, 35, 60], k=10)  # 4 < 10, and 35 so that 4 stays unknown
    (1, 2)
    >>> suppress_cells([3, 4, 100, 200], k=10)  # 3 + 4 < 10: the 100 too
    (0, 1, 2)
    >>> suppress_cells([50, 0, 0], k=10)  # two empty cells would sum to 0: all hidden
    (0, 1, 2)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    counts = _check_counts(counts, total)
    hidden = {i for i, count in enumerate(counts) if count < k}
    while not _protected(counts, hidden, k):
        shown = [i for i in range(len(counts)) if i not in hidden]
        if not shown:
            break
        smallest = min(counts[i] for i in shown)
        # Every shown cell of that size: picking one of two equal cells by position
        # would let whoever knows the rule tell which counts could have been hidden.
        hidden |= {i for i in shown if counts[i] == smallest}
    return tuple(sorted(hidden))
