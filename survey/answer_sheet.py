"""What a submission to one survey must contain, looked up once per process when it
can no longer change.

A survey's questions and designs freeze with its first stored submission, and stored
submissions are only ever deleted with their survey. So once a sheet has been read from
a frozen survey it stays right for the life of the process, and the submit endpoint can
validate without touching the database. Sheets of surveys that are not frozen yet are
read afresh on every request. The survey's state (open, locked, invite-only, its round)
can change at any time, so it is never cached: the write checks it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, F, OuterRef

from survey.models import Question, Submission

MAX_CACHED_SHEETS = 10_000
_frozen_sheets: dict[str, AnswerSheet] = {}


class InvalidAnswers(Exception):
    """The answers do not fit the survey; ``messages`` says how, one line per problem."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


@dataclass(frozen=True)
class AnswerSheet:
    survey_id: int
    allowed: dict[int, tuple[int, ...]]  # question id → the reports its design can produce
    design_version: int  # the survey's, when the questions were read

    @classmethod
    def for_slug(cls, slug: str) -> AnswerSheet | None:
        """The sheet of the survey at ``slug`` (None: no such survey, or no questions)."""
        sheet = _frozen_sheets.get(slug)
        if sheet is not None:
            return sheet
        questions = list(
            Question.objects.filter(survey__slug=slug).annotate(
                frozen=Exists(Submission.objects.filter(survey=OuterRef("survey"))),
                design_version=F("survey__design_version"),
            )
        )
        if not questions:
            return None
        first = questions[0]
        allowed = {q.id: q.design.output_values for q in questions}
        sheet = cls(first.survey_id, allowed, first.design_version)
        if first.frozen:
            if len(_frozen_sheets) >= MAX_CACHED_SHEETS:
                _frozen_sheets.clear()
            _frozen_sheets[slug] = sheet
        return sheet

    def check(self, answers: list[dict]) -> dict[int, int]:
        """{question id: report}, exactly one possible report per question of the survey;
        raises :class:`InvalidAnswers` listing every problem."""
        values: dict[int, int] = {}
        errors = []
        for answer in answers:
            qid, value = answer["question"], answer["value"]
            allowed = self.allowed.get(qid)
            if allowed is None:
                errors.append(f"question {qid} is not a question of this survey")
            elif qid in values:
                errors.append(f"question {qid} is answered more than once")
            elif value not in allowed:
                errors.append(
                    f"value {value} for question {qid} is not one of {', '.join(map(str, allowed))}"
                )
            values[qid] = value
        missing = sorted(set(self.allowed) - set(values))
        if missing:
            errors.append(f"missing answers for question(s) {', '.join(map(str, missing))}")
        if errors:
            raise InvalidAnswers(errors)
        return values


def forget_cached_sheets() -> None:
    """Tests start each case with an empty cache, as a fresh process would."""
    _frozen_sheets.clear()
