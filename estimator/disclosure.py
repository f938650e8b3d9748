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
category counts, which are not, and keeps a small group's pooled reports out of view.

Several breakdowns of the same respondents by different questions (*linked tables*
[1]_) can be combined where each alone is safe: :func:`suppress_linked` chooses their
hidden cells together.

References
----------
.. [1] A. Hundepool et al., "Statistical Disclosure Control", Wiley, 2012, §5.2
   (threshold rule) and §5.4 (secondary suppression, the differencing attack).
.. [2] L. Willenborg and T. de Waal, "Elements of Statistical Disclosure Control",
   Lecture Notes in Statistics 155, Springer, 2001, ch. 6.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

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


# --- Several breakdowns of the same respondents -------------------------------------------

_EXPOSED = 1e-6  # a residual below this counts as recoverable: rounding only hides more


def suppress_linked(
    atoms: Sequence[Sequence[int]],
    counts: Sequence[int],
    sizes: Sequence[int],
    k: int = DEFAULT_MIN_CELL,
) -> list[tuple[int, ...]]:
    """Cells to hide in several breakdowns of the same respondents (linked tables), so
    that no hidden cell and no small group can be recovered from all of them together.

    Every respondent falls into one *atom*, their combination of categories across the
    tables (table t is one grouping question, "no answer" included as a category), and
    every table partitions the atoms. A published cell gives its n and the sum of its
    reports, so an attacker holding every table and the overall knows the sum over the
    atoms of any linear combination of the shown cells' indicator vectors. A set of
    respondents is *recoverable* when its indicator vector lies in their row space.

    Parameters
    ----------
    atoms
        ``atoms[a][t]``: the category of atom ``a`` in table ``t``.
    counts
        Respondents per atom; atoms with none are left out (an attacker may know that
        a combination is impossible, e.g. a department of another faculty).
    sizes
        Number of categories of each table, as many as it shows.
    k
        Minimum number of respondents in a shown cell (the survey's setting).

    Returns
    -------
    list of tuple of int
        Per table, the indexes of the cells to hide, ascending. Each table's set
        contains :func:`suppress_cells` of its own counts; then, while some *target* is
        recoverable, a shown cell that its recovery uses is hidden (in the target's
        table or overlapping it first, smallest first, then by position). Targets: every
        cell, every atom and every intersection of two cells of different tables
        holding 1 to k − 1 respondents (the small groups the threshold protects), but
        not a set of everyone, which is the overall figure, published anyway.

    Notes
    -----
    Proven, on return: no target's indicator vector (over the non-empty atoms) lies in
    the row space of the shown cells' and the overall's, so no linear combination of
    the published counts or report sums equals a target's count or report sum, whatever
    the attacker knows about which atoms are empty. A hidden cell of k or more (hidden
    to protect a small one) may be recoverable when some atoms are known to be empty;
    that tells nothing new, since whatever follows from it follows from the shown
    cells, and every small set derived so is a target itself. Hiding stops at the
    latest when only the overall is shown, where nothing but the whole set is
    recoverable, so after at most ``sum(sizes)`` rounds. The rank test is numerical
    (SVD with a tolerance on 0/1 vectors); an error in it can only hide more.

    Tested, not proven: that bounds from counts being non-negative pin no target
    either (a linear program on random tables; within one table :func:`suppress_cells`
    keeps ≥ 2 hidden cells holding ≥ k). Not covered: an attacker who knows this rule,
    unions of three or more cells of different tables, and outputs beyond these
    breakdowns.

    Examples
    --------
    Faculty (table 0) and department (table 1), nested: faculty 0 holds departments 0
    (25) and 1 (5), faculty 1 holds departments 2 (12) and 3 (40). Alone, the
    department table hides 5 and 12; but faculty 0 minus department 0 is the 5, so
    department 0 goes too. (Faculty 1 minus department 3 gives the 12 back: a group
    of k or more, hidden only to protect the 5, which it no longer needs to.)

    >>> suppress_linked([(0, 0), (0, 1), (1, 2), (1, 3)], [25, 5, 12, 40], [2, 4], k=10)
    [(), (0, 1, 2)]
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    counts = _check_counts(counts, None)
    labels = np.array(atoms, dtype=int).reshape(len(counts), len(sizes))
    if labels.size and (labels.min() < 0 or (labels >= np.array(sizes)).any()):
        raise ValueError("every atom's category must be below its table's size")
    keep = np.array(counts) > 0
    labels, weights = labels[keep], np.array(counts, dtype=int)[keep]
    cells = _cells(labels, sizes)
    sums = cells @ weights
    offsets = np.cumsum([0, *sizes])
    hidden = np.zeros(len(cells), dtype=bool)
    for t, size in enumerate(sizes):
        for i in suppress_cells(sums[offsets[t] : offsets[t] + size].tolist(), k):
            hidden[offsets[t] + i] = True
    targets = _small_sets(labels, weights, cells, offsets, k)
    table_of = np.repeat(np.arange(len(sizes)), sizes)
    while (exposed := _first_exposed(cells, hidden, targets)) is not None:
        target, cell = exposed
        hidden[_to_hide(cells, sums, hidden, target, cell, table_of)] = True
    return [
        tuple(int(i) for i in np.flatnonzero(hidden[offsets[t] : offsets[t] + size]))
        for t, size in enumerate(sizes)
    ]


def _cells(labels: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """One 0/1 row per cell (table by table, category by category) over the atoms."""
    rows = [labels[:, t] == i for t, size in enumerate(sizes) for i in range(size)]
    return np.array(rows, dtype=float).reshape(len(rows), len(labels))


def _small_sets(labels, weights, cells, offsets, k) -> tuple[np.ndarray, list[int | None]]:
    """The sets whose recovery would single out a small group, as rows of 0/1 over the
    atoms, with the cell each one is (or None): cells, atoms and intersections of two
    cells of different tables holding 1 … k − 1 respondents, but not everyone (that is
    the overall figure, published anyway)."""
    everyone = len(weights)
    small = [i for i in range(len(cells)) if 0 < cells[i] @ weights < k]
    rows, names = [cells[small]], [*small]
    atoms = np.flatnonzero(weights < k)
    rows.append(_unit_rows(atoms, everyone))
    names += [None] * len(atoms)
    for t, u in itertools.combinations(range(len(offsets) - 1), 2):
        both = (
            cells[offsets[t] : offsets[t + 1], None, :]
            * cells[None, offsets[u] : offsets[u + 1], :]
        )
        both = both.reshape(both.shape[0] * both.shape[1], everyone)
        keep = (both @ weights > 0) & (both @ weights < k) & (both.sum(axis=1) > 1)
        rows.append(both[keep])
        names += [None] * int(keep.sum())
    matrix = np.vstack(rows)
    whole = matrix.sum(axis=1) < everyone
    return matrix[whole], [name for name, keep in zip(names, whole, strict=True) if keep]


def _unit_rows(indexes: np.ndarray, size: int) -> np.ndarray:
    rows = np.zeros((len(indexes), size))
    rows[np.arange(len(indexes)), indexes] = 1.0
    return rows


def _shown_rows(cells: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """The overall (all ones) and every shown cell."""
    return np.vstack([np.ones(cells.shape[1]), cells[~hidden]])


def _first_exposed(cells, hidden, targets) -> tuple[np.ndarray, int | None] | None:
    """The first target in the row space of the shown cells, or None."""
    matrix, names = targets
    if not len(matrix):
        return None
    _, s, vt = np.linalg.svd(_shown_rows(cells, hidden), full_matrices=False)
    basis = vt[s > s[0] * 1e-10]
    residual = np.linalg.norm(matrix - (matrix @ basis.T) @ basis, axis=1)
    first = np.flatnonzero(residual < _EXPOSED)
    return (matrix[first[0]], names[first[0]]) if len(first) else None


def _to_hide(cells, sums, hidden, target, cell, table_of) -> int:
    """The shown cell to hide next: one whose row the target's recovery uses, in the
    exposed cell's table or overlapping the target first, then the smallest, then the
    first. Some such cell exists: otherwise the target would be the overall."""
    shown = np.flatnonzero(~hidden)
    coefficients = np.linalg.lstsq(_shown_rows(cells, hidden).T, target, rcond=None)[0][1:]
    used = [i for i, c in zip(shown, coefficients, strict=True) if abs(c) > 1e-9] or list(shown)
    near = {i for i in used if (cells[i] @ target) > 0}
    if cell is not None:
        near |= {i for i in used if table_of[i] == table_of[cell]}
    return min(used, key=lambda i: (i not in near, sums[i], i))
