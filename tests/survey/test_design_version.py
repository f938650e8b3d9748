"""Reports randomized with one design are never stored under another.

Before its first answer a survey's questions may still be edited. A respondent page
opened before an edit sends the design version it showed; every write checks the
version its answers were validated against, under a share of the survey row's lock,
so an edit racing the very first submission either makes it store nothing or is itself
refused because the survey froze.
"""

from __future__ import annotations

import json
import threading
import time
import uuid

import pytest
from django.db import connection, connections, transaction
from django.test import Client
from rest_framework.test import APIClient

from responses import submit as submit_module
from responses.answer_sheet import AnswerSheet
from responses.fast_path import store_if_accepting
from responses.write import record_submission
from survey.models import DesignChanged, DesignFrozen, Invite, Survey
from tests.storage import nothing_stored, stored_count

pytestmark = pytest.mark.django_db
CHANGED = "were changed after these answers were randomized"


def body_for(survey: Survey, **extra) -> dict:
    answers = [{"question": q.id, "value": 1} for q in survey.questions.all()]
    return {"submission_id": str(uuid.uuid4()), "answers": answers, **extra}


def submit(survey: Survey, body: dict):
    url = f"/api/public/surveys/{survey.slug}/responses/"
    return Client().post(url, body, content_type="application/json")


def edit_design(survey: Survey) -> None:
    """What every question edit does: lock the survey, check it is not frozen, edit."""
    with transaction.atomic():
        survey.check_design_editable()
        survey.questions.update(design_params={"p_truth": 0.25, "p_yes": 0.5})


def test_every_question_edit_counts_a_new_version(logged_in, make_survey):
    survey = make_survey(n_questions=1, status=Survey.Status.DRAFT)
    question = survey.questions.get()
    steps = [
        ("add", "/questions/", {"new-text": "Another?", "new-preset": "classic"}),
        ("edit", f"/questions/{question.id}/", {f"q{question.id}-text": "Now?",
                                                 f"q{question.id}-preset": "classic"}),
        ("delete", f"/questions/{question.id}/delete/", {}),
    ]  # fmt: skip
    for version, (_, path, data) in enumerate(steps, start=2):
        response = logged_in.post(f"/surveys/{survey.id}{path}", data)
        assert response.status_code in (200, 302)
        survey.refresh_from_db()
        assert survey.design_version == version


def test_a_refused_edit_counts_no_new_version(logged_in, make_survey):
    """Pages already open stay valid when the owner's edit did not go through."""
    survey = make_survey(n_questions=1, status=Survey.Status.DRAFT)
    question = survey.questions.get()
    for path, prefix in (("/questions/", "new"), (f"/questions/{question.id}/", f"q{question.id}")):
        data = {f"{prefix}-text": "", f"{prefix}-preset": "classic"}
        assert logged_in.post(f"/surveys/{survey.id}{path}", data).status_code == 400
    survey.refresh_from_db()
    assert survey.design_version == 1


def test_the_api_counts_an_edit_of_the_questions_and_reports_the_version(owner, survey):
    api = APIClient()
    api.force_authenticate(owner)
    assert api.get(f"/api/surveys/{survey.id}/").json()["design_version"] == 1
    questions = [{"text": "Changed?"}]
    response = api.patch(f"/api/surveys/{survey.id}/", {"questions": questions}, format="json")
    assert response.status_code == 200
    assert response.json()["design_version"] == 2


def test_saving_a_survey_loaded_before_an_edit_keeps_the_edits_version(survey):
    stale = Survey.objects.get(pk=survey.pk)
    edit_design(survey)
    stale.title = "Renamed"
    stale.save()
    survey.refresh_from_db()
    assert (survey.title, survey.design_version) == ("Renamed", 2)


@pytest.mark.parametrize("path", ["fast", "full"])
def test_answers_from_a_page_opened_before_an_edit_are_409_and_nothing_is_stored(
    make_survey, path: str
):
    survey = make_survey(n_questions=2, requires_invite=path == "full")
    extra = {"invite": Invite.create_batch(survey, 1)[0]} if path == "full" else {}
    edit_design(survey)
    response = submit(survey, body_for(survey, design_version=1, **extra))
    assert response.status_code == 409
    assert CHANGED in response.json()["design_version"][0]
    assert nothing_stored()
    assert Invite.objects.filter(used=False).count() == len(extra)  # the invite still works
    assert submit(survey, body_for(survey, design_version=2, **extra)).status_code == 201


def test_answers_without_a_version_are_checked_against_the_questions_they_fit(survey):
    """API clients need not send one: then the version read with the questions counts."""
    assert submit(survey, body_for(survey)).status_code == 201
    assert submit(survey, body_for(survey, design_version="1")).status_code == 201
    assert stored_count() == 2


@pytest.mark.parametrize("bad", [0, -1, "x", None, 1.5])
def test_a_malformed_version_is_400_and_nothing_is_stored(survey, bad):
    response = submit(survey, body_for(survey, design_version=bad))
    assert response.status_code == 400
    assert "design_version" in response.json()
    assert nothing_stored()


