"""One export per lecture: every question's results as a CSV (estimates with their
intervals, n, ε) and each question's chart as a standalone SVG for the slides."""

from __future__ import annotations

import csv
import io
import re

from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from classroom.models import Session
from classroom.views import TICKS, _classroom, _live_questions, _true_rate
from estimator.designs import json_epsilon
from survey.models import Question, Survey
from survey.spreadsheets import number_cell, text_cell

HEADER = [
    "question_number",
    "question",
    "kind",
    "option",
    "estimate",
    "ci_low",
    "ci_high",
    "level",
    "n",
    "n_simulated",
    "epsilon",
    "round",
]
CHARTS = {
    Question.Kind.BINARY: "classroom/_bar.html",
    Question.Kind.CHOICE: "classroom/_choice_svg.html",
    Question.Kind.NUMBER: "classroom/_number_svg.html",
}
# The chart rules of the projector's style sheet, embedded so the file stands alone.
CHART_RULES = (".ci-bar .", ".choice-bars .")


def lecture_surveys(survey: Survey) -> list[Survey]:
    """The lecture a question belongs to, in order (a lone question is its own lecture)."""
    session = Session.of(survey)
    return session.surveys() if session else [survey]


def result_rows(surveys: list[Survey]) -> list[list]:
    """One row per question (per option for multiple choice, per estimated quantity for
    a design with arms), as the projector shows it."""
    rows = []
    for number, survey in enumerate(surveys, start=1):
        for live in _live_questions(survey, None):
            question = live.question
            base = [number, text_cell(question.text), question.kind]
            tail = [
                number_cell(
                    live.level if question.kind != Question.Kind.BINARY else live.result.level
                ),
                live.estimate.n,
                live.n_simulated,
                number_cell(json_epsilon(question.epsilon)),
                survey.current_round,
            ]
            if question.kind == Question.Kind.CHOICE:
                for row in live.rows():
                    low, high = row["interval"] or (None, None)
                    rows.append(
                        [
                            *base,
                            text_cell(row["text"]),
                            number_cell(row["share"]),
                            number_cell(low),
                            number_cell(high),
                            *tail,
                        ]
                    )
                continue
            low, high = live.interval or (None, None)
            rows.append(
                [
                    *base,
                    "",
                    number_cell(live.estimate.estimate),
                    number_cell(low),
                    number_cell(high),
                    *tail,
                ]
            )
            if question.kind == Question.Kind.BINARY:
                rows += [_quantity_row(base, quantity, tail) for quantity in live.quantities]
    return rows


def _quantity_row(base: list, quantity: dict, tail: list) -> list:
    """A design with arms' other quantity (``option``: honesty, honest_no, cheaters), as
    the survey's estimates CSV names it."""
    values = (quantity[k] for k in ("estimate", "ci_low", "ci_high"))
    return [*base, quantity["key"], *map(number_cell, values), *tail]


@login_required
@require_GET
def results_csv(request: HttpRequest, survey_id: int) -> HttpResponse:
    """The lecture's results, every question, as the class saw them when revealed."""
    survey = _classroom(request, survey_id)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(HEADER)
    writer.writerows(result_rows(lecture_surveys(survey)))
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    name = slugify(Session.of(survey).title if Session.of(survey) else survey.title)[:40]
    response["Content-Disposition"] = f'attachment; filename="{name or "lecture"}-results.csv"'
    return response


def _chart_style() -> str:
    """The projector style sheet's chart rules (one source for the page and the file)."""
    path = finders.find("classroom/classroom.css")
    with open(path, encoding="utf-8") as sheet:
        lines = [line for line in sheet if line.startswith(CHART_RULES)]
    return "".join(lines) + "text { font-family: sans-serif; }\n"


@login_required
@require_GET
def chart_svg(request: HttpRequest, survey_id: int) -> HttpResponse:
    """The question's chart as a standalone SVG file."""
    survey = _classroom(request, survey_id)
    live = _live_questions(survey, _true_rate(survey, request.GET))
    if not live:
        return HttpResponse("This question has no chart.", status=404, content_type="text/plain")
    q = live[0]
    svg = render_to_string(CHARTS[q.question.kind], {"q": q, "ticks": TICKS}).strip()
    # XML has no bare attributes: the page's data-* markers get an empty value.
    svg = re.sub(r"(\s)(data-[\w-]+)(?=[\s/>])", r'\1\2=""', svg)
    start = svg.index("<svg")
    opening_end = svg.index(">", start) + 1
    svg = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + svg[start:opening_end].replace("<svg", '<svg xmlns="http://www.w3.org/2000/svg"', 1)
        + f'<rect width="100%" height="100%" fill="#ffffff"></rect><style>{_chart_style()}</style>'
        + svg[opening_end:]
    )
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    name = slugify(q.question.text)[:40] or "chart"
    response["Content-Disposition"] = f'attachment; filename="{name}.svg"'
    return response
