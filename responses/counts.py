"""What every result is computed from: a survey round's counts of reports.

Estimates, breakdowns, cross-tabs, models, charts and the classroom's live view never see
a stored row: they ask :func:`survey_counts` for the counts of one round (per question
and report, per hour, per combination of reports) and hand them to the maths. The counts
are the sealed ones (a few aggregate rows whatever the number of respondents) plus the
current hour's submissions, grouped by the database and counted here with the same
:mod:`responses.batch` the seal uses. Whoever holds a :class:`SurveyCounts` can compute
every result, which is also how a frozen copy (:class:`FrozenCounts`) can stand for the
data as it was at some earlier moment.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from django.db.models import CharField, Count, F, Max, OuterRef, QuerySet, Subquery, Sum
from django.db.models.functions import Cast, Coalesce

from estimator.designs import Design
from estimator.estimates import NumberStats
from responses.batch import Batch, parse_key
from responses.models import (
    INBOXES,
    QUOTA_COUNTS,
    AnswerPattern,
    ExactSum,
    Release,
    SurveyCount,
    Tally,
    whole,
)
from survey.models import Role, Survey


@dataclass
class QuestionTally:
    """One question's reports in one round (or one hour of it)."""

    counts: Counter[int] = field(default_factory=Counter)  # reports per tally key
    count: int = 0
    total: int = 0
    total_sq: int = 0
    simulated: int = 0
    skipped: int = 0  # "prefer not to answer": counted apart, in none of the above
    # Per tally key, the sum and sum of squares of its reports: a split ballot's number
    # question reads each ballot's sums from its own keys.
    key_sums: dict[int, list[int]] = field(default_factory=dict)

    @property
    def stats(self) -> NumberStats:
        return _stats(self.count, self.total, self.total_sq)

    @property
    def key_stats(self) -> dict[int, NumberStats]:
        """(count, sum, sum of squares) per tally key."""
        return {key: _stats(self.counts[key], *sums) for key, sums in self.key_sums.items()}

    def add(self, key: int | None, count: int, total: int, total_sq: int, simulated: bool):
        if key is None:
            self.skipped += count
            return
        self.counts[key] += count
        self.count += count
        self.total += total
        self.total_sq += total_sq
        sums = self.key_sums.setdefault(key, [0, 0])
        sums[0] += total
        sums[1] += total_sq
        if simulated:
            self.simulated += count

    def merge(self, tally: QuestionTally) -> None:
        """Add ``tally``'s reports to these (another hour's, say)."""
        self.counts.update(tally.counts)
        self.count += tally.count
        self.total += tally.total
        self.total_sq += tally.total_sq
        self.simulated += tally.simulated
        self.skipped += tally.skipped
        for key, (total, total_sq) in tally.key_sums.items():
            sums = self.key_sums.setdefault(key, [0, 0])
            sums[0] += total
            sums[1] += total_sq

    def estimate(self, design: Design, population: int | None = None) -> Any:
        """The question's estimate from these reports, as its design reads tallies."""
        return design.estimate_from_tally(
            self.counts, self.stats, population, key_stats=self.key_stats
        )


