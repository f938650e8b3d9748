"""What every result is computed from: a survey round's counts of reports.

Estimates, breakdowns, cross-tabs, models, charts and the classroom's live view never see
a stored row: they ask :func:`survey_counts` for the counts of one round (per question
and report, per hour, per combination of reports) and hand them to the maths. Whoever
holds a :class:`SurveyCounts` can compute every result, which is also how a frozen copy
of them can stand for the data as it was at some earlier moment.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from django.db.models import Count, FilteredRelation, Q, Sum

from estimator.estimates import NumberStats
from responses.models import AnswerPattern, ExactSum, Submission, Tally, whole
from survey.models import Survey


@dataclass
class QuestionTally:
    """What the tallies hold for one question in one round."""

    counts: Counter[int] = field(default_factory=Counter)  # reports per tally key
    count: int = 0
    total: int = 0
    total_sq: int = 0
    simulated: int = 0
    skipped: int = 0  # "prefer not to answer": counted apart, in none of the above

    @property
    def stats(self) -> NumberStats:
        # Σr² ≥ (Σr)²/n always; only SQLite's float sums beyond 2⁵³ could round below it.
        floor = -(-(self.total * self.total) // self.count) if self.count else 0
        return NumberStats(self.count, self.total, max(self.total_sq, floor))

    def add(self, key: int | None, count: int, total: int, total_sq: int, simulated: bool):
        if key is None:
            self.skipped += count
            return
        self.counts[key] += count
        self.count += count
        self.total += total
        self.total_sq += total_sq
        if simulated:
            self.simulated += count


@dataclass(frozen=True)
class HourTally:
    """One question's reports that arrived in one hour (skips left out)."""

    hour: datetime
    tally: QuestionTally


class SurveyCounts:
    """The counts of one round of a survey, each read once, when first asked for."""

    def __init__(self, survey: Survey, round: int | None = None) -> None:
        self.survey = survey
        self.round = round or survey.current_round

    @cached_property
    def tallies(self) -> dict[int, QuestionTally]:
        """{question id: its tally}: one aggregate query over the round."""
        tallies: dict[int, QuestionTally] = {}
        rows = (
            Tally.objects.filter(question__survey=self.survey, round=self.round)
            .values_list("question_id", "simulated", "value")
            .annotate(Sum("count"), ExactSum("total"), ExactSum("total_sq"))
            .order_by()
        )
        for question_id, simulated, key, count, total, total_sq in rows:
            tally = tallies.setdefault(question_id, QuestionTally())
            tally.add(key, count, whole(total), whole(total_sq), simulated)
        return tallies

    def tally(self, question_id: int) -> QuestionTally:
        return self.tallies.get(question_id, QuestionTally())

    def hours(self, question_id: int) -> list[HourTally]:
        """The question's reports hour by hour, oldest first (one aggregate query)."""
        rows = (
            Tally.objects.filter(question_id=question_id, round=self.round)
            .values_list("hour", "simulated", "value")
            .annotate(Sum("count"), ExactSum("total"), ExactSum("total_sq"))
            .order_by("hour")
        )
        hours: list[HourTally] = []
        for hour, simulated, key, count, total, total_sq in rows:
            if not hours or hours[-1].hour != hour:
                hours.append(HourTally(hour, QuestionTally()))
            hours[-1].tally.add(key, count, whole(total), whole(total_sq), simulated)
        return hours

    def joint(self, question_ids: Sequence[int]) -> Counter[tuple[int, ...]]:
        """``{(report to q1, report to q2, …): respondents}`` over the respondents who
        answered every one of ``question_ids`` (a skip is not an answer)."""
        if not question_ids:
            raise ValueError("joint counts need at least one question")
        counts = self._joint_from_patterns(question_ids)
        return counts if counts is not None else self._joint_from_answers(question_ids)

    @cached_property
    def patterns(self) -> Counter[str]:
        """{answer pattern key: respondents}: every combination of reports given in the
        round (real and simulated together; see :meth:`AnswerPattern.key_for`)."""
        rows = AnswerPattern.objects.filter(survey=self.survey, round=self.round)
        patterns: Counter[str] = Counter()
        for key, n in rows.values_list("key", "count"):
            patterns[key] += n
        return patterns

    def _joint_from_patterns(self, question_ids: Sequence[int]) -> Counter | None:
        """From the answer patterns kept at write time, or None when some stored report
        is in none of them (an import): then some question has more tallied reports than
        the patterns that hold it."""
        counts: Counter[tuple[int, ...]] = Counter()
        held: Counter[int] = Counter()
        for key, n in self.patterns.items():
            values = AnswerPattern.parse(key)
            for qid in question_ids:
                if values.get(qid) is not None:
                    held[qid] += n
            if all(values.get(qid) is not None for qid in question_ids):
                counts[tuple(values[qid] for qid in question_ids)] += n
        tallied = {qid: self.tally(qid).count for qid in question_ids}
        if any(tallied[qid] != held[qid] for qid in question_ids):
            return None
        return counts

    def _joint_from_answers(self, question_ids: Sequence[int]) -> Counter:
        """One query: the submissions joined once per question to that question's
        answer, grouped by the answers' values."""
        joins = {
            f"q{i}": FilteredRelation(
                "answers", condition=Q(answers__question_id=qid, answers__value__isnull=False)
            )
            for i, qid in enumerate(question_ids)
        }
        values = [f"q{i}__value" for i in range(len(question_ids))]
        rows = (
            Submission.objects.filter(survey=self.survey, round=self.round)
            .annotate(**joins)
            .filter(**{f"{value}__isnull": False for value in values})
            .values_list(*values)
            .annotate(n=Count("pk"))
            .order_by()
        )
        return Counter({tuple(row[:-1]): row[-1] for row in rows})


