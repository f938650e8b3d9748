"""The survey builder, distribution page and dashboard (server-rendered, htmx fragments)."""

from __future__ import annotations

import csv
import io
import math
import uuid

import numpy as np
import pytest

from survey.models import Invite, Question, Survey

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def draft(make_survey) -> Survey:
    return make_survey(n_questions=2, status=Survey.Status.DRAFT)


def question_data(prefix: str = "new", **fields) -> dict:
    data = {"text": "Have you ever cheated?", "preset": "classic", **fields}
    return {f"{prefix}-{key}": value for key, value in data.items()}


def add(client, survey, htmx: bool = False, **fields):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(f"/surveys/{survey.id}/questions/", question_data(**fields), **headers)


def test_it_creates_a_survey_and_opens_the_builder(logged_in, owner):
    response = logged_in.post("/surveys/new/", {"title": "Student life", "mode": "research"})
    survey = Survey.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/surveys/{survey.id}/edit/"
    assert (survey.owner, survey.status) == (owner, "draft")


def test_a_survey_without_a_title_is_refused(logged_in):
    response = logged_in.post("/surveys/new/", {"title": "", "mode": "research"})
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()
    assert not Survey.objects.exists()


def test_the_builder_shows_questions_epsilon_and_half_width(logged_in, draft):
    page = logged_in.get(f"/surveys/{draft.id}/edit/?n=400").content.decode()
    assert "Question 1?" in page and "Question 2?" in page
    assert "<strong>ε = 2.20</strong>" in page
    # 1.96 · 0.5 / (0.5 · √400) = 9.8 points at the defaults.
    assert "± 9.8 %" in page


def test_adding_a_preset_question_stores_its_design(logged_in, draft):
    response = add(logged_in, draft, preset="stronger")
    assert response.status_code == 302
    question = draft.questions.last()
    assert (question.position, question.design_name) == (2, "forced_response")
    assert question.design_params == {"p_truth": 0.25, "p_yes": 0.5}
    assert question.epsilon == pytest.approx(math.log(5 / 3))


