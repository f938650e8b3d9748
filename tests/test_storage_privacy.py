"""Nothing identifying is stored or logged: a walk over every model field, a full
submission whose stored rows are searched for the client's details, and the log config."""

from __future__ import annotations

import logging
import re
import runpy
import uuid
from pathlib import Path

import pytest
from django.apps import apps
from django.db import models
from django.db.models.fields import AutoFieldMixin
from django.test import Client
from django.urls import reverse

from config.logging import DropClientDetails
from responses import models as stored
from responses.models import (
    INBOXES,
    INVITE_USES,
    AnswerPattern,
    Receipt,
    Release,
    SpentCredential,
)
from survey.models import EmailedInvite, Invite

ROOT = Path(__file__).resolve().parent.parent

# A field named like this could hold who answered (anywhere in our apps) ...
IDENTIFYING_NAME = re.compile(
    r"(^|_)(ip|ips|ip_address|ip_addr|remote_addr|client_addr|client_address|user_agent|"
    r"useragent|ua|referer|referrer|fingerprint)($|_)"
)
# ... or what they truly answered (on the respondent side).
TRUTH_NAME = re.compile(r"(^|_)(true|truth|true_answer|true_value|actual|raw|unrandomized)($|_)")
# Free-form fields on the respondent side could hold anything; each one is vetted here.
FREE_FORM = (models.CharField, models.TextField, models.JSONField, models.BinaryField)
# SHA-256 hashes of: the token; the blinded message it was exchanged for (independent of
# the credential, RFC 9474); a spent credential's random message. And the answer-pattern
# key of checked reports ("question=report,…"). Nothing else.
VETTED_FREE_FORM = {
    (Invite, "token_hash"),
    (Invite, "blinded_hash"),
    (SpentCredential, "spent_id"),
    (AnswerPattern, "key"),
    # What viewers see: the same tallies and pattern counts, frozen at a release.
    (Release, "counts"),
    *((inbox, name) for inbox in INBOXES for name in ("reports", "credential")),
    *((use, name) for use in INVITE_USES for name in ("token_hash", "blinded_hash")),
    # The invite list as mailed: the address each invite went to and the random key its
    # link is recomputed from. The adversary holds the invite list anyway (SPEC §2.6).
    (EmailedInvite, "address"),
    (EmailedInvite, "link_key"),
}
# What may point at an invite: the list of whom it was mailed to, which points at nothing
# of the responses app (tests/survey/test_email_invites_attacker.py tries the rest).
INVITE_LIST = {EmailedInvite}
# The only time fields on the respondent side, each rounded to the hour before saving.
HOUR_ROUNDED = {
    (stored.Tally, "hour"),
    (stored.ImportBatch, "started_hour"),
    *((model, "hour") for model in (*INBOXES, *INVITE_USES)),
}
TIME_FIELDS = (models.DateTimeField, models.DateField, models.TimeField, models.DurationField)
CLIENT_DETAILS = {
    "REMOTE_ADDR": "198.51.100.77",
    "HTTP_X_FORWARDED_FOR": "203.0.113.99",
    "HTTP_USER_AGENT": "PrivacyProbe/7.7 (phone)",
    "HTTP_REFERER": "https://referrer.example/secret-page",
    "HTTP_ACCEPT_LANGUAGE": "tlh-KL",
}


def all_fields():
    for model in apps.get_models():
        for field in model._meta.get_fields():
            if field.concrete:
                yield model, field


def respondent_models() -> set[type[models.Model]]:
    """Every model of the responses app, Invite, and any model that points at one."""
    core = {*apps.get_app_config("responses").get_models(), Invite}
    return core | {
        model for model, field in all_fields() if field.is_relation and field.related_model in core
    }


def test_no_model_has_a_field_for_an_address_or_a_user_agent():
    offenders = [
        f"{model.__name__}.{field.name}"
        for model, field in all_fields()
        if isinstance(field, models.GenericIPAddressField)
        or (
            model._meta.app_label in ("survey", "responses", "analysis", "classroom")
            and IDENTIFYING_NAME.search(field.name)
        )
    ]
    assert offenders == []


