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

from dataclasses import dataclass, field

from django.db.models import F

from estimator.designs import Design
from responses.counts import has_reports
from survey.models import Question

MAX_CACHED_SHEETS = 10_000
_frozen_sheets: dict[str, AnswerSheet] = {}


class InvalidAnswers(Exception):
    """The answers do not fit the survey; ``messages`` says how, one line per problem, and
    ``questions`` lists the ids of the survey's questions at fault."""

    def __init__(self, messages: list[str], questions: frozenset[int] = frozenset()) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages
        self.questions = questions


def paper_may_omit(design: Design) -> bool:
    """Only a randomized number may go unanswered, and only on the no-JavaScript page: its
    noise cannot be drawn by hand, and asking for the true number instead would weaken
    its privacy. The estimate then counts it as missing. Everywhere else (the API, which
    the JavaScript page uses and which can always draw the noise) every answer is needed,
    so that a missing answer never depends on the true one by the app's doing."""
    return design.kind == "number" and design.randomized


@dataclass(frozen=True)
class AnswerSheet:
    survey_id: int
    designs: dict[int, Design]  # question id → its design, which knows the reports it makes
    design_version: int  # the survey's, when the questions were read
    allow_skip: bool = False  # a null report (a skip) is accepted; frozen with the design
    # question id → (the directly asked question it depends on, the answers that show it)
    conditions: dict[int, tuple[int, frozenset[int]]] = field(default_factory=dict)

    @classmethod
    def for_slug(cls, slug: str) -> AnswerSheet | None:
        """The sheet of the survey at ``slug`` (None: no such survey, or no questions)."""
        sheet = _frozen_sheets.get(slug)
        if sheet is not None:
            return sheet
        questions = list(
            Question.objects.filter(survey__slug=slug).annotate(
                design_version=F("survey__design_version"), allow_skip=F("survey__allow_skip")
            )
        )
        if not questions:
            return None
        first = questions[0]
        designs = {q.id: q.design for q in questions}
        conditions = {
            q.id: (q.show_if["question"], frozenset(q.show_if["in"]))
            for q in questions
            if q.show_if
        }
        sheet = cls(first.survey_id, designs, first.design_version, first.allow_skip, conditions)
        if has_reports(first.survey_id):
            if len(_frozen_sheets) >= MAX_CACHED_SHEETS:
                _frozen_sheets.clear()
            _frozen_sheets[slug] = sheet
        return sheet

    def check(self, answers: list[dict], *, paper: bool = False) -> dict[int, int | None]:
        """{question id: report, or None for a skip}, exactly one possible report per
        question of the survey; raises :class:`InvalidAnswers` listing every problem.
        ``paper``: the no-JavaScript page, which leaves out (and must leave out) the
        questions :func:`paper_may_omit` names."""
        values: dict[int, int | None] = {}
        errors, faulty = [], set()
        for answer in answers:
            qid, value = answer["question"], answer["value"]
            design = self.designs.get(qid)
            if design is None:
                errors.append(f"question {qid} is not a question of this survey")
            elif qid in values:
                errors.append(f"question {qid} is answered more than once")
                faulty.add(qid)
            elif value is None:
                if answer.get("arm") is not None:
                    errors.append(f"arm for question {qid}: a skip is sent without an arm")
                    faulty.add(qid)
                if not self.allow_skip:
                    errors.append(
                        f"value null for question {qid}: this survey does not allow skipping "
                        "(allow_skip is off), so every question needs a report"
                    )
                    faulty.add(qid)
            elif paper and paper_may_omit(design):
                # The paper page never asks for it: a value here is a true number.
                errors.append(f"question {qid} needs JavaScript: leave it unanswered on paper")
                faulty.add(qid)
            else:
                try:
                    value = self._report(design, value, answer.get("arm"), qid)
                except ValueError as error:
                    errors.append(str(error))
                    faulty.add(qid)
            values[qid] = value
        for qid in self.hidden(values):
            if qid in values and paper:
                del values[qid]  # ticked on paper by mistake: not shown, so not sent
            elif qid in values:
                errors.append(f"question {qid} is not shown for the answers given: leave it out")
                faulty.add(qid)
        hidden = self.hidden(values)
        missing = sorted(
            qid
            for qid, design in self.designs.items()
            if qid not in values and qid not in hidden and not (paper and paper_may_omit(design))
        )
        if missing:
            errors.append(f"missing answers for question(s) {', '.join(map(str, missing))}")
        if errors:
            raise InvalidAnswers(errors, frozenset(faulty | set(missing)))
        return values

    @staticmethod
    def _report(design: Design, value: int, arm: int | None, qid: int) -> int:
        """The stored report: the value itself, or for a design with arms the value
        (0/1) and its arm as one number (arm·2 + value)."""
        if not design.has_arms:
            if arm is not None:
                raise ValueError(f"arm for question {qid}: its design has no arms, send no arm")
            try:
                return design.check_report(value)
            except ValueError as error:
                raise ValueError(f"value {value!r} for question {qid}: {error}") from None
        if arm is None:
            raise ValueError(
                f"arm missing for question {qid}: its design draws an arm, send it with the value"
            )
        if isinstance(arm, bool) or not isinstance(arm, int) or not 0 <= arm < design.arms:
            raise ValueError(f"arm {arm!r} for question {qid}: must be one of 0…{design.arms - 1}")
        try:
            return design.encode(arm, value)
        except ValueError as error:
            raise ValueError(f"value {value!r} for question {qid}: {error}") from None

    def hidden(self, values: dict[int, int | None]) -> set[int]:
        """The questions whose condition the answers do not meet (a skipped or hidden
        condition question hides them too): they are not shown, so they send nothing."""
        hidden: set[int] = set()
        for qid in self.designs:  # conditions point to earlier questions, in this order
            if qid in self.conditions:
                target, shown_for = self.conditions[qid]
                if target in hidden or values.get(target) not in shown_for:
                    hidden.add(qid)
        return hidden


def forget_cached_sheets() -> None:
    """Tests start each case with an empty cache, as a fresh process would."""
    _frozen_sheets.clear()
