from __future__ import annotations

import doctest
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from estimator import disclosure
from estimator.disclosure import suppress_cells, suppress_linked

cells = st.lists(st.integers(min_value=0, max_value=60), min_size=2, max_size=8)
thresholds = st.integers(min_value=1, max_value=25)


def attacker_ranges(shown: dict[int, int], total: int, hidden: list[int], yes=None):
    """What the published numbers allow for each hidden count: (least, most) by LP.

    The attacker knows the total, every shown cell's count and, through the estimates,
    the "yes" reports of each shown cell and overall (``yes``: per-cell yes counts of
    the truth, of which only the shown ones and the sum are used). Unknowns: the hidden
    cells' counts x and yes counts y, with 0 <= y <= x.
    """
    m = len(hidden)
    rest = total - sum(shown.values())
    a_eq = [[1.0] * m + [0.0] * m]
    b_eq = [rest]
    if yes is not None:
        a_eq.append([0.0] * m + [1.0] * m)
        b_eq.append(sum(yes[i] for i in hidden))
    a_ub = np.hstack([-np.eye(m), np.eye(m)])  # y_i - x_i <= 0
    ranges = []
    for j in range(m):
        objective = np.zeros(2 * m)
        objective[j] = 1.0
        low = linprog(objective, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=b_eq)
        high = linprog(-objective, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=b_eq)
        assert low.status == 0 and high.status == 0
        ranges.append((low.fun, -high.fun))
    return ranges


def test_examples_in_docstrings_run():
    assert doctest.testmod(disclosure).failed == 0


@settings(max_examples=300, deadline=None)
@given(counts=cells, k=thresholds, data=st.data())
def test_differencing_the_total_and_shown_cells_never_determines_a_hidden_cell(counts, k, data):
    hidden = list(suppress_cells(counts, k, total=sum(counts)))
    shown = {i: c for i, c in enumerate(counts) if i not in hidden}
    assert all(c >= k for c in shown.values())
    if not hidden or sum(counts) == 0:
        return  # nothing hidden, or nobody answered: no one to protect
    yes = [data.draw(st.integers(0, c)) for c in counts]
    for low, high in attacker_ranges(shown, sum(counts), hidden, yes):
        assert high - low >= 1 - 1e-9


@settings(max_examples=300, deadline=None)
@given(counts=cells, k=thresholds)
def test_hidden_cells_are_none_or_at_least_two_holding_k_together(counts, k):
    hidden = suppress_cells(counts, k)
    assert len(hidden) != 1
    everything = len(hidden) == len(counts)
    assert not hidden or sum(counts[i] for i in hidden) >= k or everything
    assert {i for i, c in enumerate(counts) if c < k} <= set(hidden)


@settings(max_examples=200, deadline=None)
@given(counts=cells, k=thresholds, data=st.data())
def test_weighted_differencing_of_estimates_reveals_only_a_group_of_at_least_k(counts, k, data):
    # Overall estimate and the shown cells' estimates with their n give back the hidden
    # cells' pooled estimate: (n·q̂ − Σ nᵢ·q̂ᵢ)/(n − Σ nᵢ), a group of all hidden people.
    q = [data.draw(st.floats(0, 1)) for _ in counts]
    hidden = suppress_cells(counts, k)
    shown = [i for i in range(len(counts)) if i not in hidden]
    n_hidden = sum(counts) - sum(counts[i] for i in shown)
    if not hidden or n_hidden == 0:
        return
    overall = sum(c * x for c, x in zip(counts, q, strict=True)) / sum(counts)
    pooled = (sum(counts) * overall - sum(counts[i] * q[i] for i in shown)) / n_hidden
    truth = sum(counts[i] * q[i] for i in hidden) / n_hidden
    assert pooled == pytest.approx(truth, abs=1e-9)
    assert n_hidden >= k or len(hidden) == len(counts)
    assert len(hidden) >= 2