def _stats(count: int, total: int, total_sq: int) -> NumberStats:
    # Σr² ≥ (Σr)²/n always; only SQLite's float sums beyond 2⁵³ could round below it.
    floor = -(-(total * total) // count) if count else 0
    return NumberStats(count, total, max(total_sq, floor))


@dataclass(frozen=True)
class HourTally:
    """One question's reports that arrived in one hour."""

    hour: datetime
    tally: QuestionTally


class SurveyCounts:
    """The counts of one round of a survey, each read once, when first asked for."""

    def __init__(self, survey: Survey, round: int | None = None, *, sealed: bool = False) -> None:
        """``sealed``: only what the seals have counted, none of the hours not sealed yet."""
        self.survey = survey
        self.round = round or survey.current_round
        self.sealed = sealed

    @cached_property
    def _current(self) -> Batch:
        """The current hour's submissions (and the last hour's, until it is sealed),
        counted as the seal will count them. The rows are grouped by the database with
        their hour as text; the few hours among them are read once as dates, so that
        thousands of rows need no conversion of their own."""
        batch = Batch()
        if self.sealed:
            return batch
        text = Cast("hour", CharField())
        tables = [inbox.objects.filter(survey=self.survey, round=self.round) for inbox in INBOXES]
        first, second = (table.values_list(text, "hour").distinct().order_by() for table in tables)
        hours = dict(first.union(second))
        if not hours:
            return batch
        first, second = (
            table.values_list("simulated", text, "reports").annotate(n=Count("receipt")).order_by()
            for table in tables
        )
        groups: dict[tuple, list[tuple[str, int]]] = {}
        for simulated, hour, key, n in first.union(second, all=True):
            groups.setdefault((simulated, hours[hour]), []).append((key, n))
        designs = {q.id: q.design for q in self.survey.questions.all()}
        for (simulated, hour), keys in groups.items():
            batch.add_group(self.survey.pk, self.round, simulated, hour, keys, designs)
        return batch

    def _hourly(self, question_ids: Sequence[int] | None = None) -> dict[int, dict]:
        """{question: {hour: QuestionTally}}, sealed and current together."""
        sealed = Tally.objects.filter(question__survey=self.survey, round=self.round)
        if question_ids is not None:
            sealed = sealed.filter(question_id__in=question_ids)
        rows = (
            sealed.values_list("question_id", "hour", "simulated", "value")
            .annotate(Sum("count"), ExactSum("total"), ExactSum("total_sq"))
            .order_by()
        )
        hourly: dict[int, dict] = {}
        for qid, hour, simulated, key, count, total, total_sq in rows:
            tally = hourly.setdefault(qid, {}).setdefault(hour, QuestionTally())
            tally.add(key, count, whole(total), whole(total_sq), simulated)
        for (qid, _, simulated, hour, key), sums in self._current.tally_rows().items():
            if question_ids is None or qid in question_ids:
                tally = hourly.setdefault(qid, {}).setdefault(hour, QuestionTally())
                tally.add(key, *sums, simulated)
        return hourly

    @cached_property
    def tallies(self) -> dict[int, QuestionTally]:
        """{question id: its tally over the round}."""
        tallies: dict[int, QuestionTally] = {}
        rows = (
            Tally.objects.filter(question__survey=self.survey, round=self.round)
            .values_list("question_id", "simulated", "value")
            .annotate(Sum("count"), ExactSum("total"), ExactSum("total_sq"))
            .order_by()
        )
        for qid, simulated, key, count, total, total_sq in rows:
            tallies.setdefault(qid, QuestionTally()).add(
                key, count, whole(total), whole(total_sq), simulated
            )
        for (qid, _, simulated, _, key), sums in self._current.tally_rows().items():
            tallies.setdefault(qid, QuestionTally()).add(key, *sums, simulated)
        return tallies

    def tally(self, question_id: int) -> QuestionTally:
        return self.tallies.get(question_id, QuestionTally())

    def hours(self, question_id: int) -> list[HourTally]:
        """The question's reports hour by hour, oldest first."""
        by_hour = self._hourly([question_id]).get(question_id, {})
        return [HourTally(hour, by_hour[hour]) for hour in sorted(by_hour)]

    @cached_property
    def patterns(self) -> Counter[str]:
        """{answer pattern key: respondents}: every combination of reports given in the
        round (real and simulated together; see :func:`responses.batch.pattern_key`)."""
        rows = AnswerPattern.objects.filter(survey=self.survey, round=self.round)
        patterns: Counter[str] = Counter()
        for key, n in rows.values_list("key", "count"):
            patterns[key] += n
        for (_, _, _, key), n in self._current.patterns.items():
            patterns[key] += n
        return patterns

    def joint(self, question_ids: Sequence[int]) -> Counter[tuple[int, ...]]:
        """``{(report to q1, report to q2, …): respondents}`` over the respondents who
        answered every one of ``question_ids`` (a skip is not an answer)."""
        if not question_ids:
            raise ValueError("joint counts need at least one question")
        counts: Counter[tuple[int, ...]] = Counter()
        for key, n in self.patterns.items():
            values = parse_key(key)
            if all(values.get(qid) is not None for qid in question_ids):
                counts[tuple(values[qid] for qid in question_ids)] += n
        return counts

    def skipped_by(self, question_id: int, group_ids: Sequence[int]) -> Counter[tuple]:
        """``{(answer to each of group_ids, or None): respondents}`` over those who chose
        "prefer not to answer" for ``question_id`` (not those it was never shown to)."""
        counts: Counter[tuple] = Counter()
        for key, n in self.patterns.items():
            values = parse_key(key)
            if question_id in values and values[question_id] is None:
                counts[tuple(values.get(qid) for qid in group_ids)] += n
        return counts


class FrozenCounts(SurveyCounts):
    """The counts of a round as they were when :meth:`freeze` read them: every tally,
    every hour and every answer pattern, kept as JSON so that results can be computed
    later exactly as they would have been then (what a viewer sees between releases)."""

    def __init__(self, survey: Survey, data: dict) -> None:
        super().__init__(survey, data["round"])
        self.data = data

    @classmethod
    def freeze(cls, counts: SurveyCounts) -> FrozenCounts:
        hourly = counts._hourly()
        data = {
            "round": counts.round,
            "hours": {
                str(qid): [[h.isoformat(), _tally_json(by_hour[h])] for h in sorted(by_hour)]
                for qid, by_hour in hourly.items()
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
                total.merge(_tally_of(tally))
        return tallies

    def hours(self, question_id: int) -> list[HourTally]:
        return [
            HourTally(datetime.fromisoformat(hour), _tally_of(tally))
            for hour, tally in self.data["hours"].get(str(question_id), [])
        ]

    @cached_property
    def patterns(self) -> Counter[str]:
        return Counter(self.data["patterns"])


def _tally_json(tally: QuestionTally) -> dict:
    return {
        "counts": {str(k): n for k, n in tally.counts.items()},
        "sums": [tally.count, tally.total, tally.total_sq, tally.simulated, tally.skipped],
        "key_sums": {str(k): sums for k, sums in tally.key_sums.items()},
    }


def _tally_of(data: dict) -> QuestionTally:
    """A tally from its JSON; a release frozen before sums were kept per key has none
    (its questions had no split ballot on numbers, the one reader of them)."""
    count, total, total_sq, simulated, skipped = data["sums"]
    counts = Counter({int(k): n for k, n in data["counts"].items()})
    key_sums = {int(k): list(sums) for k, sums in data.get("key_sums", {}).items()}
    return QuestionTally(counts, count, total, total_sq, simulated, skipped, key_sums)


def survey_counts(survey: Survey, round: int | None = None) -> SurveyCounts:
    """The counts of ``survey``'s round (the current one unless given): the live ones,
    or the released ones when the survey was fetched for a viewer (``survey.role``, as
    every page and endpoint annotates it), so that no result a viewer sees follows a
    single respondent."""
    if getattr(survey, "role", None) == Role.VIEWER:
        return released_counts(survey, round)
    return SurveyCounts(survey, round)


def released_counts(survey: Survey, round: int | None = None) -> FrozenCounts:
    """The counts as of the round's last release, made anew once at least the survey's
    ``min_cell_count`` respondents have arrived since (none before the first k): polling
    before and after one person, or k − 1, shows exactly the same results.

    Releases are made from sealed hours only. A release cut in the middle of an hour
    would, once the hour is sealed, set apart the reports of those who arrived after it
    (the final counts minus the release): arrival order finer than the hour, which the
    seal exists to erase."""
    live = SurveyCounts(survey, round, sealed=True)
    arrived = sum(live.patterns.values())
    release = Release.objects.filter(survey=survey, round=live.round).first()
    released = release.respondents if release else 0
    if 0 <= arrived - released < survey.min_cell_count:
        data = release.counts if release else {"round": live.round, "hours": {}, "patterns": {}}
        return FrozenCounts(survey, data)
    frozen = FrozenCounts.freeze(live)
    Release.objects.update_or_create(
        survey=survey, round=live.round, defaults={"respondents": arrived, "counts": frozen.data}
    )
    return frozen


def joint_counts(
    survey: Survey, question_ids: Sequence[int], round: int | None = None
) -> Counter[tuple[int, ...]]:
    """:meth:`SurveyCounts.joint` of the survey's round (the current one unless given)."""
    return survey_counts(survey, round).joint(question_ids)


def has_reports(survey: Survey | int) -> bool:
    """Whether any report of the survey is stored, in any round, simulated or not."""
    survey_id = getattr(survey, "pk", survey)
    return SurveyCount.objects.filter(survey_id=survey_id).exists() or any(
        inbox.objects.filter(survey_id=survey_id).exists() for inbox in INBOXES
    )


def quota_taken(survey: Survey) -> int:
    """The real submissions a quota counts: those sealed, and those of the current
    hours' quota counts (kept for surveys with a quota). Three one-row reads."""
    sealed = SurveyCount.objects.filter(survey=survey).values_list("real", flat=True).first()
    current = sum(
        quota.objects.filter(survey=survey).values_list("n", flat=True).first() or 0
        for quota in QUOTA_COUNTS
    )
    return (sealed or 0) + current


def with_response_counts(surveys: QuerySet) -> QuerySet:
    """Surveys annotated with ``n_responses`` and ``n_simulated``: the sealed count and
    the current hours' rows, in the one query that lists them."""

    def current(**filters) -> Coalesce:
        counts = [
            Subquery(
                inbox.objects.filter(survey=OuterRef("pk"), **filters)
                .values("survey")
                .annotate(n=Count("receipt"))
                .values("n")
            )
            for inbox in INBOXES
        ]
        return sum((Coalesce(c, 0) for c in counts[1:]), Coalesce(counts[0], 0))

    return surveys.annotate(
        n_responses=Coalesce(F("sealed_count__real") + F("sealed_count__simulated"), 0) + current(),
        n_simulated=Coalesce(F("sealed_count__simulated"), 0) + current(simulated=True),
    )


def stored_submissions(survey: Survey, *, simulated: bool | None = None) -> int:
    """How many submissions of the survey are stored (all rounds): one sealed count and
    one count of the current hour's rows, whatever the number of respondents before."""
    sealed = SurveyCount.objects.filter(survey=survey).first() or SurveyCount()
    if simulated is None:
        total = sealed.real + sealed.simulated
    else:
        total = sealed.simulated if simulated else sealed.real
    for inbox in INBOXES:
        rows = inbox.objects.filter(survey=survey)
        if simulated is not None:
            rows = rows.filter(simulated=simulated)
        total += rows.count()
    return total


def last_answer_hours(survey_ids: Sequence[int]) -> dict[int, datetime]:
    """{survey id: the hour of its latest stored answer}, sealed or not, for surveys listed
    to the people who see them live (an hour is all the storage keeps)."""
    latest: dict[int, datetime] = {}
    sealed = (
        Tally.objects.filter(question__survey_id__in=survey_ids)
        .values_list("question__survey_id")
        .annotate(last=Max("hour"))
    )
    current = [
        inbox.objects.filter(survey_id__in=survey_ids)
        .values_list("survey_id")
        .annotate(last=Max("hour"))
        for inbox in INBOXES
    ]
    for rows in (sealed, *current):
        for survey_id, hour in rows:
            latest[survey_id] = max(hour, latest.get(survey_id, hour))
    return latest


def released_summary(survey: Survey) -> tuple[int, datetime | None]:
    """What a viewer may know of the arrivals: the respondents in the round's last release
    and the latest hour it holds (newer answers stay hidden until the next batch)."""
    released = released_counts(survey)
    hours = [hour for by_hour in released.data["hours"].values() for hour, _ in by_hour]
    return sum(released.patterns.values()), max(map(datetime.fromisoformat, hours), default=None)
