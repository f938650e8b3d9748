"""Panels: after sending, the respondent gets a button to the researcher's completion link,
its {NAME} placeholders filled in the browser from the link they arrived with. Those
parameters (a panel id) reach no table, no log line and no page the server writes."""

from __future__ import annotations

import logging
import types
import uuid
from datetime import timedelta

import pytest
from django.urls import reverse
from gunicorn.config import Config

from config.gunicorn import PrivateLogger, access_log_format
from survey.models import Survey
from tests.survey.test_invites_attacker import whole_database
from tests.survey.test_respondent_views import paper_post

pytestmark = pytest.mark.django_db

LINK = "https://app.prolific.com/submissions/complete?cc=C1X2&pid={PROLIFIC_PID}"
PANEL_ID = "5f1e9b3c7a2d4e6f80914ab3"
STUDY_ID = "64aa2b1d9e0c3f7a5b6d8e01"
REFUSED = "Enter an http:// or https:// address"


def test_the_api_sets_and_returns_the_completion_url(api):
    body = {"title": "Habits", "completion_url": LINK, "questions": []}
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 201
    assert response.json()["completion_url"] == LINK
    assert Survey.objects.get().completion_url == LINK


@pytest.mark.parametrize(
    "bad", ["javascript:alert(document.cookie)", "ftp://panel.example/done", "not a link"]
)
def test_the_api_refuses_a_completion_url_that_is_not_http_and_stores_nothing(api, bad):
    body = {"title": "Habits", "completion_url": bad, "questions": []}
    response = api.post("/api/surveys/", body, format="json")
    assert response.status_code == 400
    assert REFUSED in response.json()["completion_url"][0]
    assert not Survey.objects.exists()


def test_a_patch_with_a_bad_completion_url_changes_nothing(api, make_survey):
    survey = make_survey(1, completion_url=LINK)
    response = api.patch(
        f"/api/surveys/{survey.id}/", {"completion_url": "data:text/html,hi"}, format="json"
    )
    assert response.status_code == 400 and "completion_url" in response.json()
    survey.refresh_from_db()
    assert survey.completion_url == LINK


def builder_post(logged_in, survey, link: str):
    data = {"title": survey.title, "mode": "research", "language": "en", "allow_skip": "on"}
    return logged_in.post(f"/surveys/{survey.id}/edit/", data | {"completion_url": link})


def test_the_builder_saves_the_completion_url(logged_in, make_survey):
    survey = make_survey(1, status=Survey.Status.DRAFT)
    assert builder_post(logged_in, survey, LINK).status_code == 302
    survey.refresh_from_db()
    assert survey.completion_url == LINK


def test_the_builder_says_beside_the_field_why_a_link_is_refused(logged_in, make_survey):
    survey = make_survey(1, status=Survey.Status.DRAFT)
    response = builder_post(logged_in, survey, "javascript:alert(1)")
    html = response.content.decode()
    assert REFUSED in html
    field = html.index('name="completion_url"')
    assert abs(html.index(REFUSED) - field) < 1500  # beside its field, not at the top only
    survey.refresh_from_db()
    assert survey.completion_url == ""


def test_the_respondent_page_carries_the_template_but_never_the_parameters(client, make_survey):
    survey = make_survey(1, completion_url=LINK)
    url = f"{survey.get_absolute_url()}?PROLIFIC_PID={PANEL_ID}&STUDY_ID={STUDY_ID}"
    html = client.get(url).content.decode()
    assert 'data-completion="https://app.prolific.com/submissions/complete?cc=C1X2&amp;' in html
    assert "Continue to complete your participation" in html
    assert PANEL_ID not in html and STUDY_ID not in html


def test_without_a_completion_url_there_is_no_button(client, survey):
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "data-completion" not in html


def test_the_no_javascript_thanks_page_links_a_fixed_completion_url(client, make_survey):
    fixed = "https://panel.example/complete?code=ABC"
    survey = make_survey(1, completion_url=fixed)
    (q,) = survey.questions.all()
    html = paper_post(client, survey, {q.id: "1"}).content.decode()
    assert f'href="{fixed}"' in html
    survey.completion_url = LINK  # placeholders need the browser: no half-filled link
    survey.save()
    html = paper_post(client, survey, {q.id: "0"}).content.decode()
    assert "complete?cc=C1X2" not in html


def gunicorn_access_lines(path: str, query: str) -> list[str]:
    """The access log lines production's gunicorn writes for one request."""
    config = Config()
    config.set("accesslog", "-")
    config.set("access_log_format", access_log_format)
    logger = PrivateLogger(config)
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logger.access_log.addHandler(handler)
    headers = [("HOST", "deniable.example"), ("REFERER", f"https://panel.example/?{query}")]
    request = types.SimpleNamespace(
        headers=headers, method="GET", path=path, query=query, uri=f"{path}?{query}",
        version=(1, 1),
    )  # fmt: skip
    response = types.SimpleNamespace(status="200 OK", headers=[], response_length=1234, sent=1234)
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"{path}?{query}",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "198.51.100.7",
        "HTTP_REFERER": f"https://panel.example/?{query}",
    }
    logger.access(response, request, environ, timedelta(seconds=0.01))
    return lines


@pytest.mark.django_db(transaction=True)
def test_no_table_and_no_log_line_holds_the_panel_parameters(client, make_survey, caplog):
    """The attacker holds the whole database and every log: the panel ids of those who
    arrived with them are nowhere, whichever way they answered."""
    survey = make_survey(1, completion_url=LINK)
    (q,) = survey.questions.all()
    query = f"PROLIFIC_PID={PANEL_ID}&STUDY_ID={STUDY_ID}"
    page = f"{survey.get_absolute_url()}?{query}"
    with caplog.at_level(logging.DEBUG):
        assert client.get(page).status_code == 200
        body = {"submission_id": str(uuid.uuid4()), "answers": [{"question": q.id, "value": 1}]}
        submit = reverse("api-submit", args=[survey.slug])
        assert client.post(submit, body, "application/json").status_code == 201
        assert paper_post(client, survey, {q.id: "0"}).status_code == 200
        access = gunicorn_access_lines(survey.get_absolute_url(), query)
    assert access and survey.get_absolute_url() in access[0]
    logged = [record.getMessage() for record in caplog.records] + access
    dump = repr(whole_database())
    assert "C1X2" in dump  # the researcher's own link is stored, and found by this search
    for secret in (PANEL_ID, STUDY_ID):
        assert secret not in dump
        assert not any(secret in line for line in logged)
