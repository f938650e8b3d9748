"""A survey with directly asked background questions and randomized ones, filled with
seeded reports, for the breakdown, cross-tab and regression tests."""

from __future__ import annotations

import numpy as np
from rest_framework.test import APIClient

from responses.sealing import seal
from responses.write import bulk_record
from survey.models import Role, Survey

FACULTIES = ["Arts", "Law", "Science", "Medicine"]
CLASSIC = {"p_truth": 0.5, "p_yes": 0.5}


def api_for(user) -> APIClient | None:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def analysis_survey(owner, **fields) -> Survey:
    """Questions: faculty (direct choice), age (direct number), a randomized yes/no
    question, another randomized yes/no one, a randomized 3-option k-RR one and a direct
    yes/no one."""
    survey = Survey.objects.create(owner=owner, title="Study habits", status="open", **fields)
    add = survey.questions.create
    add(position=0, text="Faculty?", kind="choice", options=FACULTIES, design_name="direct")
    add(
        position=1,
        text="Age?",
        kind="number",
        design_name="direct",
        design_params={"lower": 16, "upper": 80},
    )
    add(position=2, text="Ever cheated?", design_params=CLASSIC)
    add(position=3, text="Ever plagiarised?", design_params=CLASSIC)
    add(
        position=4,
        text="How often?",
        kind="choice",
        options=["never", "once", "often"],
        design_name="k_rr",
        design_params={"epsilon": float(np.log(3))},
    )
    add(position=5, text="Works a job?", kind="binary", design_name="direct", design_params={})
    return survey


def questions(survey) -> dict[str, int]:
    ids = list(survey.questions.values_list("id", flat=True))
    return dict(zip(["faculty", "age", "cheat", "plagiarise", "often", "job"], ids, strict=True))


def fill(survey, sizes: list[int], seed: int = 7, simulated: bool = False) -> None:
    """``sizes[i]`` respondents of faculty i, reports drawn by the questions' designs."""
    rng = np.random.default_rng(seed)
    q = questions(survey)
    by_id = {question.id: question for question in survey.questions.all()}
    reports = []
    for faculty, size in enumerate(sizes):
        for _ in range(size):
            age = int(rng.integers(18, 40))
            cheat = int(rng.random() < 0.1 + 0.1 * faculty + 0.01 * (age - 18))
            plagiarise = int(rng.random() < (0.6 if cheat else 0.2))
            often = int(rng.integers(0, 3))
            row = {
                q["faculty"]: faculty,
                q["age"]: age,
                q["job"]: int(rng.random() < 0.5),
            }
            for name, truth in (("cheat", cheat), ("plagiarise", plagiarise), ("often", often)):
                design = by_id[q[name]].design
                row[q[name]] = int(design.simulate(np.array([truth]), rng)[0])
            reports.append(row)
    bulk_record(survey, reports, simulated=simulated)
    seal(everything=True)  # as an hour later: viewers see sealed hours only


def share(survey, viewer) -> None:
    survey.share_with(viewer, Role.VIEWER)


def grouped_survey(owner, groups: dict[str, list[str] | None], k: int = 10):
    """A survey with directly asked grouping questions (options, or ``None`` for yes/no)
    and three randomized ones: yes/no ``cheat``, 3-option ``often`` and a number from 0
    to 30 ``drinks``; returns it and its questions by name."""
    survey = Survey.objects.create(
        owner=owner, title="Campus life", status="open", min_cell_count=k
    )
    add = survey.questions.create
    found = {}
    for position, (name, options) in enumerate(groups.items()):
        kind = "binary" if options is None else "choice"
        found[name] = add(
            position=position,
            text=f"{name}?",
            kind=kind,
            options=options or [],
            design_name="direct",
        )
    position = len(groups)
    found["cheat"] = add(position=position, text="Ever cheated?", design_params=CLASSIC)
    found["often"] = add(
        position=position + 1,
        text="How often?",
        kind="choice",
        options=["never", "once", "often"],
        design_name="k_rr",
        design_params={"epsilon": float(np.log(3))},
    )
    found["drinks"] = add(
        position=position + 2,
        text="Drinks a week?",
        kind="number",
        design_name="laplace",
        design_params={"epsilon": 1.0, "lower": 0, "upper": 30},
    )
    return survey, found


def record_people(survey, found, people: list[dict], seed: int = 3) -> list[dict]:
    """Store ``people`` (their grouping answers; None or absent: left unanswered) with
    randomized reports drawn by the designs; returns them with their reports."""
    rng = np.random.default_rng(seed)
    stored = []
    for person in people:
        person = {name: value for name, value in person.items() if value is not None}
        truths = {"cheat": rng.random() < 0.3, "often": rng.integers(3), "drinks": rng.integers(31)}
        for name, truth in truths.items():
            person[name] = int(found[name].design.simulate(np.array([truth]), rng)[0])
        stored.append(person)
    bulk_record(survey, [{found[n].id: v for n, v in p.items()} for p in stored], simulated=False)
    seal(everything=True)  # as an hour later: viewers see sealed hours only
    return stored


def crowd(groups: list[str], cells: dict[tuple, int]) -> list[dict]:
    """``cells[(answer to each group, None for none)]`` people with those answers."""
    return [dict(zip(groups, key, strict=True)) for key, n in cells.items() for _ in range(n)]
