"""The database's superuser as adversary, after a survey is closed and its hour sealed.

Respondents answer by every path (the browser's blind credential, the no-JavaScript
invite step, an API client sending its invite, a plain API submission), the researcher
imports answers collected offline and adds simulated ones, and a viewer polls the results
after every arrival, so that batches are released to viewers (``Release`` rows, written
while the answers arrive); every request commits on its own, as in production. Then the
researcher closes the surveys and the hour ends. The attacker reads every page of every
table the app writes, with ``pageinspect`` (``heap_page_items``: every line pointer, dead
tuples included) and as raw bytes (free space included), and every file in ``pg_wal``; on
SQLite the database file and its WAL. They must find no tuple written while the answers
arrived (no transaction id from that window, live or dead, releases included), no
client's submission id, no current-hour row left over, and no trace in the write-ahead
log. What viewers see is the same before and after the seal.

Written against the public interfaces only (HTTP, management commands), so that it runs
unchanged against earlier versions of the app: there it fails, as it should.
"""

from __future__ import annotations

import hashlib
import io
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from responses.models import Release
from responses.sealing import seal
from responses.write import simulate_respondents
from survey.models import CredentialKey, Role, Survey
from tests.survey.test_invites_crypto import Browser

pytestmark = pytest.mark.django_db(transaction=True)
POSTGRES = connection.vendor == "postgresql"
ARRIVAL = datetime(2026, 11, 23, 9, 17, 42, tzinfo=UTC)
LATER = ARRIVAL + timedelta(hours=1, minutes=5)
CLASSIC = {"p_truth": 0.5, "p_yes": 0.5}


def receipt_digest(submission_id: uuid.UUID) -> bytes:
    """What a server that keeps only a digest of the client's id would store."""
    return hashlib.sha256(submission_id.bytes).digest()[:16]


def at(monkeypatch, moment: datetime) -> None:
    monkeypatch.setattr("django.utils.timezone.now", lambda: moment)


def an_earlier_hour_sealed(monkeypatch, surveys: list[Survey]) -> None:
    """Respondents of an earlier hour, sealed: viewers polling while the answers arrive are
    released those (releases are made of sealed hours), so ``Release`` rows are written
    in the window the attacker looks at."""
    at(monkeypatch, ARRIVAL - timedelta(hours=2))
    for survey in surveys:
        simulate_respondents(survey, 12, 0.3)
    at(monkeypatch, ARRIVAL - timedelta(hours=1))
    seal()


def new_survey(owner, requires_invite: bool) -> Survey:
    survey = Survey.objects.create(
        owner=owner,
        title="Exam honesty",
        status=Survey.Status.OPEN,
        requires_invite=requires_invite,
        min_cell_count=5,
    )
    for i in range(2):
        survey.questions.create(position=i, text=f"Question {i + 1}?", design_params=CLASSIC)
    return survey


def body(survey: Survey, value: int, **extra) -> dict:
    answers = [{"question": q.id, "value": value} for q in survey.questions.all()]
    return {"submission_id": str(uuid.uuid4()), "answers": answers, **extra}


def invite(owner, survey: Survey, n: int) -> list[str]:
    api = APIClient()
    api.force_authenticate(owner)
    return api.post(f"/api/surveys/{survey.id}/invites/", {"n": n}, format="json").json()["tokens"]


def viewer_of(owner, surveys: list[Survey]) -> APIClient:
    """A colleague the surveys are shared with as viewer: sees released batches only."""
    colleague = type(owner).objects.create_user("viewer", password="viewer-password-1")
    for survey in surveys:
        survey.share_with(colleague, Role.VIEWER)
    viewer = APIClient()
    viewer.force_authenticate(colleague)
    return viewer


