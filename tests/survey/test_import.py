"""Importing offline answers from a CSV: hostile files get a clear error and store
nothing; large files are limited, read as a stream and stored in short batches that
respondents' submissions slip between."""

from __future__ import annotations

import io
import threading
import time
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connection

from analysis.results import survey_results
from responses.imports import (
    ImportRejected,
    ImportTooLarge,
    check_responses,
    import_responses,
    spool,
)
from responses.models import Tally
from responses.write import record_submission
from survey.codebook import question_columns
from survey.models import Survey
from tests.storage import stored_answers, stored_count, tallied_total

pytestmark = pytest.mark.django_db

FIELD_LIMIT = 131_072  # the csv module's default field size limit


def stored() -> tuple[int, int, int]:
    return (
        stored_count(),
        stored_answers(),
        tallied_total(),
    )


def post_csv(api, survey: Survey, body: str | bytes, **extra):
    return api.generic(
        "POST", f"/api/surveys/{survey.id}/import/", body, content_type="text/csv", **extra
    )


def upload(client, survey: Survey, content: bytes):
    data = {"file": SimpleUploadedFile("offline.csv", content, content_type="text/csv")}
    return client.post(f"/surveys/{survey.id}/import/", data)


def rows(n: int, n_questions: int = 1) -> bytes:
    header = ",".join(f"q{k + 1}" for k in range(n_questions))
    line = ",".join("1" if k % 2 else "0" for k in range(n_questions))
    return (header + "\n" + (line + "\n") * n).encode()


# Line endings and malformed CSV ----------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    ["q1,q2\r1,0\r0,1\r1,1", "q1,q2\r\n1,0\r\n0,1\r\n1,1\r\n", "q1,q2\n1,0\r0,1\r\n1,1\n"],
    ids=["cr-only", "crlf", "mixed"],
)
def test_any_line_ending_is_read(api, make_survey, body):
    survey = make_survey(n_questions=2)
    response = post_csv(api, survey, body)
    assert response.status_code == 201, response.content
    assert response.json() == {"imported": 3}
    assert stored() == (3, 6, 6)


def test_a_field_over_the_csv_modules_limit_is_a_400_naming_the_line(api, make_survey):
    survey = make_survey(n_questions=1)
    body = "q1\n1\n0\n" + "1" * (FIELD_LIMIT + 1) + "\n1\n"
    response = post_csv(api, survey, body)
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["line"] == 4
    assert "not readable as CSV" in error["message"]
    assert "field larger than field limit" in error["message"]
    assert stored() == (0, 0, 0)


def test_a_huge_quoted_field_on_the_page_is_a_listed_error(logged_in, make_survey):
    survey = make_survey(n_questions=1)
    response = upload(logged_in, survey, b'q1\n"' + b"x" * (FIELD_LIMIT + 10) + b'"\n')
    assert response.status_code == 400
    assert "Line 2: not readable as CSV" in response.content.decode()
    assert stored() == (0, 0, 0)


def test_a_long_bad_value_is_shortened_in_the_error(api, survey):
    response = post_csv(api, survey, "q1\n" + "7" * 5000 + "\n")
    assert response.status_code == 400
    assert len(response.json()["errors"][0]["message"]) < 200
    assert stored() == (0, 0, 0)


def test_bytes_that_are_not_utf8_late_in_a_large_file_store_nothing(api, survey):
    body = rows(20_000) + b"\xff\n"
    response = post_csv(api, survey, body)
    assert response.status_code == 400
    assert "not UTF-8" in response.json()["errors"][0]["message"]
    assert stored() == (0, 0, 0)


def test_the_command_reports_malformed_csv_and_stores_nothing(survey, tmp_path):
    path = tmp_path / "dice.csv"
    path.write_bytes(b"q1\n1\n" + b"1" * (FIELD_LIMIT + 1) + b"\n")
    with pytest.raises(CommandError, match="line 3: not readable as CSV"):
        call_command("import_responses", str(survey.id), str(path))
    assert stored() == (0, 0, 0)


# Size limits ----------------------------------------------------------------------------