@pytest.mark.django_db(transaction=True)
def test_an_edit_between_validation_and_storing_stores_nothing(survey, monkeypatch):
    """The first answers validated, then the owner edits, then they are written: the
    write itself sees the new version, on the fast path and on the full one."""
    stale = AnswerSheet.for_slug(survey.slug)
    edit_design(survey)
    values = {q.id: 1 for q in survey.questions.all()}
    assert not store_if_accepting(survey.id, uuid.uuid4(), values, design=1)
    with pytest.raises(DesignChanged):
        record_submission(survey, uuid.uuid4(), values, design_version=1)
    monkeypatch.setattr(submit_module.AnswerSheet, "for_slug", lambda slug: stale)
    response = submit(survey, body_for(survey))
    assert response.status_code == 409
    assert CHANGED in response.json()["design_version"][0]
    assert nothing_stored()


def in_thread(work) -> tuple[threading.Thread, list]:
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(work())
        except Exception as error:  # noqa: BLE001 - reported to the test
            outcome.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL")
def test_a_first_submission_waits_for_an_edit_in_progress_then_stores_nothing(survey):
    values = {q.id: 1 for q in survey.questions.all()}
    editing = threading.Event()

    def edit() -> int:
        with transaction.atomic():
            survey.check_design_editable()
            editing.set()
            time.sleep(0.5)  # the submission arrives meanwhile and must wait
            survey.questions.create(position=1, text="Added?", design_params={})
        return 0

    thread, outcome = in_thread(edit)
    assert editing.wait(10)
    stored = store_if_accepting(survey.id, uuid.uuid4(), values, design=1)
    thread.join()
    assert outcome == [0]
    assert stored is False
    assert nothing_stored()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL")
def test_an_edit_after_a_first_submission_in_progress_finds_the_survey_frozen(survey):
    values = {q.id: 1 for q in survey.questions.all()}
    storing = threading.Event()

    def store() -> bool:
        with transaction.atomic():
            stored = store_if_accepting(survey.id, uuid.uuid4(), values, design=1)
            storing.set()
            time.sleep(0.5)  # the edit starts meanwhile and must wait
        return stored

    thread, outcome = in_thread(store)
    assert storing.wait(10)
    with pytest.raises(DesignFrozen), transaction.atomic():
        survey.check_design_editable()
    thread.join()
    assert outcome == [True]
    survey.refresh_from_db()
    assert survey.design_version == 1


def test_the_paper_form_from_before_an_edit_is_shown_again_and_stores_nothing(survey):
    question = survey.questions.get()
    form = {"submission_id": str(uuid.uuid4()), f"reported_{question.id}": "1"}
    edit_design(survey)
    response = Client().post(f"/s/{survey.slug}/paper/", {**form, "design_version": "1"})
    assert response.status_code == 409
    assert b"The questions were changed after you opened this page" in response.content
    assert b'name="design_version" value="2"' in response.content
    assert nothing_stored()
    response = Client().post(f"/s/{survey.slug}/paper/", {**form, "design_version": "2"})
    assert response.status_code == 200
    assert stored_count() == 1


def admin_form(survey: Survey, **question_fields) -> dict:
    """The admin's change form for ``survey`` as it shows it, with its first question's
    fields replaced by ``question_fields``."""
    data = {
        "title": survey.title, "description": survey.description, "mode": survey.mode,
        "status": survey.status, "join_code": survey.join_code, "owner": survey.owner_id,
        "current_round": survey.current_round, "min_cell_count": survey.min_cell_count,
        "language": survey.language,
        "questions-TOTAL_FORMS": "1", "questions-INITIAL_FORMS": "1",
        "questions-MIN_NUM_FORMS": "0", "questions-MAX_NUM_FORMS": "1000",
    }  # fmt: skip
    question = survey.questions.get()
    fields = {
        "id": question.id, "survey": survey.id, "position": question.position,
        "text": question.text, "kind": question.kind, "design_name": question.design_name,
        "design_params": json.dumps(question.design_params), **question_fields,
    }  # fmt: skip
    return data | {f"questions-0-{name}": value for name, value in fields.items()}


def test_an_edit_in_the_admin_counts_a_new_version(admin_client, survey):
    params = json.dumps({"p_truth": 0.25, "p_yes": 0.5})
    response = admin_client.post(
        f"/admin/survey/survey/{survey.id}/change/", admin_form(survey, design_params=params)
    )
    assert response.status_code == 302
    survey.refresh_from_db()
    assert survey.design_version == 2
    assert survey.questions.get().design_params == {"p_truth": 0.25, "p_yes": 0.5}


def test_the_admin_shows_the_questions_of_an_answered_survey_read_only(admin_client, survey):
    assert submit(survey, body_for(survey)).status_code == 201
    page = admin_client.get(f"/admin/survey/survey/{survey.id}/change/").content.decode()
    assert 'name="questions-0-design_params"' not in page
    assert 'name="questions-MAX_NUM_FORMS" value="0"' in page  # no adding
    params = json.dumps({"p_truth": 0.25, "p_yes": 0.5})
    admin_client.post(
        f"/admin/survey/survey/{survey.id}/change/", admin_form(survey, design_params=params)
    )
    survey.refresh_from_db()
    assert survey.questions.get().design_params == {"p_truth": 0.5, "p_yes": 0.5}
    assert survey.design_version == 1