def answer_by_every_path(
    owner, invited: Survey, plain: Survey, tokens, viewer: APIClient
) -> list[uuid.UUID]:
    """Every way a report can be stored, with a viewer polling the results after each
    arrival; returns the clients' submission ids."""
    client, api = Client(), APIClient()
    api.force_authenticate(owner)
    submit = reverse("api-submit", args=[invited.slug])
    sent = []

    def poll() -> None:
        for survey in (invited, plain):
            estimates = viewer.get(f"/api/surveys/{survey.id}/estimates/")
            assert estimates.status_code == 200, estimates.content

    def send(url: str, data: dict) -> None:
        response = client.post(url, data, "application/json")
        assert response.status_code == 201, response.content
        sent.append(uuid.UUID(data["submission_id"]))
        poll()

    for i, token in enumerate(tokens[:3]):  # the browser's blind exchange
        browser = Browser(CredentialKey.of(invited).public)
        exchange = {"invite": token, "blinded_message": browser.blinded_message}
        signed = client.post(
            reverse("api-credential", args=[invited.slug]), exchange, "application/json"
        )
        send(
            submit,
            body(invited, i % 2, credential=browser.credential(signed.json()["blind_signature"])),
        )
    start = client.post(
        reverse("survey:respond_paper_invite", args=[invited.slug]), {"invite": tokens[3]}
    )
    fields = dict(re.findall(r'name="(credential_\w+)" value="([^"]+)"', start.content.decode()))
    paper_id = uuid.uuid4()
    paper = fields | {"submission_id": str(paper_id)}
    paper |= {f"reported_{q.id}": "1" for q in invited.questions.all()}
    assert (
        client.post(reverse("survey:respond_paper", args=[invited.slug]), paper).status_code == 200
    )
    sent.append(paper_id)
    poll()
    send(submit, body(invited, 0, invite=tokens[4]))  # an API client with its invite
    for value in (0, 1, 1, 0, 1):
        send(reverse("api-submit", args=[plain.slug]), body(plain, value))
    csv = "q1,q2\n1,0\n0,0\n1,1\n"
    imported = api.post(f"/api/surveys/{plain.id}/import/", csv, content_type="text/csv")
    assert imported.status_code == 201, imported.content
    poll()
    call_command(
        "simulate_responses", plain.slug, "--n", "7", "--true-rate", "0.3", stdout=io.StringIO()
    )
    poll()
    assert Release.objects.filter(survey__in=[invited, plain]).count() == 2, "nothing released"
    return sent  # fmt: skip


def close_and_end_the_hour(owner, monkeypatch, surveys: list[Survey]) -> None:
    """The researcher closes the surveys; an hour later the hourly job runs."""
    api = APIClient()
    api.force_authenticate(owner)
    for survey in surveys:
        assert api.post(f"/api/surveys/{survey.id}/close/").status_code == 200
    at(monkeypatch, LATER)
    call_command("seal_hours", stdout=io.StringIO())


def xid() -> int:
    """A fresh transaction id, committed: every id between two of these was handed to a
    transaction that ran in between."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT txid_current()")
        return cursor.fetchone()[0] % 2**32


def app_relations() -> list[tuple[str, str]]:
    """``(name, kind)`` of every table, index and TOAST table of the app's own tables."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, c.relkind FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')
              AND (c.relname LIKE 'survey\\_%%' OR c.relname LIKE 'responses\\_%%')
            UNION
            SELECT 'pg_toast.' || t.relname, 't' FROM pg_class c
            JOIN pg_class t ON t.oid = c.reltoastrelid
            WHERE c.relname LIKE 'survey\\_%%' OR c.relname LIKE 'responses\\_%%'
            """
        )
        return cursor.fetchall()


def pages(relation: str) -> list[bytes]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_relation_size(%s::regclass) / 8192", [relation])
        (count,) = cursor.fetchone()
        raw = []
        for block in range(count):
            cursor.execute("SELECT get_raw_page(%s, %s)", [relation, block])
            raw.append(bytes(cursor.fetchone()[0]))
        return raw


def tuples_written_in(relation: str, low: int, high: int) -> list[tuple]:
    """Every tuple of a table (dead ones included) whose xmin or xmax lies in the window."""
    found = []
    with connection.cursor() as cursor:
        for block in range(len(pages(relation))):
            cursor.execute(
                "SELECT lp, t_xmin, t_xmax FROM heap_page_items(get_raw_page(%s, %s)) "
                "WHERE lp_flags = 1",
                [relation, block],
            )
            for lp, xmin, xmax in cursor.fetchall():
                if low < int(xmin) < high or low < int(xmax or 0) < high:
                    found.append((relation, block, lp, int(xmin), int(xmax or 0)))
    return found


def wal_files() -> list[bytes]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'")
        names = [row[0] for row in cursor.fetchall()]
        files = []
        for name in names:
            cursor.execute("SELECT pg_read_binary_file(%s)", [f"pg_wal/{name}"])
            files.append(bytes(cursor.fetchone()[0]))
        return files


@pytest.fixture
def postgres_as_deployed():
    """pageinspect, and PostgreSQL set up as docs/operations.md asks (``wal_recycle =
    off``: a recycled WAL segment keeps its old bytes until it is written over)."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        cursor.execute("SHOW wal_recycle")
        before = cursor.fetchone()[0]
        cursor.execute("ALTER SYSTEM SET wal_recycle = off")
        cursor.execute("SELECT pg_reload_conf()")
    yield
    with connection.cursor() as cursor:
        if before == "on":
            cursor.execute("ALTER SYSTEM RESET wal_recycle")
            cursor.execute("SELECT pg_reload_conf()")


