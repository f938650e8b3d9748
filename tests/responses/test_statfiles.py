"""The SPSS and Stata exports, read back with pyreadstat as R's haven or SPSS would: the
same rows as the CSV, the question texts, option labels, skips marked missing and
labelled, and each design written where a reader of the file sees it."""

from __future__ import annotations

import csv
import io
import math
import uuid

import numpy as np
import pyreadstat
import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from responses.write import record_submission, simulate_respondents
from survey.models import Role, Survey

pytestmark = pytest.mark.django_db

QUESTIONS = [
    {
        "text": "Have you ever cheated in an exam?",
        "kind": "binary",
        "design": {"name": "forced_response", "p_truth": 0.5, "p_yes": 0.5},
    },
    {
        "text": "How often did you copy homework?",
        "kind": "choice",
        "options": ["never", "once", "more than once"],
        "design": {"name": "k_rr", "epsilon": 1.0986},
    },
    {
        "text": "Hours of sleep before the exam",
        "kind": "number",
        "design": {"name": "laplace", "epsilon": 1.0, "lower": 0, "upper": 12},
    },
    {
        "text": "Faculty",
        "kind": "choice",
        "options": ["Law", "Medicine"],
        "design": {"name": "direct"},
        "not_sensitive": True,
    },
]
ANSWERS = [(1, 2, 7, 0), (0, 0, -3, 1), (1, None, 15, 1), (None, 1, None, 0), (0, 2, 4, None)]


@pytest.fixture
def answered(api) -> Survey:
    body = {"title": "Exam honesty", "questions": QUESTIONS}
    created = api.post("/api/surveys/", body, format="json")
    assert created.status_code == 201, created.json()
    survey = Survey.objects.get(pk=created.json()["id"])
    survey.open()
    ids = list(survey.questions.values_list("id", flat=True))
    for values in ANSWERS:
        record_submission(survey, uuid.uuid4(), dict(zip(ids, values, strict=True)))
    simulate_respondents(survey, 30, {"uniform": True}, np.random.default_rng(2))
    return survey


def read_back(api, survey: Survey, suffix: str, tmp_path, **options):
    response = api.get(f"/api/surveys/{survey.id}/export.{suffix}")
    assert response.status_code == 200
    assert f'filename="survey-{survey.id}-responses.{suffix}"' in response["Content-Disposition"]
    path = tmp_path / f"export.{suffix}"
    path.write_bytes(response.content)
    reader = pyreadstat.read_sav if suffix == "sav" else pyreadstat.read_dta
    return reader(str(path), **options)


def csv_rows(api, survey: Survey) -> list[list[str]]:
    text = api.get(f"/api/surveys/{survey.id}/export.csv").content.decode()
    return list(csv.reader(io.StringIO(text)))


def as_csv_cells(frame) -> list[list[str]]:
    """The frame's rows as the CSV writes them: whole numbers, empty when missing."""
    return [
        ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(int(v)) for v in row]
        for row in frame.itertuples(index=False)
    ]


@pytest.mark.parametrize("suffix", ["sav", "dta"])
def test_the_file_holds_the_csvs_rows_and_columns(api, answered, suffix, tmp_path):
    frame, meta = read_back(api, answered, suffix, tmp_path)
    header, *rows = csv_rows(api, answered)
    assert list(frame.columns) == header == ["round", "q1", "q2", "q3", "q4"]
    assert as_csv_cells(frame) == rows
    assert len(rows) == len(ANSWERS)  # the 30 simulated respondents are left out


@pytest.mark.parametrize("suffix", ["sav", "dta"])
def test_labels_say_the_questions_options_and_skips(api, answered, suffix, tmp_path):
    _, meta = read_back(api, answered, suffix, tmp_path)
    labels = dict(zip(meta.column_names, meta.column_labels, strict=True))
    for name, question in zip(["q1", "q2", "q3", "q4"], QUESTIONS, strict=True):
        assert question["text"] in labels[name]
    values = meta.variable_value_labels
    skipped = "skipped (prefer not to answer)"
    assert {values["q1"][0], values["q1"][1]} == {"reported no", "reported yes"}
    assert [values["q2"][i] for i in range(3)] == ["never", "once", "more than once"]
    assert [values["q4"][i] for i in range(2)] == ["Law", "Medicine"]
    for name in ["q1", "q2", "q3", "q4"]:
        assert skipped in values[name].values()
    assert set(values["q3"].values()) == {skipped}  # numbers: only the skip is labelled


