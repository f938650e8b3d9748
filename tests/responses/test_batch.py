"""The counts a group of submissions adds up to, whichever way they are grouped."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from estimator.designs import make_design
from responses.batch import Batch, Row, parse_key, pattern_key

HOURS = [datetime(2026, 1, 5, h, tzinfo=UTC) for h in (3, 4)]
DESIGNS = {
    1: make_design("binary", "forced_response", {"p_truth": 0.5, "p_yes": 0.5}),
    2: make_design("number", "laplace", {"epsilon": 1.0, "lower": 0, "upper": 30}),
}
REPORT = {1: st.sampled_from([0, 1, None]), 2: st.integers(-(10**12), 10**12) | st.none()}
ROWS = st.lists(
    st.builds(
        lambda reports, simulated, hour, count: Row(
            7, 1, simulated, hour, pattern_key(reports), count
        ),
        st.fixed_dictionaries({}, optional={**REPORT, 3: st.sampled_from([0, 1])}),
        st.booleans(),
        st.sampled_from(HOURS),
        st.integers(1, 5),
    ),
    max_size=40,
)


def one_by_one(rows: list[Row]) -> dict[tuple, list[int]]:
    """The tallies as the definition reads, one report at a time in Python's integers."""
    tallies: dict[tuple, list[int]] = {}
    for row in rows:
        for qid, value in parse_key(row.key).items():
            if qid not in DESIGNS:
                continue
            key = None if value is None else DESIGNS[qid].tally_key(value)
            sums = tallies.setdefault((qid, row.round, row.simulated, row.hour, key), [0] * 3)
            sums[0] += row.count
            if value is not None:
                sums[1] += value * row.count
                sums[2] += value * value * row.count
    return tallies


@settings(max_examples=200, deadline=None)
@given(ROWS)
def test_a_batch_counts_every_report_exactly_as_one_at_a_time(rows):
    batch = Batch.of(rows, DESIGNS)
    assert {k: list(v) for k, v in batch.tally_rows().items()} == one_by_one(rows)
    assert sum(batch.patterns.values()) == sum(row.count for row in rows)
    assert sum(batch.submissions.values()) == sum(row.count for row in rows)


@settings(max_examples=50, deadline=None)
@given(ROWS)
def test_adding_rows_one_by_one_gives_the_same_batch(rows):
    batch = Batch()
    for row in rows:
        batch.add(row, DESIGNS)
    whole = Batch.of(rows, DESIGNS)
    assert batch.tally_rows() == whole.tally_rows()
    assert batch.patterns == whole.patterns
