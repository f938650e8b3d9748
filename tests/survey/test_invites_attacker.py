"""The researcher as adversary: they hold the invite list (the CSV), the whole database
with its system columns (PostgreSQL's xmin and ctid, SQLite's rowid) and the logs, and
try to tell which invited person sent which answers. Respondents come by every path:
the browser's blind exchange, the no-JavaScript start step, and an API client sending
its invite. Every request commits on its own, as in production."""

from __future__ import annotations

import hashlib
import logging
import re
import uuid

import pytest
from django.db import connection
from django.urls import reverse

from responses.models import SpentCredential
from responses.sealing import seal
from survey.models import CredentialKey, Invite
from tests.storage import spent_credential_count, stored_count
from tests.survey.test_invites_crypto import Browser

pytestmark = pytest.mark.django_db(transaction=True)
POSTGRES = connection.vendor == "postgresql"


def dump(table: str) -> list[dict]:
    """Every row of ``table`` with the system columns an administrator can read."""
    system = "xmin::text AS sys_xmin, ctid::text AS sys_ctid" if POSTGRES else "rowid AS sys_rowid"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {system}, * FROM {connection.ops.quote_name(table)}")
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def whole_database() -> dict[str, list[dict]]:
    return {table: dump(table) for table in connection.introspection.table_names()}


def answer_with_every_path(client, survey, tokens: list[str]) -> list[dict]:
    """Five invited respondents answer (two browsers exchange before either submits);
    the sixth invite stays unused. Returns the credentials the browsers held."""
    submit_url = reverse("api-submit", args=[survey.slug])
    credential_url = reverse("api-credential", args=[survey.slug])
    questions = list(survey.questions.all())

    def body(value: int, **extra) -> dict:
        answers = [{"question": q.id, "value": value} for q in questions]
        return {"submission_id": str(uuid.uuid4()), "answers": answers, **extra}

    browsers, held = [], []
    for token in tokens[:3]:
        browser = Browser(CredentialKey.of(survey).public)
        exchange = {"invite": token, "blinded_message": browser.blinded_message}
        response = client.post(credential_url, exchange, "application/json")
        browsers.append(browser.credential(response.json()["blind_signature"]))
    for i in (2, 0, 1):  # they answer in another order than they opened the page
        held.append(browsers[i])
        response = client.post(submit_url, body(i % 2, credential=browsers[i]), "application/json")
        assert response.status_code == 201
    start = client.post(
        reverse("survey:respond_paper_invite", args=[survey.slug]), {"invite": tokens[3]}
    )
    fields = dict(re.findall(r'name="(credential_\w+)" value="([^"]+)"', start.content.decode()))
    paper = fields | {"submission_id": str(uuid.uuid4())}
    paper |= {f"reported_{q.id}": "1" for q in questions}
    assert (
        client.post(reverse("survey:respond_paper", args=[survey.slug]), paper).status_code == 200
    )
    response = client.post(submit_url, body(0, invite=tokens[4]), "application/json")
    assert response.status_code == 201
    return held


def test_nothing_stored_or_logged_links_an_invite_to_the_answers_it_admitted(
    client, make_survey, caplog
):
    survey = make_survey(n_questions=2, requires_invite=True)
    csv = Invite.create_batch(survey, 6)  # what the researcher downloaded
    with caplog.at_level(logging.DEBUG):
        held = answer_with_every_path(client, survey, csv)
    assert stored_count(survey) == 5 and spent_credential_count() == 5
    # While the hour lasts the invite table is not written at all: its uses wait apart.
    assert not Invite.objects.filter(used=True).exists()
    seal(everything=True)

    db = whole_database()
    invite_table = Invite._meta.db_table
    by_hash = {row["token_hash"]: row for row in db[invite_table]}
    used = [by_hash[hashlib.sha256(t.encode()).hexdigest()] for t in csv[:5]]
    assert (
        all(row["used"] for row in used)
        and not by_hash[Invite.objects.get(used=False).token_hash]["used"]
    )
    # An invite row holds whether it was used and, for a browser's retry, a hash of the
    # blinded message: blinding makes that independent of the credential.
    assert set(db[invite_table][0]) - {"sys_xmin", "sys_ctid", "sys_rowid"} == {
        "id",
        "survey_id",
        "token_hash",
        "used",
        "blinded_hash",
    }

    # No token, token hash or credential-derived value of an invite outside its row...
    elsewhere = repr({t: rows for t, rows in db.items() if t != invite_table})
    for token in csv:
        assert token not in elsewhere
        assert hashlib.sha256(token.encode()).hexdigest() not in elsewhere
    blinded = [row["blinded_hash"] for row in used if row["blinded_hash"]]
    assert len(blinded) == 3 and not any(b in elsewhere for b in blinded)
    assert not any(token in record.getMessage() for record in caplog.records for token in csv)
    # ... and no spent credential an attacker can compute from a token.
    spent = {row["spent_id"] for row in db[SpentCredential._meta.db_table]}
    for token in csv:
        for guess in (token.encode(), f"{survey.pk}:{token}".encode()):
            assert hashlib.sha256(guess).hexdigest() not in spent
    assert not any(c["message"] in repr(db) for c in held)  # spent ids are hashes

    if POSTGRES:
        # The seal marked the invites used in a transaction that wrote nothing else, and
        # they carry its id only: not the ids of the exchanges, nor of any submission.
        invite_xmins = {row["sys_xmin"] for row in used}
        other_xmins = {
            row["sys_xmin"] for t, rows in db.items() if t != invite_table for row in rows
        }
        assert len(invite_xmins) == 1 and invite_xmins.isdisjoint(other_xmins)
    else:
        # SQLite's rowid of an invite is its place in the CSV, nothing newer.
        order = [
            row["token_hash"] for row in sorted(db[invite_table], key=lambda r: r["sys_rowid"])
        ]
        assert order == [hashlib.sha256(t.encode()).hexdigest() for t in csv]