def rule_aware_alternatives(counts: list[int], k: int, hidden: tuple[int, ...]):
    """Every count vector that the published numbers AND the rule allow: same shown
    cells, same total, and the rule hides exactly the same cells."""
    rest = sum(counts[i] for i in hidden)
    for head in itertools.product(range(rest + 1), repeat=len(hidden) - 1):
        if sum(head) > rest:
            continue
        candidate = list(counts)
        for i, value in zip(hidden, [*head, rest - sum(head)], strict=True):
            candidate[i] = value
        if suppress_cells(candidate, k) == hidden:
            yield candidate


small_breakdowns = st.lists(st.integers(0, 14), min_size=2, max_size=4)


@settings(max_examples=250, deadline=None)
@given(counts=small_breakdowns, k=st.integers(2, 7))
def test_an_attacker_who_knows_the_rule_cannot_pin_a_hidden_cell_either(counts, k):
    hidden = suppress_cells(counts, k)
    rest = sum(counts[i] for i in hidden)
    if not hidden or rest == 0 or len(hidden) > 3:  # nothing to pin, or too many to search
        return
    possible = {i: set() for i in hidden}
    for candidate in rule_aware_alternatives(counts, k, hidden):
        for i in hidden:
            possible[i].add(candidate[i])
    assert all(counts[i] in possible[i] for i in hidden)  # the truth is among them
    assert all(len(values) >= 2 for values in possible.values()), possible


def test_equal_sized_candidates_are_hidden_together():
    # Hiding only the first 12 would be reproduced by (12, 12, 9) alone.
    assert suppress_cells([12, 12, 9], k=10) == (0, 1, 2)


def test_hidden_cells_all_at_k_minus_one_take_another_cell():
    # Two hidden cells below 7 summing to 12 could only be 6 and 6.
    assert suppress_cells([7, 6, 12, 6], k=7) == (0, 1, 3)


def test_one_small_cell_takes_the_smallest_other_cell_with_it():
    assert suppress_cells([120, 4, 35, 60], k=10) == (1, 2)


def test_small_cells_that_together_stay_below_k_take_another_cell():
    assert suppress_cells([3, 4, 100, 200], k=10) == (0, 1, 2)


def test_empty_categories_are_hidden_like_small_ones_and_never_alone():
    assert suppress_cells([50, 0, 0], k=10) == (0, 1, 2)
    assert suppress_cells([50, 0, 70], k=10) == (0, 1)


def test_a_breakdown_with_every_cell_large_enough_hides_nothing():
    assert suppress_cells([10, 11, 500], k=10) == ()


def test_a_breakdown_too_small_overall_hides_everything():
    assert suppress_cells([3, 2, 4], k=10) == (0, 1, 2)


def test_a_single_category_is_the_overall_figure_and_is_hidden_below_k():
    assert suppress_cells([7], k=10) == (0,)
    assert suppress_cells([70], k=10) == ()


def test_two_small_cells_summing_to_k_need_nothing_more():
    assert suppress_cells([5, 5, 80, 90], k=10) == (0, 1)


@pytest.mark.parametrize(
    ("counts", "k", "total", "message"),
    [
        ([3, -1], 10, None, ">= 0"),
        ([3, 2.5], 10, None, "whole numbers"),
        ([3, math.nan], 10, None, "whole numbers"),
        ([3, "4"], 10, None, "whole numbers"),
        ([3, None], 10, None, "whole numbers"),
        ([3, 4], 0, None, "k must be"),
        ([3, 4], 2.5, None, "k must be"),
        ([3, 4], 10, 9, "skipped the grouping question"),
    ],
)
def test_bad_inputs_are_refused(counts, k, total, message):
    with pytest.raises(ValueError, match=message):
        suppress_cells(counts, k, total)


# --- Several breakdowns of the same respondents (linked tables) -----------------------------


