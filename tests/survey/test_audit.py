"""The audit log: every export, analysis run, sharing change, design or wording edit and
threshold change writes one entry saying who and the hour; only the owner reads it."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from survey.models import AuditEntry, Role, Survey
from tests.analysis.analysis_data import analysis_survey, fill, questions

pytestmark = pytest.mark.django_db


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def colleague(django_user_model):
    return django_user_model.objects.create_user("colleague", password="colleague-pass-1")


@pytest.fixture
def study(owner, colleague) -> Survey:
    survey = analysis_survey(owner)
    fill(survey, [60, 60, 60, 60])
    survey.share_with(colleague, Role.EDITOR)
    return survey


def entries(survey: Survey) -> list[tuple[str, str, str]]:
    """(who, action, detail), oldest first."""
    return [
        (e.username, e.action, e.detail) for e in reversed(AuditEntry.objects.filter(survey=survey))
    ]


@pytest.mark.parametrize(
    ("path", "detail"),
    [
        ("export.csv", "responses (CSV)"),
        ("export.sav", "responses (SPSS .sav)"),
        ("export.dta", "responses (Stata .dta)"),
        ("codebook.json", "codebook (JSON)"),
        ("estimates.csv", "estimates (CSV)"),
        ("estimates/breakdowns.csv", "breakdowns (CSV)"),
    ],
)
def test_each_export_says_which_and_by_whom(study, colleague, path, detail):
    assert client_for(colleague).get(f"/api/surveys/{study.id}/{path}").status_code == 200
    assert entries(study) == [("colleague", "export", detail)]


def test_analyses_through_the_api_are_logged_and_refused_ones_are_not(study, owner):
    q = questions(study)
    api, base = client_for(owner), f"/api/surveys/{study.id}"
    assert api.get(f"{base}/estimates/breakdown/?question=999&by={q['faculty']}").status_code == 400
    assert entries(study) == []
    breakdown = f"{base}/estimates/breakdown/?question={q['cheat']}&by={q['faculty']}"
    assert api.get(breakdown).status_code == 200
    assert api.get(f"{base}/crosstab/?a={q['cheat']}&b={q['plagiarise']}").status_code == 200
    body = {"outcome": q["cheat"], "covariates": [q["faculty"], q["age"]]}
    assert api.post(f"{base}/regression/", body, format="json").status_code == 200
    assert entries(study) == [
        ("owner", "analysis", "breakdown of “Ever cheated?” by “Faculty?”"),
        ("owner", "analysis", "cross-tab of “Ever cheated?” and “Ever plagiarised?”"),
        ("owner", "analysis", "model of q3 on “Faculty?”, “Age?”"),
    ]


def test_analysis_pages_are_logged(study, client, colleague):
    q = questions(study)
    client.force_login(colleague)
    base = f"/surveys/{study.id}/results"
    assert client.get(f"{base}/breakdown/?question={q['often']}&by={q['job']}").status_code == 200
    assert client.get(f"{base}/crosstab/?a={q['cheat']}&b={q['often']}").status_code == 200
    assert client.get(f"{base}/model/?outcome={q['plagiarise']}").status_code == 200
    assert [(who, action) for who, action, _ in entries(study)] == [("colleague", "analysis")] * 3
    assert entries(study)[0][2] == "breakdown of “How often?” by “Works a job?”"


def test_sharing_changes_through_the_api_are_logged(owner, colleague, django_user_model, study):
    other = django_user_model.objects.create_user("other", password="other-password-1")
    api, url = client_for(owner), f"/api/surveys/{study.id}/collaborators/"
    assert api.post(url, {"user": "other", "role": "viewer"}, format="json").status_code == 201
    assert api.patch(f"{url}{other.id}/", {"role": "editor"}, format="json").status_code == 200
    assert api.delete(f"{url}{other.id}/").status_code == 204
    transfer = {"user": "colleague", "confirm": True}
    assert (
        api.post(f"/api/surveys/{study.id}/transfer/", transfer, format="json").status_code == 200
    )
    assert entries(study) == [
        ("owner", "sharing", "shared with other as viewer"),
        ("owner", "sharing", "other is now editor"),
        ("owner", "sharing", "access removed from other"),
        ("owner", "sharing", "ownership transferred to colleague"),
    ]


def test_sharing_changes_on_the_page_are_logged(logged_in, django_user_model, study):
    other = django_user_model.objects.create_user("other", password="other-password-1")
    logged_in.post(f"/surveys/{study.id}/share/", {"user": "other", "role": "viewer"})
    logged_in.post(f"/surveys/{study.id}/share/{other.id}/", {"role": "editor"})
    logged_in.post(f"/surveys/{study.id}/share/{other.id}/", {"action": "remove"})
    logged_in.post(f"/surveys/{study.id}/transfer/", {"user": "colleague", "confirm": "on"})
    assert [detail for _, _, detail in entries(study)] == [
        "shared with other as viewer",
        "other is now editor",
        "access removed from other",
        "ownership transferred to colleague",
    ]


def test_a_refused_share_writes_nothing(logged_in, study):
    assert logged_in.post(f"/surveys/{study.id}/share/", {"user": "nobody", "role": "viewer"})
    assert entries(study) == []


def test_builder_edits_are_logged(logged_in, make_survey):
    survey = make_survey(n_questions=2, status=Survey.Status.DRAFT)
    first, second = survey.questions.all()
    new = {"new-text": "Ever lied?", "new-kind": "binary", "new-preset": "classic"}
    assert logged_in.post(f"/surveys/{survey.id}/questions/", new).status_code == 302
    edit = {
        f"q{first.id}-{k}": v
        for k, v in {"text": "Ever copied?", "kind": "binary", "preset": "stronger"}.items()
    }
    assert logged_in.post(f"/surveys/{survey.id}/questions/{first.id}/", edit).status_code == 302
    logged_in.post(f"/surveys/{survey.id}/questions/{second.id}/move/", {"direction": "up"})
    logged_in.post(f"/surveys/{survey.id}/questions/{second.id}/delete/")
    settings = {"title": "Renamed", "description": "", "mode": "research", "language": "en"}
    logged_in.post(f"/surveys/{survey.id}/edit/", settings)
    assert entries(survey) == [
        ("owner", "design", "question added: “Ever lied?”"),
        ("owner", "design", "question edited: “Ever copied?”"),
        ("owner", "design", "question moved to position 1: “Question 2?”"),
        ("owner", "design", "question deleted: “Question 2?”"),
        ("owner", "wording", "title edited"),
    ]


def test_a_bad_question_writes_nothing(logged_in, make_survey):
    survey = make_survey(n_questions=1, status=Survey.Status.DRAFT)
    bad = {"new-text": "", "new-kind": "binary", "new-preset": "classic"}
    assert logged_in.post(f"/surveys/{survey.id}/questions/", bad).status_code == 400
    assert entries(survey) == []


def test_a_rewording_after_answers_is_logged(logged_in, study):
    question = study.questions.get(text="Ever cheated?")
    url = f"/surveys/{study.id}/questions/{question.id}/wording/"
    logged_in.post(url, {f"q{question.id}-text": "Have you ever cheated in an exam?"})
    assert entries(study) == [
        (
            "owner",
            "wording",
            "question reworded: “Ever cheated?” → “Have you ever cheated in an exam?”",
        )
    ]


def test_a_threshold_raised_in_the_builder_is_logged_once(logged_in, make_survey):
    survey = make_survey(n_questions=1, status=Survey.Status.DRAFT)
    settings = {"title": survey.title, "mode": "research", "language": "en", "allow_skip": "on"}
    for k in (20, 20):
        response = logged_in.post(f"/surveys/{survey.id}/edit/", {**settings, "min_cell_count": k})
        assert response.status_code == 302
    assert entries(survey) == [("owner", "threshold", "small-cell threshold 10 → 20")]


def test_api_edits_and_threshold_changes_are_logged(api, make_survey):
    survey = make_survey(n_questions=1, status=Survey.Status.DRAFT)
    url = f"/api/surveys/{survey.id}/"
    assert api.patch(url, {"min_cell_count": 20}, format="json").status_code == 200
    assert api.patch(url, {"min_cell_count": 20}, format="json").status_code == 200  # unchanged
    assert (
        api.patch(url, {"title": "Renamed", "description": "Why"}, format="json").status_code == 200
    )
    body = {"questions": [{"text": "Ever lied?", "kind": "binary"}]}
    assert api.patch(url, body, format="json").status_code == 200
    assert entries(survey) == [
        ("owner", "threshold", "small-cell threshold 10 → 20"),
        ("owner", "wording", "title and description edited"),
        ("owner", "design", "questions set through the API (1)"),
    ]


def test_only_the_owner_reads_the_log_to_the_hour(study, owner, colleague, client):
    client_for(colleague).get(f"/api/surveys/{study.id}/export.csv")
    (entry,) = client_for(owner).get(f"/api/surveys/{study.id}/audit/").json()["results"]
    assert (entry["user"], entry["action"], entry["detail"]) == (
        "colleague",
        "export",
        "responses (CSV)",
    )
    assert entry["hour"].endswith(":00:00Z")
    assert client_for(colleague).get(f"/api/surveys/{study.id}/audit/").status_code == 404
    client.force_login(colleague)
    assert client.get(f"/surveys/{study.id}/audit/").status_code == 404
    assert "Audit log" not in client.get(f"/surveys/{study.id}/results/").content.decode()
    client.force_login(owner)
    page = client.get(f"/surveys/{study.id}/audit/").content.decode()
    assert "responses (CSV)" in page and "colleague" in page
    assert f"{entry['hour'][:10]} {entry['hour'][11:13]}:00" in page
    assert (
        f"/surveys/{study.id}/audit/"
        in client.get(f"/surveys/{study.id}/results/").content.decode()
    )


def test_an_entry_outlives_the_account_that_wrote_it(study, colleague):
    client_for(colleague).get(f"/api/surveys/{study.id}/export.csv")
    colleague.delete()
    assert entries(study) == [("colleague", "export", "responses (CSV)")]
