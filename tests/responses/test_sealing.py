"""Sealing: a finished hour's submissions become counts, in random order, and the hour's
tables are emptied; closing a survey seals it at once. The attacker's view of the whole
database is ``test_seal_attacker.py``; here: nothing lost, nothing doubled, nothing left."""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from analysis.results import survey_results
from responses import sealing
from responses.counts import survey_counts
from responses.fast_path import store_if_accepting
from responses.models import INBOXES, AnswerPattern, Receipt, Tally, hour_tables, receipt_of
from responses.sealing import seal
from responses.write import record_submission
from tests.storage import (
    freeze_hour,
    stored_count,
    stored_reports,
)

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
            assert store_if_accepting(survey.id, client_id, values, design=1)
        ids.append(client_id)
    return ids


@pytest.fixture
def two_hours(make_survey, monkeypatch):
    """Ten submissions in a finished hour, three in the current one."""
    survey = make_survey(n_questions=N_QUESTIONS)
    earlier = arrive(survey, monkeypatch, EARLIER, range(10))
    current = arrive(survey, monkeypatch, NOW, range(10, 13))
    return survey, earlier, current


def current_rows(hour: datetime) -> list[tuple]:
    """The current-hour rows of ``hour`` in the order they lie in their table, with their
    ``xmin`` (PostgreSQL) or ``rowid`` (SQLite)."""
    system, order = ("xmin::text", "ctid") if connection.vendor == "postgresql" else ("rowid",) * 2
    rows = []
    for inbox in INBOXES:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT reports, {system} FROM {inbox._meta.db_table} WHERE hour = %s "
                f"ORDER BY {order}",
                [connection.ops.adapt_datetimefield_value(hour)],
            )
            rows += cursor.fetchall()
    return rows


def rank(reports: str, survey) -> int:
    """What a submission's reports say about when it came (the test's key, not the
    attacker's: any order must look alike to them)."""
    positions = dict(survey.questions.values_list("id", "position"))
    values = dict(item.split("=") for item in reports.split(","))
    return sum(int(v) << positions[int(q)] for q, v in values.items())


def snapshot(survey) -> dict:
    """Everything an estimate or an export could read."""
    counts = survey_counts(survey)
    return {
        "reports": stored_reports(survey),
        "results": survey_results(survey).as_dict(),
        "hours": {q.id: [(h.hour, dict(h.tally.counts)) for h in counts.hours(q.id)]
                  for q in survey.questions.all()},
    }  # fmt: skip


def test_the_current_hours_rows_lie_in_the_order_they_arrived(two_hours):
    """The attack the seal defeats works on an hour not sealed yet."""
    survey, _, _ = two_hours
    rows = current_rows(EARLIER)
    assert [rank(reports, survey) for reports, _ in rows] == list(range(10))
    if connection.vendor == "postgresql":
        xmins = [int(row[-1]) for row in rows]
        assert xmins == sorted(xmins) and len(set(xmins)) == 10


def test_a_sealed_hour_leaves_counts_only_and_the_current_hour_as_it_was(two_hours):
    survey, earlier, _ = two_hours
    current = current_rows(NOW)
    before = snapshot(survey)
    sealed = seal(rng=random.Random(SEED))
    assert (sealed.submissions, sealed.receipts, sealed.hours) == (10, 10, {EARLIER})
    assert current_rows(EARLIER) == []
    assert current_rows(NOW) == current  # left exactly as it was, for the next run
    assert snapshot(survey) == before
    keys = sorted(AnswerPattern.objects.filter(survey=survey).values_list("key", flat=True))
    assert len(keys) == 10 and all(n == 1 for n in survey.patterns.values_list("count", flat=True))
    assert set(Receipt.objects.values_list("submission_id", flat=True)) == {
        receipt_of(i) for i in earlier
    }


def test_the_receipts_are_shuffled_by_the_random_source(make_survey, monkeypatch):
    """Two seeds, two orders: the receipts' order is drawn, not the order of arrival."""
    orders = []
    for seed in (SEED, SEED + 1):
        survey = make_survey(n_questions=N_QUESTIONS)
        earlier = arrive(survey, monkeypatch, EARLIER, range(12))
        freeze_hour(monkeypatch, NOW)
        seal(rng=random.Random(seed))
        order = {receipt_of(c): i for i, c in enumerate(earlier)}
        system = "ctid" if connection.vendor == "postgresql" else "rowid"
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT submission_id FROM {Receipt._meta.db_table} "
                f"WHERE survey_id = %s ORDER BY {system}",
                [survey.pk],
            )
            keys = [Receipt._meta.pk.to_python(row[0]) for row in cursor.fetchall()]
        orders.append([order[k] for k in keys])
    assert sorted(orders[0]) == list(range(12)) and orders[0] != list(range(12))
    assert orders[0] != orders[1]