def exact_rank(rows: list[list[int]]) -> int:
    """Rank over the rationals by Gaussian elimination with fractions: no tolerance."""
    matrix = [[Fraction(x) for x in row] for row in rows]
    rank = 0
    for column in range(len(matrix[0]) if matrix else 0):
        pivot = next((r for r in range(rank, len(matrix)) if matrix[r][column]), None)
        if pivot is None:
            continue
        matrix[rank], matrix[pivot] = matrix[pivot], matrix[rank]
        for r in range(len(matrix)):
            if r != rank and matrix[r][column]:
                factor = matrix[r][column] / matrix[rank][column]
                matrix[r] = [a - factor * b for a, b in zip(matrix[r], matrix[rank], strict=True)]
        rank += 1
    return rank


def small_sets(atoms, counts, sizes, k):
    """Every cell, atom and intersection of two cells of different tables holding
    1 … k − 1 respondents (not everyone), as indicator vectors over the non-empty atoms."""
    present = [(a, n) for a, n in zip(atoms, counts, strict=True) if n]
    cells = {
        (t, i): [int(a[t] == i) for a, _ in present]
        for t in range(len(sizes))
        for i in range(sizes[t])
    }
    found = list(cells.values())
    found += [[int(j == i) for j in range(len(present))] for i in range(len(present))]
    for (t, i), (u, j) in itertools.combinations(cells, 2):
        if t != u:
            found.append([x * y for x, y in zip(cells[t, i], cells[u, j], strict=True)])
    weights = [n for _, n in present]
    return cells, [
        v
        for v in found
        if 0 < sum(x * w for x, w in zip(v, weights, strict=True)) < k and sum(v) < len(present)
    ]


def recoverable(atoms, counts, sizes, hidden, k) -> list[list[int]]:
    """The small sets in the row space of the overall and the shown cells."""
    cells, targets = small_sets(atoms, counts, sizes, k)
    shown = [[1] * len(next(iter(cells.values()), []))] + [
        row for (t, i), row in cells.items() if i not in hidden[t]
    ]
    base = exact_rank(shown)
    return [v for v in targets if exact_rank([*shown, v]) == base]


def per_table(atoms, counts, sizes, k):
    """What each table alone would hide."""
    return [
        suppress_cells(
            [sum(n for a, n in zip(atoms, counts, strict=True) if a[t] == i) for i in range(size)],
            k,
        )
        for t, size in enumerate(sizes)
    ]


NESTED = ([(0, 0), (0, 1), (1, 2), (1, 3)], [25, 5, 12, 40], [2, 4])


def test_per_table_suppression_leaves_a_nested_small_cell_recoverable():
    atoms, counts, sizes = NESTED
    alone = per_table(atoms, counts, sizes, 10)
    assert alone == [(), (1, 2)]  # department 1 (5) hidden with department 2 (12)
    assert [0, 1, 0, 0] in recoverable(atoms, counts, sizes, alone, 10)  # faculty 0 − 25


def test_linked_suppression_protects_the_nested_small_cell():
    atoms, counts, sizes = NESTED
    hidden = suppress_linked(atoms, counts, sizes, k=10)
    assert hidden == [(), (0, 1, 2)]
    assert recoverable(atoms, counts, sizes, hidden, 10) == []


def test_margins_of_a_full_cross_classification_hide_nothing_more():
    # Faculty × job, every combination present: a 2 × 2 table's margins never give a cell.
    atoms = [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert suppress_linked(atoms, [25, 5, 12, 40], [2, 2], k=10) == [(), ()]


def test_a_small_skipped_group_is_protected_across_two_groupings():
    # Table 1 has a "no answer" category (index 2) of 3 people who answered table 0.
    atoms = [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2)]
    counts = [30, 30, 30, 30, 3]
    hidden = suppress_linked(atoms, counts, [2, 3], k=10)
    assert 2 in hidden[1]
    assert recoverable(atoms, counts, [2, 3], hidden, 10) == []


