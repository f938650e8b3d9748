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
        batch = cls()
        for row in rows:
            batch.add(row, designs)
        return batch

    def add(self, row: Row, designs: Mapping[int, Design]) -> None:
        self.patterns[row.survey_id, row.round, row.simulated, row.key] += row.count
        self.submissions[row.survey_id, row.simulated] += row.count
        for qid, value in parse_key(row.key).items():
            design = designs.get(qid)
            if design is None:
                continue
            key = None if value is None else design.tally_key(value)
            sums = self.tallies.setdefault((qid, row.round, row.simulated, row.hour, key), [0] * 3)
            sums[0] += row.count
            if value is not None:
                sums[1] += value * row.count
                sums[2] += value * value * row.count

    def tally_rows(self) -> dict[tuple, TallySums]:
        """``{(question, round, simulated, hour, tally key or None): sums}``."""
        return {key: TallySums(*sums) for key, sums in self.tallies.items()}
