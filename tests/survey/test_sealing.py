"""Sealing finished hours, attacked as the database's administrator would: every column,
PostgreSQL's ``xmin`` and ``ctid``, SQLite's ``rowid``, the keys and the receipts."""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse

from responses import sealing
from responses.models import Answer, Receipt, Submission, Tally
from responses.sealing import hours_to_seal, seal_finished_hours, seal_hour
from responses.write import record_submission
from tests.storage import freeze_hour

ROOT = Path(__file__).resolve().parents[2]
N_QUESTIONS = 4
EARLIER = datetime(2026, 11, 23, 9, tzinfo=UTC)
NOW = EARLIER + timedelta(hours=1)
SEED = 20261123
# Committed for real, as in production: inside a test's transaction every savepoint
# would write its own xmin.
pytestmark = pytest.mark.django_db(transaction=True)


def arrive(survey, monkeypatch, hour: datetime, indexes) -> list[uuid.UUID]:
    """Submissions arriving in ``hour`` in the order of ``indexes``, each answering the
    bits of its index (so a row's answers tell its arrival rank), half through the fast
    path and half through the full one. Returns the clients' ids in arrival order."""
    freeze_hour(monkeypatch, hour)
    questions = list(survey.questions.values_list("id", flat=True))
    ids = []
    for index in indexes:
        client_id = uuid.uuid4()
        values = {q: (index >> bit) & 1 for bit, q in enumerate(questions)}
        if index % 2:
            assert record_submission(survey, client_id, values)
        else:
            assert Submission.store_if_accepting(survey.id, client_id, values, design=1)
        ids.append(client_id)
    return ids


@pytest.fixture
def two_hours(make_survey, monkeypatch):
    """Ten submissions in a finished hour, three in the current one."""
    survey = make_survey(n_questions=N_QUESTIONS)
    earlier = arrive(survey, monkeypatch, EARLIER, range(10))
    current = arrive(survey, monkeypatch, NOW, range(10, 13))
    return survey, earlier, current


def physical(model, hour: datetime) -> list[tuple]:
    """The rows of ``hour`` (all columns) in the order they lie in the table, each with
    its row version's ``xmin`` (PostgreSQL) or its ``rowid`` (SQLite) last."""
    columns = ", ".join(f"t.{f.column}" for f in model._meta.concrete_fields)
    if model is Answer:
        submissions = Submission._meta.db_table
        where = (
            f"t.submission_id IN (SELECT submission_id FROM {submissions} WHERE received_hour = %s)"
        )
    else:
        where = (
            f"t.{model._meta.get_field('hour' if model is Tally else 'received_hour').column} = %s"
        )
    if connection.vendor == "postgresql":
        system, order = "t.xmin::text", "t.ctid"
    else:
        system, order = "t.rowid", "t.rowid"
    sql = f"SELECT {columns}, {system} FROM {model._meta.db_table} t WHERE {where} ORDER BY {order}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [connection.ops.adapt_datetimefield_value(hour)])
        return cursor.fetchall()


def arrival_rank(submission_key) -> int:
    """What a submission's answers say about when it came (the test's key, not the
    attacker's: any order must look alike to them)."""
    bits = Answer.objects.filter(submission_id=submission_key).values_list(
        "question__position", "value"
    )
    return sum(value << position for position, value in bits)


def ranks_in_physical_order(model, hour: datetime, client_ids: list[uuid.UUID]) -> list[int]:
    """The arrival ranks of the hour's submissions (or receipts) in table order."""
    if model is Receipt:
        return [client_ids.index(uuid.UUID(str(row[0]))) for row in physical(Receipt, hour)]
    keys = [uuid.UUID(str(row[0])) for row in physical(model, hour)]
    return [arrival_rank(key) for key in dict.fromkeys(keys)]