def test_respondent_side_models_have_no_field_for_a_true_answer_or_free_text():
    offenders = [
        f"{model.__name__}.{field.name}"
        for model in respondent_models()
        for field in model._meta.concrete_fields
        if TRUTH_NAME.search(field.name)
        or (isinstance(field, FREE_FORM) and (model, field.name) not in VETTED_FREE_FORM)
    ]
    assert offenders == []


def test_respondent_side_models_keep_no_precise_time():
    offenders = [
        f"{model.__name__}.{field.name}"
        for model in respondent_models()
        for field in model._meta.concrete_fields
        if isinstance(field, TIME_FIELDS) and (model, field.name) not in HOUR_ROUNDED
    ]
    assert offenders == []
    for model, name in HOUR_ROUNDED:
        field = model._meta.get_field(name)
        assert not (getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False))


def test_nothing_that_holds_a_submission_has_a_sequential_key():
    """Random keys (a digest of the client's id for receipts and the current hour's rows)
    and composite ones for the counts: nothing counts up as submissions arrive. Tally
    rows, written only by the seal, one per question, hour and report, are the one
    table with an automatic key."""
    for model in (*INBOXES, Receipt):
        assert isinstance(model._meta.pk, models.UUIDField)
    assert isinstance(AnswerPattern._meta.pk, models.CompositePrimaryKey)
    sequential = {
        model.__name__
        for model in apps.get_app_config("responses").get_models()
        if any(isinstance(f, AutoFieldMixin) for f in model._meta.concrete_fields)
    }
    assert sequential == {"Tally"}


def test_nothing_links_a_clients_id_to_the_submission_it_stored():
    """The id a device sent is a receipt's key and nothing else's."""
    assert not any(f.is_relation for f in Receipt._meta.concrete_fields if f.name != "survey")
    assert not any(
        f.is_relation and f.related_model is Receipt
        for model in apps.get_models()
        for f in model._meta.concrete_fields
    )


def test_an_invite_cannot_be_linked_to_the_answer_it_admitted():
    relations = {f.related_model for f in Invite._meta.concrete_fields if f.is_relation}
    assert relations.isdisjoint(set(apps.get_app_config("responses").get_models()))
    assert not any(isinstance(f, TIME_FIELDS) for f in Invite._meta.concrete_fields)
    pointing = {
        model
        for model in respondent_models()
        for f in model._meta.concrete_fields
        if f.is_relation and f.related_model is Invite
    }
    assert pointing == INVITE_LIST
    responses_models = set(apps.get_app_config("responses").get_models())
    for model in INVITE_LIST:
        relations = {f.related_model for f in model._meta.concrete_fields if f.is_relation}
        assert relations.isdisjoint(responses_models)
        assert not any(isinstance(f, TIME_FIELDS) for f in model._meta.concrete_fields)


def test_the_only_answers_stored_are_the_randomized_reports():
    for inbox in INBOXES:
        fields = {f.name for f in inbox._meta.concrete_fields}
        assert fields == {
            "receipt", "survey", "round", "simulated", "hour", "reports", "credential", "batch"
        }  # fmt: skip
    assert {f.name for f in AnswerPattern._meta.concrete_fields} == {
        "survey", "round", "simulated", "key", "count"
    }  # fmt: skip


def every_stored_value() -> str:
    """Every value of every row of every model, as one string to search."""
    chunks = []
    for model in apps.get_models():
        for row in model.objects.values_list():
            chunks.append(" ".join(map(str, row)))
    return "\n".join(chunks)


