"""Reports into rows: the one place that decides what a submission becomes.

Every way of storing reports (the respondent pages and the API, simulated respondents,
imports, the classroom) writes one current-hour row per submission holding its reports
as one answer-pattern key. Whatever reads or seals those rows turns them into counts
here, with each question's own design saying where a report is tallied, so that the same
reports give the same tallies, sums and patterns whichever way they arrived.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from estimator.designs import Design
from responses.models import TallySums

Reports = Mapping[int, int | None]


def pattern_key(values: Reports) -> str:
    """``"question=report,…"`` in question id order: the same reports, the same key; a
    skip ("prefer not to answer") is ``"question="``."""
    return ",".join(
        f"{qid}={'' if values[qid] is None else int(values[qid])}" for qid in sorted(values)
    )


def parse_key(key: str) -> dict[int, int | None]:
    """The reports of a :func:`pattern_key`."""
    return {
        int(q): int(v) if v else None
        for q, v in (item.split("=") for item in key.split(",") if item)
    }


@dataclass(frozen=True)
class Row:
    """``count`` submissions with the same reports (a key), survey, round, hour and kind."""

    survey_id: int
    round: int
    simulated: bool
    hour: datetime
    key: str
    count: int = 1


@dataclass
class Batch:
    """The counts a group of submissions adds up to: per question, hour and tally key the
    reports, their sum and sum of squares; per survey and round how many gave each
    pattern; per survey how many real and simulated submissions there were."""

    tallies: dict[tuple, list[int]] = field(default_factory=dict)
    patterns: Counter[tuple] = field(default_factory=Counter)
    submissions: Counter[tuple[int, bool]] = field(default_factory=Counter)

    @classmethod
    def of(cls, rows: Iterable[Row], designs: Mapping[int, Design]) -> Batch:
        """``designs``: every involved question's design (question id → design). A
        report to a question not among them (deleted since) is left out of the tallies,
        as the question is gone, but stays in its pattern."""
        groups: dict[tuple, Counter[str]] = {}
        for row in rows:
            group = groups.setdefault(
                (row.survey_id, row.round, row.simulated, row.hour), Counter()
            )
            group[row.key] += row.count
        batch = cls()
        for (survey_id, round_, simulated, hour), keys in groups.items():
            batch.add_group(survey_id, round_, simulated, hour, keys.items(), designs)
        return batch

    def add(self, row: Row, designs: Mapping[int, Design]) -> None:
        self.add_group(
            row.survey_id, row.round, row.simulated, row.hour, [(row.key, row.count)], designs
        )

    def add_group(
        self,
        survey_id: int,
        round: int,
        simulated: bool,
        hour: datetime,
        keys: Iterable[tuple[str, int]],
        designs: Mapping[int, Design],
    ) -> None:
        """Add submissions of one survey, round, kind and hour given as ``(pattern key,
        how many)``: the keys are split once and each question's reports tallied as one
        array by its design (the current hour of a large survey holds thousands)."""
        reports: dict[int, tuple[list[int], list[int]]] = {}
        skipped: Counter[int] = Counter()
        for key, count in keys:
            self.patterns[survey_id, round, simulated, key] += count
            self.submissions[survey_id, simulated] += count
            for qid, value in parse_key(key).items():
                if value is None:
                    skipped[qid] += count
                else:
                    values, counts = reports.setdefault(qid, ([], []))
                    values.append(value)
                    counts.append(count)
        for qid, count in skipped.items():
            if qid in designs:
                self._sums(qid, round, simulated, hour, None)[0] += count
        for qid, (values, counts) in reports.items():
            design = designs.get(qid)
            if design is not None:
                self._tally((qid, round, simulated, hour), design, values, counts)

    def _sums(self, qid: int, round: int, simulated: bool, hour: datetime, key) -> list[int]:
        return self.tallies.setdefault((qid, round, simulated, hour, key), [0] * 3)

    def _tally(self, where: tuple, design: Design, values: list[int], counts: list[int]) -> None:
        """Count, sum and sum of squares per tally key, exactly: in 64-bit integers when
        they cannot overflow, else in Python's integers."""
        largest = max(map(abs, values))
        exact = largest * largest * sum(counts) < 2**62
        dtype = np.int64 if exact else object
        value = np.array(values, dtype=dtype)
        count = np.array(counts, dtype=dtype)
        tally_keys = (
            design.tally_keys(value) if exact else np.array([design.tally_key(v) for v in values])
        )
        keys, at = np.unique(tally_keys, return_inverse=True)
        sums = np.zeros((3, len(keys)), dtype=dtype)
        np.add.at(sums[0], at, count)
        np.add.at(sums[1], at, value * count)
        np.add.at(sums[2], at, value * value * count)
        for j, key in enumerate(keys.tolist()):
            into = self._sums(*where, int(key))
            for i in range(3):
                into[i] += int(sums[i, j])

    def tally_rows(self) -> dict[tuple, TallySums]:
        """``{(question, round, simulated, hour, tally key or None): sums}``."""
        return {key: TallySums(*sums) for key, sums in self.tallies.items()}