def test_a_declared_length_over_the_limit_is_413_json_before_reading(api, survey, settings):
    settings.MAX_IMPORT_BYTES = 1000
    response = post_csv(api, survey, rows(10), CONTENT_LENGTH="1001")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert "1000 bytes" in response.json()["detail"]
    assert stored() == (0, 0, 0)


@pytest.mark.parametrize("multipart", [False, True], ids=["csv-body", "multipart"])
def test_a_file_over_the_byte_limit_is_413_and_stores_nothing(api, survey, settings, multipart):
    settings.MAX_IMPORT_BYTES = 1000
    body = rows(600)
    if multipart:
        upload = SimpleUploadedFile("big.csv", body, content_type="text/csv")
        url = f"/api/surveys/{survey.id}/import/"
        response = api.post(url, {"file": upload}, format="multipart")
    else:
        response = post_csv(api, survey, body)
    assert response.status_code == 413
    assert "larger than" in response.json()["detail"]
    assert stored() == (0, 0, 0)


def test_a_body_longer_than_it_declared_is_cut_off_at_the_limit():
    """Streaming a body of unknown length: the copy stops at the limit."""
    with pytest.raises(ImportTooLarge, match="1000 bytes"):
        spool(io.BytesIO(b"q1\n" + b"1\n" * 1000), limit=1000)


def test_a_file_with_too_many_rows_is_413_and_stores_nothing(api, survey, settings):
    settings.MAX_IMPORT_ANSWERS = 100
    assert post_csv(api, survey, rows(100)).status_code == 201
    response = post_csv(api, survey, rows(101))
    assert response.status_code == 413
    assert "more than the 100 rows" in response.json()["detail"]
    assert stored() == (100, 100, 100)


def test_the_page_says_the_file_is_too_large_and_stores_nothing(logged_in, survey, settings):
    settings.MAX_IMPORT_BYTES = 1000
    response = upload(logged_in, survey, rows(600))
    assert response.status_code == 413
    page = response.content.decode()
    assert "Nothing was imported" in page
    assert "larger than the" in page
    assert stored() == (0, 0, 0)


def test_the_page_names_the_row_limit(logged_in, survey, settings):
    settings.MAX_IMPORT_ANSWERS = 5
    response = upload(logged_in, survey, rows(6))
    assert response.status_code == 413
    assert "more than the 5 rows" in response.content.decode()
    assert stored() == (0, 0, 0)


def test_the_row_limit_counts_answers(api, make_survey, settings):
    settings.MAX_IMPORT_ANSWERS = 100
    survey = make_survey(n_questions=4)
    response = post_csv(api, survey, rows(26, 4))
    assert response.status_code == 413
    assert "more than the 25 rows" in response.json()["detail"]
    assert stored() == (0, 0, 0)


def test_the_operators_command_has_no_row_limit(survey, settings, tmp_path):
    settings.MAX_IMPORT_ANSWERS = 5
    path = tmp_path / "dice.csv"
    path.write_bytes(rows(12))
    call_command("import_responses", str(survey.id), str(path), stdout=io.StringIO())
    assert stored() == (12, 12, 12)