@pytest.mark.django_db
def test_a_respondents_details_are_nowhere_in_the_database(make_survey, settings):
    settings.RATELIMIT_ENABLED = True  # the limiter runs, and must leave no trace either
    survey = make_survey(n_questions=2, requires_invite=True)
    tokens = Invite.create_batch(survey, 2)
    client = Client(**CLIENT_DETAILS)
    body = {
        "submission_id": str(uuid.uuid4()),
        "invite": tokens[0],
        "answers": [{"question": q.id, "value": 1} for q in survey.questions.all()],
    }
    url = reverse("api-submit", args=[survey.slug])
    assert client.post(url, body, content_type="application/json").status_code == 201
    start = client.post(
        reverse("survey:respond_paper_invite", args=[survey.slug]), {"invite": tokens[1]}
    )
    paper = {"submission_id": str(uuid.uuid4())}
    paper |= re.findall(r'name="(credential_\w+)" value="([^"]+)"', start.content.decode())
    paper |= {f"reported_{q.id}": "0" for q in survey.questions.all()}
    response = client.post(reverse("survey:respond_paper", args=[survey.slug]), paper)
    assert response.status_code == 200
    assert not client.cookies
    stored = every_stored_value()
    for detail in CLIENT_DETAILS.values():
        assert detail not in stored
    assert "198.51.100" not in stored and "PrivacyProbe" not in stored
    assert not any(token in stored for token in tokens)
    assert apps.get_model("sessions", "Session").objects.count() == 0
    for inbox in INBOXES:
        for hour in inbox.objects.values_list("hour", flat=True):
            assert (hour.minute, hour.second, hour.microsecond) == (0, 0, 0)
    body_id = uuid.UUID(body["submission_id"])
    assert body_id.hex not in stored and str(body_id) not in stored  # a digest only


@pytest.mark.django_db
def test_a_rejected_submission_logs_neither_address_nor_body(survey, caplog):
    client = Client(**CLIENT_DETAILS)
    url = reverse("api-submit", args=[survey.slug])
    secret = "my-secret-" + uuid.uuid4().hex
    with caplog.at_level(logging.DEBUG):
        response = client.post(url, {"answers": secret}, content_type="application/json")
    assert response.status_code == 400
    assert caplog.records
    for record in caplog.records:
        assert getattr(record, "request", None) is None
        text = record.getMessage()
        assert secret not in text
        assert not any(detail in text for detail in CLIENT_DETAILS.values())


def test_the_log_filter_strips_the_request_and_runservers_request_line():
    record = logging.LogRecord("django.request", logging.WARNING, "", 0, "Bad: %s", ("/x",), None)
    record.request = object()
    assert DropClientDetails().filter(record)
    assert record.request is None
    served = logging.LogRecord(
        "django.server", logging.INFO, "", 0, '"%s" %s', ("POST /api/ 198.51.100.77", 201), None
    )
    DropClientDetails().filter(served)
    assert served.getMessage() == "request handled"


def test_the_gunicorn_access_log_has_no_address_query_string_agent_or_referer():
    config = runpy.run_path(str(ROOT / "config" / "gunicorn.py"))
    log_format = config["access_log_format"]
    for forbidden in ("%(h)s", "%(r)s", "%(q)s", "%(a)s", "%(f)s", "}i)"):
        assert forbidden not in log_format
    assert "%(U)s" in log_format and "%(s)s" in log_format


@pytest.mark.django_db
def test_the_how_it_works_page_says_what_the_device_keeps_and_what_stays_visible(client):
    """The page describes the memo respond.js writes, and the limits of sealing."""
    html = " ".join(client.get(reverse("survey:how_it_works")).content.decode().split())
    script = (ROOT / "static" / "survey" / "respond.js").read_text()
    assert "`report:q${question.id}:d${designVersion}`" in script
    assert "{ report: outcome.report }" in script
    assert "{ report: outcome.report, arm: outcome.arm }" in script  # a design with arms
    assert "report:q18:d1" in html and '{"report":1}' in html
    assert '{"report":1,"arm":0}' in html
    assert "Never your true answer (not even in the name of an entry), never how" in html
    assert "watching the server live during the current hour" in html
    assert "its rows become counts (how many people gave each combination of answers)" in html
    assert "the hour's tables are emptied" in html