def snapshot() -> dict:
    """Everything an estimate or an export could read, independent of keys and order."""
    answers = sorted(
        tuple(sorted(s.answers.values_list("question_id", "value")))
        + (s.survey_id, s.round, s.simulated, s.received_hour)
        for s in Submission.objects.prefetch_related("answers")
    )
    return {
        "answers": answers,
        "counts": Tally.objects.counts(),
        "by_hour": Tally.objects.counts_by_hour(),
        "receipts": sorted(map(str, Receipt.objects.values_list("submission_id", flat=True))),
    }


def test_unsealed_rows_lie_in_the_order_they_arrived(two_hours):
    """The attack the seal defeats works on an hour not sealed yet."""
    survey, earlier, _ = two_hours
    for model in (Submission, Answer, Receipt):
        assert ranks_in_physical_order(model, EARLIER, earlier) == list(range(10))
    if connection.vendor == "postgresql":
        xmins = [int(row[-1]) for row in physical(Submission, EARLIER)]
        assert xmins == sorted(xmins) and len(set(xmins)) == 10


def test_a_sealed_hour_lies_in_a_random_order_under_one_transaction(two_hours):
    survey, earlier, current = two_hours
    before_current = {m: physical(m, NOW) for m in (Submission, Answer, Receipt, Tally)}
    (sealed,) = seal_finished_hours(before=NOW, rng=random.Random(SEED))
    assert (sealed.hour, sealed.submissions, sealed.answers, sealed.receipts) == (
        EARLIER,
        10,
        40,
        10,
    )
    orders = {
        m: ranks_in_physical_order(m, EARLIER, earlier) for m in (Submission, Answer, Receipt)
    }
    keys = sorted(Submission.objects.filter(received_hour=EARLIER).values_list("pk", flat=True))
    orders["keys"] = [arrival_rank(key) for key in keys]
    for order in orders.values():
        assert sorted(order) == list(range(10))
        assert order not in (list(range(10)), list(range(9, -1, -1)))
    # Receipts are shuffled on their own: the n-th receipt is not the n-th submission.
    assert orders[Receipt] != orders[Submission]
    if connection.vendor == "postgresql":
        xmins = {
            row[-1] for m in (Submission, Answer, Receipt, Tally) for row in physical(m, EARLIER)
        }
        assert len(xmins) == 1
    else:
        # SQLite's rowids of the sealed rows say nothing but the seal's shuffle.
        assert orders[Submission] == orders[Answer]
    # The current hour is left exactly as it was, for the next run.
    assert {m: physical(m, NOW) for m in before_current} == before_current
    assert hours_to_seal(before=NOW + timedelta(hours=1)) == [NOW]


def test_the_shuffle_comes_from_the_random_source(two_hours):
    """Two seeds, two orders: the order is drawn, not derived from the rows."""
    survey, earlier, _ = two_hours
    seal_hour(EARLIER, random.Random(SEED))
    first = ranks_in_physical_order(Submission, EARLIER, earlier)
    seal_hour(EARLIER, random.Random(SEED + 1))
    assert ranks_in_physical_order(Submission, EARLIER, earlier) != first


def test_sealing_changes_no_answer_tally_or_estimate(two_hours, client, owner):
    survey, _, _ = two_hours
    client.force_login(owner)
    url = f"/api/surveys/{survey.id}/estimates/"
    before, estimate = snapshot(), client.get(url)
    assert estimate.status_code == 200
    seal_finished_hours(before=NOW, rng=random.Random(SEED))
    assert snapshot() == before
    assert set(Tally.objects.filter(hour=EARLIER).values_list("shard", flat=True)) == {0}
    assert client.get(url).json() == estimate.json()