def test_the_page_still_checks_the_csrf_token(owner, survey):
    """The view reads the upload itself (to stream it to disk), so Django's CSRF check
    runs inside it: a forged cross-site upload is still refused."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    response = upload(client, survey, rows(3))
    assert response.status_code == 403
    assert stored() == (0, 0, 0)


def test_import_errors_take_the_focus_on_the_page(logged_in, survey):
    """The page comes back scrolled to the top: the errors, further down, take the focus."""
    page = upload(logged_in, survey, b"q1\n7\n").content.decode()
    assert 'id="import-errors"' in page
    errors = page[page.index('id="import-errors"') - 200 : page.index('id="import-errors"') + 200]
    assert "autofocus" in errors and 'tabindex="-1"' in errors and 'role="alert"' in errors
    assert 'aria-describedby="import-errors"' in page


# Streaming and batches ------------------------------------------------------------------


class ReadRecorder(io.BytesIO):
    """A file that remembers the largest read asked of it."""

    largest = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.largest = max(self.largest, len(data))
        return data

    def read1(self, size: int = -1) -> bytes:
        data = super().read1(size)
        self.largest = max(self.largest, len(data))
        return data


def test_a_file_is_read_in_small_pieces_never_whole(survey):
    binary = ReadRecorder(rows(150_000))
    assert len(binary.getvalue()) > 4 * 64 * 1024
    columns = dict(question_columns(survey))
    assert check_responses(binary, columns, max_rows=None) == 150_000
    assert binary.largest <= 64 * 1024


def test_a_request_body_is_copied_in_small_pieces(settings):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 10_000
    source = ReadRecorder(rows(150_000))
    with spool(source, limit=10**7) as copy:
        assert copy.read() == source.getvalue()
    assert source.largest <= 64 * 1024


def test_the_whole_file_is_checked_before_the_first_batch_is_stored(survey, monkeypatch):
    monkeypatch.setattr("responses.imports.IMPORT_BATCH_ANSWERS", 10)
    batches = []
    body = rows(95) + b"2\n"
    with pytest.raises(ImportRejected, match="line 97: q1 must be 0 or 1"):
        import_responses(survey, io.BytesIO(body), on_batch=lambda *a: batches.append(a))
    assert batches == []
    assert stored() == (0, 0, 0)


def test_rows_are_stored_in_batches_with_progress(survey, monkeypatch):
    monkeypatch.setattr("responses.imports.IMPORT_BATCH_ANSWERS", 10)
    batches = []
    import_responses(survey, io.BytesIO(rows(25)), on_batch=lambda *a: batches.append(a))
    assert batches == [(10, 25), (20, 25), (25, 25)]
    assert stored() == (25, 25, 25)


def test_a_batch_that_fails_midway_takes_the_earlier_batches_back(make_survey, monkeypatch):
    """Nothing of the import stays, and respondents' answers from the same hour stay whole."""
    monkeypatch.setattr("responses.imports.IMPORT_BATCH_ANSWERS", 20)  # 10 rows of 2
    survey = make_survey(n_questions=2)
    q1, q2 = survey.questions.values_list("id", flat=True)
    record_submission(survey, uuid.uuid4(), {q1: 1, q2: 0})
    before, estimates = stored(), survey_results(survey).as_dict()

    def fail_at_third(stored_rows: int, total: int) -> None:
        if stored_rows == 30:
            raise RuntimeError("the disk is full")

    with pytest.raises(RuntimeError, match="disk is full"):
        import_responses(survey, io.BytesIO(rows(45, 2)), on_batch=fail_at_third)
    assert stored() == before
    assert survey_results(survey).as_dict() == estimates
    assert not Tally.objects.filter(count__lte=0).exists()


def test_questions_edited_after_the_check_stop_the_import_before_anything_is_stored(
    survey, monkeypatch
):
    check = check_responses

    def check_then_edit(*args, **kwargs):
        total = check(*args, **kwargs)
        Survey.objects.get(pk=survey.pk).check_design_editable()  # a builder edit
        return total

    monkeypatch.setattr("responses.imports.check_responses", check_then_edit)
    with pytest.raises(ImportRejected, match="questions changed during the import"):
        import_responses(survey, io.BytesIO(rows(3)))
    assert stored() == (0, 0, 0)


def submit_in_thread(survey: Survey, results: list) -> threading.Thread:
    """A respondent submitting on its own connection, as another worker would."""

    def run() -> None:
        try:
            started = time.monotonic()
            question = survey.questions.get().id
            results.append(record_submission(survey, uuid.uuid4(), {question: 1}))
            results.append(time.monotonic() - started)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_a_respondent_submits_between_two_batches_of_an_import(survey, monkeypatch):
    """No lock is held between batches: a submission made there completes before the
    import goes on (if the import held SQLite's write lock, it would wait for the busy
    timeout and fail)."""
    monkeypatch.setattr("responses.imports.IMPORT_BATCH_ANSWERS", 100)
    results: list = []

    def submit_after_first_batch(stored_rows: int, total: int) -> None:
        if stored_rows == 100:
            submit_in_thread(survey, results).join(timeout=60)

    import_responses(survey, io.BytesIO(rows(300)), on_batch=submit_after_first_batch)
    assert results[0] is True
    assert stored() == (301, 301, 301)