class FrozenCounts(SurveyCounts):
    """The counts of a round as they were when :meth:`freeze` read them: every tally,
    every hour and every answer pattern, kept as JSON so that results can be computed
    later exactly as they would have been then (what a viewer sees between releases)."""

    def __init__(self, survey: Survey, data: dict) -> None:
        super().__init__(survey, data["round"])
        self.data = data

    @classmethod
    def freeze(cls, counts: SurveyCounts) -> FrozenCounts:
        questions = list(counts.survey.questions.values_list("id", flat=True))
        data = {
            "round": counts.round,
            "hours": {
                str(qid): [[h.hour.isoformat(), _tally_json(h.tally)] for h in counts.hours(qid)]
                for qid in questions
            },
            "patterns": dict(counts.patterns),
        }
        return cls(counts.survey, data)

    @cached_property
    def tallies(self) -> dict[int, QuestionTally]:
        tallies: dict[int, QuestionTally] = {}
        for qid, hours in self.data["hours"].items():
            total = tallies.setdefault(int(qid), QuestionTally())
            for _, tally in hours:
                _merge(total, _tally_of(tally))
        return tallies

    def hours(self, question_id: int) -> list[HourTally]:
        return [
            HourTally(datetime.fromisoformat(hour), _tally_of(tally))
            for hour, tally in self.data["hours"].get(str(question_id), [])
        ]

    @cached_property
    def patterns(self) -> Counter[str]:
        return Counter(self.data["patterns"])

    def _joint_from_answers(self, question_ids: Sequence[int]) -> Counter:
        raise ValueError("frozen counts hold the answer patterns only")


def _tally_json(tally: QuestionTally) -> dict:
    return {
        "counts": {str(k): n for k, n in tally.counts.items()},
        "sums": [tally.count, tally.total, tally.total_sq, tally.simulated, tally.skipped],
    }


def _tally_of(data: dict) -> QuestionTally:
    count, total, total_sq, simulated, skipped = data["sums"]
    counts = Counter({int(k): n for k, n in data["counts"].items()})
    return QuestionTally(counts, count, total, total_sq, simulated, skipped)


def _merge(into: QuestionTally, tally: QuestionTally) -> None:
    into.counts.update(tally.counts)
    into.count += tally.count
    into.total += tally.total
    into.total_sq += tally.total_sq
    into.simulated += tally.simulated
    into.skipped += tally.skipped


def survey_counts(survey: Survey, round: int | None = None) -> SurveyCounts:
    """The counts of ``survey``'s round (the current one unless given)."""
    return SurveyCounts(survey, round)


def joint_counts(
    survey: Survey, question_ids: Sequence[int], round: int | None = None
) -> Counter[tuple[int, ...]]:
    """:meth:`SurveyCounts.joint` of the survey's round (the current one unless given)."""
    return survey_counts(survey, round).joint(question_ids)


def has_reports(survey: Survey) -> bool:
    """Whether any report of the survey is stored, in any round, simulated or not."""
    return Submission.objects.filter(survey=survey).exists()


def stored_submissions(survey: Survey, *, simulated: bool | None = None) -> int:
    """How many submissions of the survey are stored (all rounds)."""
    submissions = Submission.objects.filter(survey=survey)
    if simulated is not None:
        submissions = submissions.filter(simulated=simulated)
    return submissions.count()