def test_a_late_retry_stores_nothing_and_gets_its_receipt(two_hours, monkeypatch):
    """The client's id is kept only as a digest in a receipt: a retry sent after the seal
    finds it and gets the answer a retry always gets, on every path."""
    survey, earlier, _ = two_hours
    seal(everything=True, rng=random.Random(SEED))
    before = snapshot(survey)
    questions = list(survey.questions.values_list("id", flat=True))
    body = {
        "submission_id": str(earlier[3]),
        "answers": [{"question": q, "value": 1} for q in questions],
    }
    url = reverse("api-submit", args=[survey.slug])
    response = Client().post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 200
    assert not store_if_accepting(survey.id, earlier[4], dict.fromkeys(questions, 1), design=1)
    assert record_submission(survey, earlier[5], dict.fromkeys(questions, 0)) is False
    assert snapshot(survey) == before


def test_a_fault_midway_through_a_seal_loses_nothing(two_hours, monkeypatch):
    """The fault hits the second chunk: the first stays sealed, the rest stays in the
    hour's table for the next run, and every count is as it was."""
    survey, _, _ = two_hours
    before = snapshot(survey)
    monkeypatch.setattr(sealing, "CHUNK", 4)
    chunks = []
    real = sealing._add_counts

    def fail_second(batch):
        chunks.append(batch)
        if len(chunks) == 2:
            raise RuntimeError("disk full")
        real(batch)

    monkeypatch.setattr(sealing, "_add_counts", fail_second)
    with pytest.raises(RuntimeError, match="disk full"):
        seal(rng=random.Random(SEED))
    assert snapshot(survey) == before
    assert len(current_rows(EARLIER)) == 6
    monkeypatch.setattr(sealing, "_add_counts", real)
    assert seal(rng=random.Random(SEED)).submissions == 6
    assert current_rows(EARLIER) == [] and snapshot(survey) == before


def test_a_late_straggler_is_sealed_by_the_next_run(two_hours, monkeypatch):
    survey, _, _ = two_hours
    seal(rng=random.Random(SEED))
    arrive(survey, monkeypatch, EARLIER, [13])  # its write began before the hour ended
    freeze_hour(monkeypatch, NOW)
    assert seal(rng=random.Random(SEED)).submissions == 1
    assert sum(h.tally.count for h in survey_counts(survey).hours(survey.questions.first().id)
               if h.hour == EARLIER) == 11  # fmt: skip
    assert Tally.objects.filter(hour=EARLIER).count() == len(
        set(Tally.objects.filter(hour=EARLIER).values_list("question_id", "value"))
    )


def test_closing_a_survey_seals_it_at_once_and_leaves_the_others_current(
    make_survey, monkeypatch, owner
):
    closing, other = make_survey(n_questions=2), make_survey(n_questions=2)
    arrive(closing, monkeypatch, NOW, range(3))
    arrive(other, monkeypatch, NOW, range(3, 5))
    before = snapshot(closing)
    api = APIClient()
    api.force_authenticate(owner)
    assert api.post(f"/api/surveys/{closing.id}/close/").status_code == 200
    assert all(not i.objects.filter(survey=closing).exists() for i in INBOXES)
    assert sum(i.objects.filter(survey=other).count() for i in INBOXES) == 2
    assert snapshot(closing) == before
    assert stored_count(other) == 2


def test_the_command_seals_finished_hours_and_now_everything(two_hours, monkeypatch):
    survey, _, _ = two_hours
    out = io.StringIO()
    call_command("seal_hours", stdout=out)
    assert "10 submission(s) sealed" in out.getvalue()
    assert "2026-11-23 09:00" in out.getvalue()
    assert len(current_rows(NOW)) == 3
    out = io.StringIO()
    call_command("seal_hours", "--now", stdout=out)
    assert "3 submission(s) sealed" in out.getvalue()
    assert current_rows(NOW) == [] and stored_count(survey) == 13


def test_a_submission_stored_twice_at_the_edge_of_an_hour_counts_once(make_survey, monkeypatch):
    """The same client id written to both hours' tables (two requests in flight as the hour
    turned): the seal keeps the first it meets and says so."""
    survey = make_survey(n_questions=1)
    client_id = uuid.uuid4()
    freeze_hour(monkeypatch, EARLIER)
    question = survey.questions.get()
    assert record_submission(survey, client_id, {question.id: 1})
    freeze_hour(monkeypatch, NOW)
    hour_tables(NOW).inbox.objects.create(
        receipt=receipt_of(client_id), survey=survey, hour=NOW, reports=f"{question.id}=1"
    )
    sealed = seal(everything=True)
    assert (sealed.submissions, sealed.duplicates) == (1, 1)
    assert stored_count(survey) == 1