def test_spss_declares_a_skip_user_missing_and_notes_each_design(api, answered, tmp_path):
    frame, meta = read_back(api, answered, "sav", tmp_path, user_missing=True)
    code = meta.missing_ranges["q1"][0]["lo"]
    assert meta.variable_value_labels["q1"][code].startswith("skipped")
    assert list(frame["q1"]).count(code) == 1  # one skip of q1
    # The number's skip code lies below any report its noise can give.
    q3_code = meta.missing_ranges["q3"][0]["lo"]
    assert q3_code < min(v for v in frame["q3"] if v != q3_code)
    notes = " ".join(meta.notes)
    assert "q1: forced_response(p_truth=0.5, p_yes=0.5), epsilon=1.099" in notes
    assert "q2: k_rr(epsilon=1.0986), epsilon=1.099" in notes
    assert "q4: asked directly" in notes
    assert "(share of reports j - c[j]) / t" in notes
    assert meta.file_label == f"Deniable survey {answered.id}: Exam honesty"
    assert meta.variable_measure["q3"] == "scale"
    # Read as an analysis would (without user_missing), a skip is simply missing.
    plain, _ = read_back(api, answered, "sav", tmp_path)
    assert plain["q1"].isna().sum() == 1


def test_stata_marks_a_skip_as_dot_a_and_heads_the_label_with_the_design(api, answered, tmp_path):
    frame, meta = read_back(api, answered, "dta", tmp_path, user_missing=True)
    assert list(frame["q2"]).count("a") == 1
    assert meta.missing_user_values["q2"] == ["a"]
    labels = dict(zip(meta.column_names, meta.column_labels, strict=True))
    assert labels["q1"] == (
        "Have you ever cheated in an exam? [forced_response(p_truth=0.5, p_yes=0.5), e..."
    )
    assert all(len(label.encode()) <= 80 for label in labels.values())


def test_non_ascii_texts_and_titles_fit_both_formats(api, make_survey, tmp_path):
    survey = make_survey(n_questions=1)
    Survey.objects.filter(pk=survey.pk).update(title="Ehrlichkeit bei Prüfungen " * 6)
    survey.questions.update(text="Haben Sie jemals bei einer Prüfung geschummelt? " * 3)
    record_submission(survey, uuid.uuid4(), {survey.questions.get().id: 1})
    for suffix in ["sav", "dta"]:
        frame, meta = read_back(api, survey, suffix, tmp_path)
        assert meta.column_labels[1].startswith("Haben Sie jemals bei einer Prüfung")
        assert list(frame["q1"]) == [1]
    _, meta = read_back(api, survey, "sav", tmp_path)
    assert "Ehrlichkeit bei Prüfungen" in " ".join(meta.notes)


def test_an_empty_survey_exports_a_file_with_its_columns(api, make_survey, tmp_path):
    survey = make_survey(n_questions=2)
    for suffix in ["sav", "dta"]:
        frame, _ = read_back(api, survey, suffix, tmp_path)
        assert (list(frame.columns), len(frame)) == (["round", "q1", "q2"], 0)


@pytest.mark.parametrize("suffix", ["sav", "dta"])
def test_the_files_need_the_same_role_as_the_csv(make_survey, suffix):
    """Another researcher gets a 404, as for export.csv; a collaborator what the CSV gets."""
    survey = make_survey(n_questions=1)
    stranger = APIClient()
    stranger.force_authenticate(get_user_model().objects.create_user("stranger"))
    assert stranger.get(f"/api/surveys/{survey.id}/export.{suffix}").status_code == 404
    survey.share_with(stranger.handler._force_user, Role.VIEWER)
    csv_status = stranger.get(f"/api/surveys/{survey.id}/export.csv").status_code
    assert stranger.get(f"/api/surveys/{survey.id}/export.{suffix}").status_code == csv_status


def test_the_results_page_offers_both_files(logged_in, survey):
    page = logged_in.get(f"/surveys/{survey.id}/results/").content.decode()
    assert f"/api/surveys/{survey.id}/export.sav" in page
    assert f"/api/surveys/{survey.id}/export.dta" in page
