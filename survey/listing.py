"""*My surveys*: each survey with its answers so far, a lecture's questions under it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q, QuerySet

from responses.counts import last_answer_hours, released_summary, with_response_counts
from survey.models import Survey
from survey.permissions import sees_live_results


@dataclass
class Lecture:
    """A classroom session listed once, its questions in lecture order beneath it."""

    session: object
    surveys: list[Survey] = field(default_factory=list)

    @property
    def n_responses(self) -> int:
        return sum(survey.n_responses for survey in self.surveys)

    @property
    def last_answer(self) -> datetime | None:
        return max((s.last_answer for s in self.surveys if s.last_answer), default=None)


def listed_surveys(surveys: QuerySet, search: str = "") -> list[Survey | Lecture]:
    """The rows of *My surveys*: counts and last-answer hours live for those who see results
    live, as released in batches for viewers; questions of one lecture grouped together."""
    # A lesson's own question belongs to the lesson, listed on the Classroom page.
    surveys = surveys.filter(lesson=None)
    if search:
        lecture = Q(session_step__session__title__icontains=search)
        surveys = surveys.filter(Q(title__icontains=search) | lecture)
    surveys = with_response_counts(surveys.select_related("owner", "session_step__session"))
    surveys = list(surveys.prefetch_related("questions"))
    live = [survey for survey in surveys if sees_live_results(survey)]
    hours = last_answer_hours([survey.id for survey in live])
    for survey in surveys:
        survey.released = survey not in live
        if survey.released:
            survey.n_responses, survey.last_answer = released_summary(survey)
        else:
            survey.last_answer = hours.get(survey.id)
    rows: list[Survey | Lecture] = []
    lectures: dict[int, Lecture] = {}
    for survey in surveys:
        step = getattr(survey, "session_step", None)
        if step is None:
            rows.append(survey)
            continue
        if step.session_id not in lectures:
            lectures[step.session_id] = Lecture(step.session)
            rows.append(lectures[step.session_id])
        lectures[step.session_id].surveys.append(survey)
    for lecture in lectures.values():
        lecture.surveys.sort(key=lambda survey: survey.session_step.position)
    return rows