def test_the_result_does_not_depend_on_the_order_of_the_atoms():
    atoms, counts, sizes = NESTED
    order = [2, 0, 3, 1]
    shuffled = suppress_linked([atoms[i] for i in order], [counts[i] for i in order], sizes, k=10)
    assert shuffled == suppress_linked(atoms, counts, sizes, k=10)


def test_empty_atoms_are_ignored_and_no_tables_is_fine():
    assert suppress_linked([(0, 0), (1, 1)], [0, 50], [2, 2], k=10) == [(0, 1), (0, 1)]
    assert suppress_linked([(), ()], [3, 40], [], k=10) == []
    assert suppress_linked([], [], [2], k=10) == [(0, 1)]
    assert suppress_linked([], [], [2, 3], k=10) == [(0, 1), (0, 1, 2)]


@pytest.mark.parametrize(
    ("atoms", "counts", "sizes", "k", "message"),
    [
        ([(0, 0)], [3], [2, 2], 0, "k must be"),
        ([(0, 0)], [-3], [2, 2], 10, ">= 0"),
        ([(0, 2)], [3], [2, 2], 10, "below its table's size"),
        ([(0, -1)], [3], [2, 2], 10, "below its table's size"),
    ],
)
def test_bad_linked_inputs_are_refused(atoms, counts, sizes, k, message):
    with pytest.raises(ValueError, match=message):
        suppress_linked(atoms, counts, sizes, k=k)


@st.composite
def linked_tables(draw):
    """2–3 tables of 2–4 categories, some combinations present, counts 1–40; sometimes
    table 1 nested in table 0 (each of its categories inside one of table 0's)."""
    sizes = draw(st.lists(st.integers(2, 4), min_size=2, max_size=3))
    nested = draw(st.booleans())
    parent = [draw(st.integers(0, sizes[0] - 1)) for _ in range(sizes[1])]
    every = list(itertools.product(*(range(s) for s in sizes)))
    if nested:
        every = [a for a in every if parent[a[1]] == a[0]]
    chosen = draw(st.lists(st.sampled_from(every), min_size=1, max_size=12, unique=True))
    counts = [draw(st.integers(1, 40)) for _ in chosen]
    return chosen, counts, sizes


@settings(max_examples=200, deadline=None)
@given(tables=linked_tables(), k=st.integers(2, 12))
def test_no_small_group_is_in_the_row_space_of_what_is_shown(tables, k):
    atoms, counts, sizes = tables
    hidden = suppress_linked(atoms, counts, sizes, k=k)
    assert recoverable(atoms, counts, sizes, hidden, k) == []
    for alone, linked in zip(per_table(atoms, counts, sizes, k), hidden, strict=True):
        assert set(alone) <= set(linked)  # it only ever adds to each table's own rule


@settings(max_examples=150, deadline=None)
@given(tables=linked_tables(), k=st.integers(2, 12))
def test_bounds_from_non_negative_counts_do_not_pin_a_small_group_either(tables, k):
    """Evidence beyond the proof: an attacker who also uses that no count is negative
    finds, by linear programming, a range of at least 1 for every small group's count.
    (One who knew which combinations hold at least one respondent could pin some, e.g.
    two atoms of one respondent each: that knowledge is assumed away.)"""
    atoms, counts, sizes = tables
    hidden = suppress_linked(atoms, counts, sizes, k=k)
    cells, targets = small_sets(atoms, counts, sizes, k)
    rows = [[1] * len(atoms)] + [row for (t, i), row in cells.items() if i not in hidden[t]]
    shown = [sum(x * n for x, n in zip(row, counts, strict=True)) for row in rows]
    for target in targets:
        ends = [
            linprog(sign * np.array(target), A_eq=rows, b_eq=shown, bounds=(0, None))
            for sign in (1, -1)
        ]
        assert all(end.status == 0 for end in ends)
        assert -ends[1].fun - ends[0].fun >= 1 - 1e-9, target