def test_old_keys_are_gone_and_a_late_retry_stores_nothing(two_hours, monkeypatch):
    """The client's id stays only as a receipt (no key of any submission or answer); a
    retry sent after the seal finds it and gets the answer a retry always gets."""
    survey, earlier, _ = two_hours
    keys_before = set(Submission.objects.filter(received_hour=EARLIER).values_list("pk", flat=True))
    seal_finished_hours(before=NOW, rng=random.Random(SEED))
    keys_after = set(Submission.objects.values_list("pk", flat=True))
    assert keys_before.isdisjoint(keys_after)
    assert set(Answer.objects.values_list("submission_id", flat=True)) <= keys_after
    assert keys_after.isdisjoint(earlier)
    before = snapshot()
    questions = list(survey.questions.values_list("id", flat=True))
    body = {
        "submission_id": str(earlier[3]),
        "answers": [{"question": q, "value": 1} for q in questions],
    }
    url = reverse("api-submit", args=[survey.slug])
    response = Client().post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 200
    assert not Submission.store_if_accepting(
        survey.id, earlier[4], dict.fromkeys(questions, 1), design=1
    )
    assert record_submission(survey, earlier[5], dict.fromkeys(questions, 0)) is False
    assert snapshot() == before


def test_a_fault_midway_through_a_seal_loses_nothing(two_hours, monkeypatch):
    """The old rows are deleted and most new ones written when the fault hits."""
    before = snapshot()
    rows_before = {m: physical(m, EARLIER) for m in (Submission, Answer, Receipt, Tally)}

    def fail(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(sealing.Receipt.objects, "bulk_create", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        seal_finished_hours(before=NOW, rng=random.Random(SEED))
    assert snapshot() == before
    assert {m: physical(m, EARLIER) for m in rows_before} == rows_before
    assert hours_to_seal(before=NOW) == [EARLIER]


def test_a_late_straggler_makes_its_hour_due_again(two_hours, monkeypatch):
    survey, _, _ = two_hours
    seal_finished_hours(before=NOW, rng=random.Random(SEED))
    assert hours_to_seal(before=NOW) == []
    arrive(survey, monkeypatch, EARLIER, [13])
    assert hours_to_seal(before=NOW) == [EARLIER]
    (again,) = seal_finished_hours(before=NOW, rng=random.Random(SEED))
    assert again.submissions == 11
    assert not Submission.objects.filter(received_hour=EARLIER, sealed=False).exists()
    assert Answer.objects.filter(submission__received_hour=EARLIER).count() == 44
    assert sum(Tally.objects.filter(hour=EARLIER).values_list("count", flat=True)) == 44


def test_the_command_seals_every_finished_hour(make_survey, monkeypatch):
    survey = make_survey(n_questions=N_QUESTIONS)
    arrive(survey, monkeypatch, EARLIER - timedelta(hours=1), range(3))
    arrive(survey, monkeypatch, EARLIER, range(3, 5))
    monkeypatch.setattr("responses.management.commands.seal_hours.current_hour", lambda: NOW)
    before = snapshot()
    out = io.StringIO()
    call_command("seal_hours", stdout=out)
    assert "Sealed 2026-11-23 08:00 UTC: 3 submissions, 12 answers, 3 receipts." in out.getvalue()
    assert "2 hour(s) sealed" in out.getvalue()
    assert snapshot() == before
    assert not Submission.objects.filter(sealed=False).exists()


PAUSED_SEAL = """
import sys
import django
django.setup()
from datetime import datetime
from responses import sealing
write = sealing.insert_shuffled

def write_then_wait(*args):
    write(*args)
    print("written", flush=True)
    sys.stdin.readline()

sealing.insert_shuffled = write_then_wait
sealing.seal_finished_hours(before=datetime.fromisoformat(sys.argv[1]))
"""


def start_paused_seal() -> subprocess.Popen:
    """A real seal in another process, stopped after it deleted every old row of the
    hour and wrote every new one, before it commits; a line on its stdin lets it go."""
    if connection.vendor != "postgresql":
        pytest.skip("needs a database another process can reach")
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    process = subprocess.Popen(
        [sys.executable, "-c", PAUSED_SEAL, NOW.isoformat()],
        cwd=ROOT,
        env=os.environ | {"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "written"
    return process


def finish(process: subprocess.Popen) -> int:
    process.stdin.close()
    process.stdout.close()
    return process.wait(timeout=60)


def test_a_seal_killed_midway_loses_nothing_on_postgresql(make_survey, monkeypatch):
    """SIGKILL a real seal after it deleted every old row and wrote every new one, before
    it commits: PostgreSQL rolls it back whole, and the next seal runs normally."""
    survey = make_survey(n_questions=N_QUESTIONS)
    arrive(survey, monkeypatch, EARLIER, range(10))
    before = snapshot()
    rows_before = {m: physical(m, EARLIER) for m in (Submission, Answer, Receipt, Tally)}
    process = start_paused_seal()
    process.send_signal(signal.SIGKILL)
    assert finish(process) == -signal.SIGKILL
    assert snapshot() == before
    assert {m: physical(m, EARLIER) for m in rows_before} == rows_before
    (sealed,) = seal_finished_hours(before=NOW, rng=random.Random(SEED))
    assert sealed.submissions == 10
    assert snapshot() == before


def blocked_on_a_lock() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def test_a_retry_racing_the_seal_of_its_hour_stores_nothing_on_postgresql(make_survey, monkeypatch):
    """The seal has deleted the receipt and written it again, uncommitted: the retry's
    insert waits for the seal, then finds the receipt and stores nothing."""
    survey = make_survey(n_questions=N_QUESTIONS)
    earlier = arrive(survey, monkeypatch, EARLIER, range(10))
    freeze_hour(monkeypatch, NOW)
    values = dict.fromkeys(survey.questions.values_list("id", flat=True), 1)
    before = snapshot()
    process = start_paused_seal()
    results = []

    def retry():
        try:
            results.append(Submission.store_if_accepting(survey.id, earlier[0], values, design=1))
        finally:
            connection.close()

    thread = threading.Thread(target=retry)
    thread.start()
    try:
        for _ in range(1200):
            if blocked_on_a_lock() or not thread.is_alive():
                break
            time.sleep(0.05)
        assert blocked_on_a_lock() == 1 and thread.is_alive()
    finally:
        assert finish(process) == 0
        thread.join(timeout=60)
    assert results == [False]
    assert snapshot() == before
    assert not Submission.objects.filter(sealed=False).exists()


def test_the_migration_keeps_every_answer_and_makes_client_ids_receipts(owner):
    """Existing rows survive the new keys: answers copied, each client id a receipt (so
    its late retries are still recognised), every hour due for its first seal."""
    before, after = [("survey", "0006_answer_values_integers")], [("survey", "0007_sealed_hours")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    survey = old.get_model("survey", "Survey").objects.create(owner_id=owner.id, title="Old")
    questions = [survey.questions.create(text=f"Q{i}?") for i in range(2)]
    client_ids = [uuid.uuid4() for _ in range(3)]
    for i, client_id in enumerate(client_ids):
        submission = survey.submissions.create(submission_id=client_id, received_hour=EARLIER)
        for question in questions:
            submission.answers.create(question=question, value=(i + question.id) % 2)
    stored = sorted(old.get_model("survey", "Answer").objects.values_list("question_id", "value"))
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    new = executor.loader.project_state(after).apps
    assert (
        sorted(new.get_model("survey", "Answer").objects.values_list("question_id", "value"))
        == stored
    )
    receipts = new.get_model("survey", "Receipt").objects.values_list("submission_id", flat=True)
    assert set(receipts) == set(client_ids)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert hours_to_seal(before=NOW) == [EARLIER]
    seal_finished_hours(before=NOW)
    assert set(Submission.objects.values_list("pk", flat=True)).isdisjoint(client_ids)
    assert sorted(Answer.objects.values_list("question_id", "value")) == stored


def test_the_hourly_job_also_reseals_used_invites(make_survey, monkeypatch):
    calls = []
    monkeypatch.setattr(
        "responses.management.commands.seal_hours.reseal_invites",
        lambda survey=None: calls.append(survey) or 0,
    )
    call_command("seal_hours", stdout=io.StringIO())
    assert calls == [None]