def test_adding_with_htmx_answers_with_the_questions_fragment(logged_in, draft):
    response = add(logged_in, draft, htmx=True, preset="custom", design_name="mirrored", p="0.8")
    page = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in page and 'id="questions"' in page
    assert draft.questions.last().design_params == {"p": 0.8}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"p_truth": "1.5", "p_yes": "0.5"}, "Must be between 0 and 1 (a probability), not 1.5"),
        ({"p_truth": "0.5", "p_yes": "-0.2"}, "Must be between 0 and 1 (a probability), not -0.2"),
        ({"p_truth": "0.5"}, "Enter a probability between 0 and 1."),
        ({"p_truth": "half", "p_yes": "0.5"}, "Enter a number."),
        ({"p_truth": "0", "p_yes": "0.5"}, "nothing can be estimated"),
        ({"p_truth": "0.5", "p_yes": "1"}, "This design gives no privacy (ε = ∞)"),
    ],
)
def test_invalid_parameters_get_inline_errors_and_store_nothing(logged_in, draft, fields, message):
    response = add(
        logged_in, draft, htmx=True, preset="custom", design_name="forced_response", **fields
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert draft.questions.count() == 2


def test_a_question_needs_a_text(logged_in, draft):
    response = add(logged_in, draft, text="")
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()
    assert draft.questions.count() == 2


def test_no_privacy_is_saved_only_with_the_acknowledgement(logged_in, draft):
    fields = {"preset": "custom", "design_name": "mirrored", "p": "1"}
    assert add(logged_in, draft, **fields).status_code == 400
    assert add(logged_in, draft, allow_no_privacy="on", **fields).status_code == 302
    assert math.isinf(draft.questions.last().epsilon)


def test_editing_a_question_changes_its_text_and_design(logged_in, draft):
    question = draft.questions.first()
    data = question_data(
        f"q{question.id}", text="Edited?", preset="custom", design_name="unrelated_question"
    ) | {f"q{question.id}-p_truth": "0.6", f"q{question.id}-pi": "0.1"}
    response = logged_in.post(f"/surveys/{draft.id}/questions/{question.id}/", data)
    assert response.status_code == 302
    question.refresh_from_db()
    assert (question.text, question.design_name) == ("Edited?", "unrelated_question")
    assert question.design_params == {"p_truth": 0.6, "pi": 0.1}


def test_designs_are_frozen_once_answers_arrive(logged_in, make_survey):
    survey = make_survey(n_questions=1)
    question = survey.questions.get()
    survey.record_submission(uuid.uuid4(), {question.id: 1})
    data = question_data(f"q{question.id}", preset="custom", design_name="mirrored", p="0.9")
    edit = logged_in.post(f"/surveys/{survey.id}/questions/{question.id}/", data)
    assert edit.status_code == 409
    assert "frozen" in edit.content.decode()
    assert add(logged_in, survey).status_code == 409
    delete = logged_in.post(f"/surveys/{survey.id}/questions/{question.id}/delete/")
    assert delete.status_code == 409
    question.refresh_from_db()
    assert (question.design_name, survey.questions.count()) == ("forced_response", 1)


def test_questions_move_up_and_down(logged_in, make_survey):
    survey = make_survey(n_questions=3, status=Survey.Status.DRAFT)
    first, second, third = survey.questions.all()
    logged_in.post(f"/surveys/{survey.id}/questions/{third.id}/move/", {"direction": "up"})
    assert list(survey.questions.all()) == [first, third, second]
    logged_in.post(f"/surveys/{survey.id}/questions/{first.id}/move/", {"direction": "down"})
    assert list(survey.questions.all()) == [third, first, second]
    logged_in.post(f"/surveys/{survey.id}/questions/{third.id}/move/", {"direction": "up"})
    assert list(survey.questions.values_list("position", flat=True)) == [0, 1, 2]


def test_deleting_a_question_renumbers_the_rest(logged_in, make_survey):
    survey = make_survey(n_questions=3, status=Survey.Status.DRAFT)
    first, second, third = survey.questions.all()
    logged_in.post(f"/surveys/{survey.id}/questions/{second.id}/delete/")
    assert list(survey.questions.values_list("id", "position")) == [(first.id, 0), (third.id, 1)]


def test_the_preview_shows_epsilon_while_typing(logged_in, draft):
    data = question_data(preset="custom", design_name="mirrored", p="0.9") | {"n": "100"}
    page = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", data).content.decode()
    assert f"ε = <strong>{math.log(9):.2f}</strong>" in page
    assert "9× more likely" in page
    assert f"survey total if saved: ε = {2 * math.log(3) + math.log(9):.2f}" in page


def test_the_preview_explains_what_is_wrong(logged_in, draft):
    data = question_data(preset="custom", design_name="mirrored", p="1")
    page = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", data).content.decode()
    assert "no privacy" in page


def test_settings_are_saved_and_a_blank_title_is_refused(logged_in, draft):
    data = {"title": "Renamed", "description": "", "mode": "research", "requires_invite": "on"}
    assert logged_in.post(f"/surveys/{draft.id}/edit/", data).status_code == 302
    draft.refresh_from_db()
    assert (draft.title, draft.requires_invite) == ("Renamed", True)
    response = logged_in.post(f"/surveys/{draft.id}/edit/", data | {"title": ""})
    assert response.status_code == 400
    draft.refresh_from_db()
    assert draft.title == "Renamed"


def test_the_lifecycle_buttons_open_and_close(logged_in, draft):
    logged_in.post(f"/surveys/{draft.id}/status/", {"action": "open"})
    draft.refresh_from_db()
    assert draft.status == "open"
    logged_in.post(f"/surveys/{draft.id}/status/", {"action": "close"})
    draft.refresh_from_db()
    assert draft.status == "closed"


def test_an_empty_survey_cannot_be_opened(logged_in, make_survey):
    survey = make_survey(n_questions=0, status=Survey.Status.DRAFT)
    response = logged_in.post(f"/surveys/{survey.id}/status/", {"action": "open"}, follow=True)
    assert "Add at least one question" in response.content.decode()
    survey.refresh_from_db()
    assert survey.status == "draft"


def test_deleting_a_survey(logged_in, draft):
    assert logged_in.post(f"/surveys/{draft.id}/delete/").status_code == 302
    assert not Survey.objects.exists()
    assert not Question.objects.exists()


def test_the_distribution_page_has_link_join_code_and_qr(logged_in, survey):
    page = logged_in.get(f"/surveys/{survey.id}/distribute/").content.decode()
    assert f"http://testserver/s/{survey.slug}/" in page
    assert survey.join_code in page
    assert "<svg" in page and "QR code for Exam honesty" in page


def test_generating_invites_downloads_them_once_as_csv(logged_in, survey):
    response = logged_in.post(f"/surveys/{survey.id}/invites/", {"n": "5"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 5
    assert rows[0]["link"] == f"http://testserver/s/{survey.slug}/?invite={rows[0]['invite']}"
    assert Invite.consume(survey, rows[0]["invite"])
    page = logged_in.get(f"/surveys/{survey.id}/distribute/").content.decode()
    assert "<div data-invites-used>1<small>" in page
    assert "<div data-invites-unused>4<small>" in page
    assert rows[1]["invite"] not in page


@pytest.mark.parametrize("n", ["0", "-3", "10001", "many", ""])
def test_a_bad_invite_count_is_refused(logged_in, survey, n):
    response = logged_in.post(f"/surveys/{survey.id}/invites/", {"n": n})
    assert response.status_code == 400
    assert "invites" in response.content.decode()
    assert not Invite.objects.exists()


def test_the_dashboard_shows_estimates_forest_plot_and_time_chart(logged_in, make_survey):
    survey = make_survey(n_questions=2)
    survey.simulate(500, 0.3, np.random.default_rng(3))
    page = logged_in.get(f"/surveys/{survey.id}/results/?level=0.9&method=exact").content.decode()
    assert '<title id="forest-title">Estimated prevalence per question with 90 % intervals' in page
    assert "Estimate over time for “Question 1?”" in page
    assert 'hx-trigger="every 3s"' in page
    assert '<td data-n>500 <span class="hint" data-n-simulated>(500&nbsp;simulated)' in page


def test_the_dashboard_poll_returns_only_the_results_fragment(logged_in, survey):
    response = logged_in.get(f"/surveys/{survey.id}/results/", HTTP_HX_REQUEST="true")
    page = response.content.decode()
    assert page.lstrip().startswith('<div id="results"')
    assert "<html" not in page


def test_the_dashboard_charts_another_question_on_request(logged_in, make_survey):
    survey = make_survey(n_questions=2)
    second = survey.questions.last()
    page = logged_in.get(f"/surveys/{survey.id}/results/?question={second.id}").content.decode()
    assert "Estimate over time for “Question 2?”" in page


def test_the_dashboard_reports_a_bad_level(logged_in, survey):
    page = logged_in.get(f"/surveys/{survey.id}/results/?level=7").content.decode()
    assert "level must be a number strictly between 0 and 1" in page


def test_pages_need_a_login(client, survey):
    for url in (f"/surveys/{survey.id}/edit/", f"/surveys/{survey.id}/distribute/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def upload(client, survey, content: bytes | None):
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = {} if content is None else {"file": SimpleUploadedFile("offline.csv", content)}
    return client.post(f"/surveys/{survey.id}/import/", data)


def test_offline_answers_are_imported_from_the_distribution_page(logged_in, make_survey):
    survey = make_survey(n_questions=2)
    response = upload(logged_in, survey, b"q1,q2\n1,0\n0,1\n")
    assert response.status_code == 302
    assert survey.submissions.filter(simulated=False).count() == 2
    page = logged_in.get(response["Location"]).content.decode()
    assert "Imported 2 offline responses." in page


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"q1,q2\n1,0\n1,5\n", "Line 3: q2 must be 0 or 1"),
        (b"q1\n1\n", "Line 1: missing column(s) q2"),
        (b"q1,q2\n\xff,1\n", "Line 1: the file is not UTF-8 text"),
        (None, "Line 1: choose a CSV file to import"),
    ],
)
def test_a_bad_offline_file_lists_its_lines_and_imports_nothing(
    logged_in, make_survey, content, message
):
    survey = make_survey(n_questions=2)
    response = upload(logged_in, survey, content)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not survey.submissions.exists()


def test_the_time_chart_is_cumulative_and_thinned_for_long_surveys(survey):
    from datetime import timedelta

    from estimator.charts import estimates_over_time, thin
    from survey.models import Tally, current_hour

    question = survey.questions.get()
    start = current_hour() - timedelta(hours=499)
    for hour in range(500):
        counts = {(question.id, 1): 1, (question.id, 0): 1}
        Tally.add_counts(counts, round=1, simulated=True, hour=start + timedelta(hours=hour))
    points = estimates_over_time(question, 0.95, "wilson", round=1)
    assert [p.n for p in points[:3]] == [2, 4, 6]
    assert points[-1].n == 1000
    assert points[-1].estimate == pytest.approx(0.5)
    thinned = thin(points)
    assert len(thinned) == 120
    assert (thinned[0], thinned[-1]) == (points[0], points[-1])