@pytest.mark.skipif(not POSTGRES, reason="pageinspect and pg_wal: PostgreSQL")
def test_the_superuser_finds_no_trace_of_the_arrivals_after_the_seal(
    owner, monkeypatch, postgres_as_deployed
):
    invited, plain = new_survey(owner, True), new_survey(owner, False)
    tokens = invite(owner, invited, 6)
    viewer = viewer_of(owner, [invited, plain])
    an_earlier_hour_sealed(monkeypatch, [invited, plain])
    at(monkeypatch, ARRIVAL)
    first = xid()
    sent = answer_by_every_path(owner, invited, plain, tokens, viewer)
    last = xid()
    released = sorted(Release.objects.values_list("survey", "round", "respondents", "counts"))
    close_and_end_the_hour(owner, monkeypatch, [invited, plain])
    assert sorted(Release.objects.values_list("survey", "round", "respondents", "counts")) == (
        released
    ), "the seal changed what viewers see"

    written = []
    for relation, kind in app_relations():
        if kind == "r":
            written += tuples_written_in(relation, first, last)
    assert written == [], "row versions written while the answers arrived"

    markers = [s.bytes for s in sent] + [s.hex.encode() for s in sent]
    markers += [str(s).encode() for s in sent]
    for relation, _ in app_relations():
        for number, page in enumerate(pages(relation)):
            assert not [m for m in markers if m in page], f"a client's id in {relation}:{number}"
    digests = [receipt_digest(s) for s in sent]
    for segment in wal_files():
        assert not [m for m in markers + digests if m in segment], "the arrivals are in pg_wal"


def sqlite_files() -> list[Path]:
    name = Path(connection.settings_dict["NAME"])
    return [p for p in (name, Path(f"{name}-wal")) if p.exists()]


@pytest.mark.skipif(POSTGRES, reason="the database file: SQLite")
def test_the_sqlite_file_keeps_no_client_id_or_current_hour_row_after_the_seal(owner, monkeypatch):
    invited, plain = new_survey(owner, True), new_survey(owner, False)
    tokens = invite(owner, invited, 6)
    viewer = viewer_of(owner, [invited, plain])
    an_earlier_hour_sealed(monkeypatch, [invited, plain])
    at(monkeypatch, ARRIVAL)
    sent = answer_by_every_path(owner, invited, plain, tokens, viewer)
    close_and_end_the_hour(owner, monkeypatch, [invited, plain])
    connection.close()  # as a copy of the files taken now would be

    markers = [s.hex.encode() for s in sent] + [str(s).encode() for s in sent]
    # A current-hour row, had it survived, would hold a receipt digest beside its hour.
    hour = ARRIVAL.strftime("%Y-%m-%d %H:").encode()
    for path in sqlite_files():
        data = path.read_bytes()
        assert not [m for m in markers if m in data], f"a client's id in {path.name}"
        for s in sent:
            at_ = data.find(receipt_digest(s).hex().encode())
            assert at_ < 0 or hour not in data[at_ : at_ + 120], (
                f"a current-hour row in {path.name}"
            )
