"""Retention: "delete responses N days after closing" is set on the API and the
Distribute page, told to respondents, and kept by purge_responses (cron) on time."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from responses.counts import released_counts
from responses.models import Release
from responses.sealing import seal
from responses.write import record_submission
from survey.models import Survey
from tests.storage import stored_count, tallied

pytestmark = pytest.mark.django_db


def answered(make_survey, n: int = 3, **fields) -> Survey:
    survey = make_survey(n_questions=1, **fields)
    question = survey.questions.get()
    for i in range(n):
        record_submission(survey, uuid.uuid4(), {question.id: i % 2})
    return survey


def closed_days_ago(survey: Survey, days: float) -> None:
    survey.close()
    Survey.with_trashed.filter(pk=survey.pk).update(closed_at=timezone.now() - timedelta(days=days))


def purge(capsys) -> str:
    call_command("purge_responses")
    return capsys.readouterr().out


def test_responses_are_deleted_once_the_retention_has_run_out(make_survey, capsys):
    due = answered(make_survey, retention_days=7)
    not_yet = answered(make_survey, retention_days=7)
    kept = answered(make_survey)  # no retention
    closed_days_ago(due, 7.01)
    closed_days_ago(not_yet, 6.99)
    closed_days_ago(kept, 400)
    assert purge(capsys) == "Deleted 3 response(s) of 1 survey(s) past their retention.\n"
    assert stored_count(due) == 0 and tallied(due) == {}
    assert (stored_count(not_yet), stored_count(kept)) == (3, 3)
    due.refresh_from_db()
    assert due.responses_deleted_at is not None
    assert purge(capsys).startswith("Deleted 0 response(s) of 0 survey(s)")


def test_the_results_released_to_viewers_go_with_the_responses(make_survey, capsys):
    survey = answered(make_survey, n=5, retention_days=1, min_cell_count=5)
    seal(everything=True)  # viewers are released sealed hours only
    assert sum(released_counts(survey).patterns.values()) == 5
    closed_days_ago(survey, 2)
    purge(capsys)
    assert not Release.objects.filter(survey=survey).exists()
    assert sum(released_counts(survey).patterns.values()) == 0


def test_an_open_survey_past_its_close_date_is_closed_and_purged(make_survey, capsys):
    """Nobody opened it since its close date: its responses are not kept longer for that."""
    survey = answered(make_survey, retention_days=2)
    Survey.objects.filter(pk=survey.pk).update(closes_at=timezone.now() - timedelta(days=3))
    purge(capsys)
    survey.refresh_from_db()
    assert survey.status == Survey.Status.CLOSED
    assert stored_count(survey) == 0


def test_an_open_survey_keeps_its_responses(make_survey, capsys):
    survey = answered(make_survey, retention_days=1)
    purge(capsys)
    assert stored_count(survey) == 3


def test_a_trashed_survey_is_purged_on_time_too(make_survey, capsys):
    survey = answered(make_survey, retention_days=1)
    closed_days_ago(survey, 2)
    Survey.objects.filter(pk=survey.pk).update(trashed_at=timezone.now())
    purge(capsys)
    assert stored_count(survey) == 0


def test_reopening_starts_the_clock_again(make_survey):
    survey = answered(make_survey, retention_days=1)
    closed_days_ago(survey, 2)
    survey.refresh_from_db()
    survey.open()
    assert survey.closed_at is None and survey.responses_delete_at is None
    survey.close()
    assert survey.responses_delete_at > timezone.now() + timedelta(hours=23)


def test_the_api_sets_the_retention(api, make_survey):
    survey = make_survey(n_questions=1)
    response = api.patch(f"/api/surveys/{survey.id}/", {"retention_days": 30}, format="json")
    assert (response.status_code, response.json()["retention_days"]) == (200, 30)
    assert api.get(f"/api/surveys/{survey.id}/").json()["retention_days"] == 30


@pytest.mark.parametrize("days", [0, -1, 3651, "soon", 1.5])
def test_a_bad_retention_is_refused_and_nothing_changes(api, make_survey, days):
    survey = make_survey(n_questions=1, retention_days=30)
    response = api.patch(f"/api/surveys/{survey.id}/", {"retention_days": days}, format="json")
    assert response.status_code == 400
    assert "retention_days" in response.json()
    survey.refresh_from_db()
    assert survey.retention_days == 30


@pytest.mark.parametrize("days", [31, None])
def test_with_answers_the_promise_cannot_be_lengthened(api, make_survey, days):
    survey = answered(make_survey, retention_days=30)
    response = api.patch(f"/api/surveys/{survey.id}/", {"retention_days": days}, format="json")
    assert response.status_code == 400
    assert "can only get shorter" in response.json()["retention_days"][0]
    survey.refresh_from_db()
    assert survey.retention_days == 30
    shorter = api.patch(f"/api/surveys/{survey.id}/", {"retention_days": 10}, format="json")
    assert shorter.status_code == 200


def test_the_distribute_page_sets_it_and_shows_errors_beside_the_field(logged_in, make_survey):
    survey = answered(make_survey, retention_days=30)
    url = f"/surveys/{survey.id}/closing/"
    response = logged_in.post(url, {"retention_days": "90"})
    assert response.status_code == 400
    page = response.content.decode()
    beside = page.split('class="field field-retention_days has-error"', 1)[1].split("</div>", 1)[0]
    assert "can only get shorter" in beside
    survey.refresh_from_db()
    assert survey.retention_days == 30
    assert logged_in.post(url, {"retention_days": "14"}).status_code == 302
    survey.refresh_from_db()
    assert survey.retention_days == 14


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "Your answers are deleted 14 days after this survey closes."),
        ("de", "Ihre Antworten werden 14 Tage nach dem Schließen dieser Umfrage gelöscht."),
        ("fr", "Vos réponses sont supprimées 14 jours après la clôture de cette enquête."),
    ],
)
def test_the_respondent_page_says_so(client, make_survey, language, said):
    survey = make_survey(n_questions=1, retention_days=14, language=language)
    page = client.get(survey.get_absolute_url()).content.decode()
    assert said in page


def test_without_retention_the_respondent_page_promises_nothing(client, survey):
    assert "data-retention" not in client.get(survey.get_absolute_url()).content.decode()