def test_an_import_under_way_is_not_sealed_until_it_has_finished(make_survey, monkeypatch):
    from responses.imports import ImportBatches

    survey = make_survey(n_questions=1)
    question = survey.questions.get()
    batches = ImportBatches(survey, survey.design_version)
    batches.store([{question.id: 1}, {question.id: 0}])
    assert seal(everything=True).submissions == 0
    assert stored_count(survey) == 2
    batches.finish()
    assert seal(everything=True).submissions == 2
    assert stored_count(survey) == 2


PAUSED_SEAL = """
import sys
import django
django.setup()
from responses import sealing
add = sealing._add_counts

def add_then_wait(batch):
    add(batch)
    print("written", flush=True)
    sys.stdin.readline()

sealing._add_counts = add_then_wait
sealing.seal(everything=True)
"""


def start_paused_seal() -> subprocess.Popen:
    """A real seal in another process, stopped after it deleted the hour's rows and wrote
    their counts, before it commits; a line on its stdin lets it go."""
    if connection.vendor != "postgresql":
        pytest.skip("needs a database another process can reach")
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    process = subprocess.Popen(
        [sys.executable, "-c", PAUSED_SEAL],
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
    """SIGKILL a real seal after it moved the hour's rows and wrote their counts, before
    it commits: PostgreSQL rolls it back whole, and the next seal runs normally."""
    survey = make_survey(n_questions=N_QUESTIONS)
    arrive(survey, monkeypatch, EARLIER, range(10))
    before, rows_before = snapshot(survey), current_rows(EARLIER)
    process = start_paused_seal()
    process.send_signal(signal.SIGKILL)
    assert finish(process) == -signal.SIGKILL
    assert snapshot(survey) == before
    assert current_rows(EARLIER) == rows_before
    assert seal(everything=True).submissions == 10
    assert snapshot(survey) == before


def test_a_retry_while_its_hour_is_being_sealed_stores_nothing_on_postgresql(
    make_survey, monkeypatch
):
    """The seal has moved the receipt's row and written its counts, uncommitted: a retry
    still sees the row where it was, stores nothing, and after the seal commits the
    counts are the hour's, once."""
    survey = make_survey(n_questions=N_QUESTIONS)
    earlier = arrive(survey, monkeypatch, EARLIER, range(10))
    freeze_hour(monkeypatch, NOW)
    values = dict.fromkeys(survey.questions.values_list("id", flat=True), 1)
    before = snapshot(survey)
    process = start_paused_seal()
    try:
        assert record_submission(survey, earlier[0], values) is False
        assert not store_if_accepting(survey.id, earlier[1], values, design=1)
    finally:
        assert finish(process) == 0
    assert record_submission(survey, earlier[2], values) is False
    assert snapshot(survey) == before


def test_the_migration_turns_every_stored_answer_into_counts(owner):
    """Submissions and answers stored before the sealed counts existed, an import's among
    them (which kept no patterns, and tallied numbers by their raw report): after the
    migration every result is as it was, the tallies as every other path keeps them,
    and each client's id a receipt's digest."""
    before = [("responses", "0001_initial"), ("survey", "0015_reports_move_to_responses")]
    after = [("responses", "0003_sealed_answer_patterns")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    survey = old.get_model("survey", "Survey").objects.create(owner_id=owner.id, title="Old")
    yes_no = survey.questions.create(text="Cheated?", position=0, design_params={})
    number = survey.questions.create(
        text="Drinks?", position=1, kind="number", design_name="laplace",
        design_params={"epsilon": 1.0, "lower": 0, "upper": 30},
    )  # fmt: skip
    Submission = old.get_model("responses", "Submission")
    client_ids, reports = [], [3, 7, 12, 12, 25, 29, 40, -5]
    for i, value in enumerate(reports):
        client_id = uuid.uuid4()
        client_ids.append(client_id)
        submission = Submission.objects.create(
            submission_id=client_id, survey_id=survey.id, received_hour=EARLIER
        )
        submission.answers.create(question_id=yes_no.id, value=i % 2)
        submission.answers.create(question_id=number.id, value=value)
        old.get_model("responses", "Receipt").objects.create(
            submission_id=client_id, survey_id=survey.id, received_hour=EARLIER
        )
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from survey.models import Survey

    migrated = Survey.objects.get(pk=survey.pk)
    expected = [{yes_no.id: i % 2, number.id: v} for i, v in enumerate(reports)]
    assert stored_reports(migrated) == sorted(expected, key=lambda r: sorted(r.items()))
    tally = survey_counts(migrated).tally(number.id)
    design = migrated.questions.get(pk=number.id).design
    assert dict(tally.counts) == dict(Counter(design.tally_key(v) for v in reports))
    assert (tally.count, tally.total) == (8, sum(reports))
    assert set(Receipt.objects.values_list("submission_id", flat=True)) == {
        receipt_of(c) for c in client_ids
    }
