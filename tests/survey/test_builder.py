"""The survey builder, distribution page and dashboard (server-rendered, htmx fragments)."""

from __future__ import annotations

import csv
import io
import math
import uuid

import numpy as np
import pytest

from responses.write import record_submission, simulate_respondents
from survey.models import Invite, Survey
from tests.storage import stored_count, use_invite

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(make_survey) -> Survey:
    return make_survey(n_questions=2, status=Survey.Status.DRAFT)


def question_data(prefix: str = "new", **fields) -> dict:
    data = {"text": "Have you ever cheated?", "kind": "binary", "preset": "classic", **fields}
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


BAD_INPUTS = [
    # (field with the error, posted fields, message)
    ("p_truth", {"p_truth": "1.5", "p_yes": "0.5"}, "between 0 and 1, got 1.5"),
    ("p_yes", {"p_truth": "0.5", "p_yes": "-0.2"}, "between 0 and 1, got -0.2"),
    ("p_yes", {"p_truth": "0.5", "p_yes": ""}, "Enter a number."),
    ("p_truth", {"p_truth": "half", "p_yes": "0.5"}, "Enter a number."),
    ("p_truth", {"p_truth": "nan", "p_yes": "0.5"}, "Enter a number."),
    ("p_truth", {"p_truth": "0", "p_yes": "0.5"}, "nothing can be estimated"),
    ("confirm_no_privacy", {"p_truth": "0.5", "p_yes": "1"}, "This design gives no privacy"),
    ("p", {"design_name": "crosswise", "p": "0.5"}, "p must not be 1/2"),
    ("design_name", {"design_name": "no_such_design"}, "Choose one of the designs listed"),
    ("kind", {"kind": "essay"}, "Select a valid choice"),
    ("preset", {"preset": "choice_ln3"}, "Choose one of the presets listed"),
    ("options", {"kind": "choice", "options": "only one"}, "at least 2 options"),
    ("options", {"kind": "choice", "options": "\n".join(map(str, range(11)))}, "At most 10"),
    ("options", {"kind": "choice", "options": "a\n\nb"}, "Option 2 is empty"),
    ("options", {"kind": "choice", "options": "Yes\nno\nyes"}, "“yes” appears twice"),
    (
        "p_forced",
        {"kind": "choice", "options": "a\nb\nc", "p_forced": "0.5, 0.5", "p_truth": "0.5"},
        "one probability per option (3)",
    ),
    ("p_forced", {"kind": "choice", "options": "a\nb", "p_forced": "0.5, 0.6"}, "must sum to 1"),
    (
        "p_forced",
        {"kind": "choice", "options": "a\nb", "p_forced": "half, half"},
        "separated by commas",
    ),
    (
        "epsilon",
        {"kind": "choice", "design_name": "k_rr", "options": "a\nb", "epsilon": "0"},
        "epsilon must be ≥ 0.01",
    ),
    (
        "lower",
        {"kind": "number", "design_name": "laplace", "lower": "5", "upper": "5", "epsilon": "1"},
        "lower must be below upper",
    ),
    (
        "upper",
        {"kind": "number", "design_name": "laplace", "upper": "2000000"},
        "upper must be ≤ 1e+06",
    ),
    (
        "lower",
        {"kind": "number", "design_name": "laplace", "lower": "1.5"},
        "Enter a whole number.",
    ),
    (
        "epsilon",
        {"kind": "number", "design_name": "laplace", "epsilon": "-1"},
        "epsilon must be ≥ 0.01",
    ),
    ("epsilon", {"kind": "number", "design_name": "laplace", "epsilon": "inf"}, "Enter a number."),
    (
        "epsilon",
        {"kind": "choice", "design_name": "k_rr", "options": "a\nb", "epsilon": "800"},
        "epsilon must be ≤ 20",
    ),
    (
        "confirm_no_privacy",
        {"kind": "number", "design_name": "direct", "lower": "0", "upper": "9"},
        "confirm that it is not sensitive",
    ),
]


def custom(fields: dict) -> dict:
    """A custom design of the posted kind (forced response for yes/no by default)."""
    kind = fields.get("kind", "binary")
    default = {"binary": "forced_response", "choice": "forced_response", "number": "laplace"}
    return {"preset": "custom", "design_name": default.get(kind, "direct"), **fields}


@pytest.mark.parametrize(("field", "fields", "message"), BAD_INPUTS)
def test_every_bad_input_is_shown_beside_its_field_and_stores_nothing(
    logged_in, draft, field, fields, message
):
    version = Survey.objects.get(pk=draft.pk).design_version
    response = add(logged_in, draft, htmx=True, **custom(fields))
    page = response.content.decode()
    assert response.status_code == 400
    assert "<html" not in page  # the fragment, never a page replacing the builder
    beside = page.split(f'class="field field-{field} has-error"', 1)[1].split("</div>", 1)[0]
    assert message in beside
    assert 'aria-invalid="true"' in beside or field == "confirm_no_privacy"
    assert draft.questions.count() == 2
    assert Survey.objects.get(pk=draft.pk).design_version == version


def test_a_directly_asked_question_is_saved_only_once_confirmed_not_sensitive(logged_in, draft):
    fields = {"kind": "choice", "preset": "direct", "options": "Law\nMedicine\nOther"}
    refused = add(logged_in, draft, **fields)
    assert refused.status_code == 400
    assert "Asked directly — no privacy (ε = ∞)" in refused.content.decode()
    assert add(logged_in, draft, confirm_no_privacy="on", **fields).status_code == 302
    question = draft.questions.last()
    assert (question.kind, question.design_name) == ("choice", "direct")
    assert question.options == ["Law", "Medicine", "Other"]
    page = logged_in.get(f"/surveys/{draft.id}/edit/").content.decode()
    assert "1 question is asked directly, with no privacy (ε = ∞): listed apart" in page
    assert "<strong>ε = 2.20</strong>" in page  # the total leaves it out


def test_no_privacy_is_saved_only_with_the_acknowledgement(logged_in, draft):
    fields = {"preset": "custom", "design_name": "mirrored", "p": "1"}
    assert add(logged_in, draft, **fields).status_code == 400
    assert add(logged_in, draft, confirm_no_privacy="on", **fields).status_code == 302
    assert math.isinf(draft.questions.last().epsilon)


def test_a_multiple_choice_question_is_added_with_its_options_and_preset(logged_in, draft):
    options = "never\nonce\nmore than once"
    response = add(logged_in, draft, kind="choice", preset="choice_ln3", options=options)
    assert response.status_code == 302
    question = draft.questions.last()
    assert (question.kind, question.design_name) == ("choice", "k_rr")
    assert question.options == ["never", "once", "more than once"]
    assert question.epsilon == pytest.approx(math.log(3))


def test_a_custom_die_takes_one_probability_per_option(logged_in, draft):
    fields = {"kind": "choice", "options": "a\nb\nc", "p_truth": "0.6", "p_forced": "0.2, 0.3, 0.5"}
    assert add(logged_in, draft, **custom(fields)).status_code == 302
    question = draft.questions.last()
    assert question.design_params == {"p_truth": 0.6, "p_forced": [0.2, 0.3, 0.5]}


def test_a_number_question_keeps_its_bounds_and_the_presets_epsilon(logged_in, draft):
    response = add(logged_in, draft, kind="number", preset="number_1", lower="0", upper="30")
    assert response.status_code == 302
    question = draft.questions.last()
    assert (question.kind, question.design_name) == ("number", "laplace")
    assert question.design_params == {"epsilon": 1.0, "lower": 0, "upper": 30}


def test_the_form_is_redrawn_for_another_kind_without_storing(logged_in, draft):
    data = question_data(kind="number", preset="classic")
    page = logged_in.post(f"/surveys/{draft.id}/question-form/?prefix=new", data).content.decode()
    assert 'name="new-lower"' in page and 'name="new-upper"' in page
    assert "Number, ε = 1" in page and "Classic two coins" not in page
    assert "has-error" not in page
    no_js = logged_in.post(f"/surveys/{draft.id}/questions/", data | {"redraw": "1"})
    assert no_js.status_code == 200 and 'name="new-lower"' in no_js.content.decode()
    assert draft.questions.count() == 2


def test_a_parameter_field_comes_from_the_designs_declaration(logged_in, draft):
    from estimator.designs import Crosswise

    data = question_data(preset="custom", design_name="crosswise")
    page = logged_in.post(f"/surveys/{draft.id}/question-form/?prefix=new", data).content.decode()
    declared = Crosswise.PARAMS[0].to_json()
    assert declared["label"] in page and declared["help"] in page


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
    record_submission(survey, uuid.uuid4(), {question.id: 1})
    data = question_data(f"q{question.id}", preset="custom", design_name="mirrored", p="0.9")
    edit = logged_in.post(f"/surveys/{survey.id}/questions/{question.id}/", data)
    assert edit.status_code == 409
    assert "frozen" in edit.content.decode()
    assert add(logged_in, survey).status_code == 409
    delete = logged_in.post(f"/surveys/{survey.id}/questions/{question.id}/delete/")
    assert delete.status_code == 409
    question.refresh_from_db()
    assert (question.design_name, survey.questions.count()) == ("forced_response", 1)


def test_after_answers_designs_are_shown_in_words_and_the_wording_can_change(
    logged_in, make_survey
):
    survey = make_survey(n_questions=1)
    question = survey.questions.get()
    record_submission(survey, uuid.uuid4(), {question.id: 1})
    page = logged_in.get(f"/surveys/{survey.id}/edit/").content.decode()
    assert "Forced response (two coins): P(answer truthfully) = 0.5; P(forced “yes”) = 0.5" in page
    assert "{&quot;p_truth&quot;" not in page and '{"p_truth"' not in page
    url = f"/surveys/{survey.id}/questions/{question.id}/wording/"
    response = logged_in.post(url, {f"q{question.id}-text": "Have you ever cheated in an exam?"})
    assert response.status_code == 302
    question.refresh_from_db()
    assert question.text == "Have you ever cheated in an exam?"
    (revision,) = question.revisions.all()
    assert (revision.old_text, revision.new_text) == ("Question 1?", question.text)
    assert revision.hour.minute == revision.hour.second == 0
    assert question.design_params == {"p_truth": 0.5, "p_yes": 0.5}
    assert question.wording_history() == [
        {"old_text": "Question 1?", "new_text": question.text, "hour": revision.hour.isoformat()}
    ]
    page = logged_in.get(f"/surveys/{survey.id}/edit/").content.decode()
    assert "Wording changed 1 time" in page
    empty = logged_in.post(url, {f"q{question.id}-text": ""})
    assert empty.status_code == 400 and "This field is required" in empty.content.decode()
    assert question.revisions.count() == 1


def test_a_wording_change_before_answers_is_not_a_revision(logged_in, draft):
    question = draft.questions.first()
    url = f"/surveys/{draft.id}/questions/{question.id}/wording/"
    logged_in.post(url, {f"q{question.id}-text": "Reworded?"})
    assert not question.revisions.exists()


def test_duplicating_copies_questions_and_designs_but_no_answers(logged_in, make_survey):
    survey = make_survey(n_questions=1)
    survey.questions.create(
        position=1, text="Faculty", kind="choice", options=["A", "B"], design_name="direct"
    )
    record_submission(survey, uuid.uuid4(), {q.id: 1 for q in survey.questions.all()})
    response = logged_in.post(f"/surveys/{survey.id}/duplicate/")
    copy = Survey.objects.exclude(pk=survey.pk).get()
    assert response["Location"] == f"/surveys/{copy.id}/edit/"
    assert (copy.title, copy.status) == ("Exam honesty (copy)", "draft")
    assert [
        (q.text, q.kind, q.options, q.design_name, q.design_params) for q in copy.questions.all()
    ] == [
        (q.text, q.kind, q.options, q.design_name, q.design_params) for q in survey.questions.all()
    ]
    assert stored_count(copy) == 0 and copy.slug != survey.slug


def test_the_respondent_preview_cannot_send_and_stores_nothing(logged_in, make_survey):
    survey = make_survey(n_questions=1, status=Survey.Status.DRAFT)
    survey.questions.create(
        position=1,
        text="How many drinks?",
        kind="number",
        design_name="laplace",
        design_params={"epsilon": 1.0, "lower": 0, "upper": 30},
    )
    page = logged_in.get(f"/surveys/{survey.id}/respondent-preview/").content.decode()
    assert "Question 1?" in page and "How many drinks?" in page and "0 to 30" in page
    assert "<form" not in page.split('id="main"')[1]
    assert "nothing here can be sent or stored" in page
    assert stored_count(survey) == 0


def test_other_people_cannot_duplicate_or_preview(client, outsider, draft):
    client.force_login(outsider)
    assert client.post(f"/surveys/{draft.id}/duplicate/").status_code == 404
    assert client.get(f"/surveys/{draft.id}/respondent-preview/").status_code == 404
    assert Survey.objects.count() == 1


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


def test_the_preview_says_infinity_in_words_never_a_stale_number(logged_in, draft):
    data = question_data(preset="custom", design_name="mirrored", p="1")
    page = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", data).content.decode()
    assert "∞ — no privacy" in page and "1.10" not in page.split("survey total")[0]
    direct = question_data(kind="number", preset="direct", lower="18", upper="99")
    page = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", direct).content.decode()
    assert "Asked directly: <strong>no privacy (ε = ∞)</strong>" in page
    assert "plus 1 asked directly" in page


def test_the_preview_names_the_fields_to_fix(logged_in, draft):
    data = question_data(preset="custom", design_name="forced_response", p_truth="2", p_yes="0.5")
    page = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", data).content.decode()
    assert "fix the fields marked in red (P(answer truthfully))" in page


def test_the_preview_plans_power_and_the_price_of_privacy(logged_in, draft):
    data = question_data() | {"n": "1000", "q": "0.1", "q0": "0.05", "q2": "0.2", "h": "0.05"}
    page = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", data).content.decode()
    assert "price of privacy at 10 %: 9.3× the respondents" in page
    assert "n for ± 5.0 %: 1537" in page  # planning.n_for_half_width(0.5, 0.25, 0.05)
    assert "power against 5 % if the truth is 10 %: 43 %" in page  # power_one_sample: 0.4269


def test_the_preview_of_a_number_compares_laplace_with_one_bit(logged_in, draft):
    from estimator.designs import Laplace

    data = question_data(kind="number", preset="number_1", lower="0", upper="10") | {"h": "0.05"}
    page = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", data).content.decode()
    design = Laplace(epsilon=1.0, lower=0, upper=10)
    compared = design.one_bit_comparison(0.5)
    assert f"typical noise added to each answer: ± {design.typical_noise:.2f}" in page
    assert f"Laplace needs n = {compared['laplace_n']}" in page
    assert f"one-bit mechanism n = {compared['one_bit_n']}" in page


def test_planning_assumptions_update_the_summary_and_bad_ones_are_named(logged_in, draft):
    page = logged_in.get(f"/surveys/{draft.id}/edit/?n=400&q=0.01", HTTP_HX_REQUEST="true")
    text = page.content.decode()
    assert text.lstrip().startswith('<div id="summary"') and "76.8×" in text
    bad = logged_in.get(f"/surveys/{draft.id}/edit/?n=-4&q=2").content.decode()
    assert "Enter a value from 1 to 1e+07." in bad and "Enter a value from 0.001 to 0.999." in bad


def test_under_debug_the_builder_loads_htmx_without_the_page_replacing_helper(
    logged_in, draft, settings
):
    settings.DEBUG = True
    page = logged_in.get(f"/surveys/{draft.id}/edit/").content.decode()
    assert "htmx-2.min" in page and "django-htmx.js" not in page


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
    assert use_invite(survey, rows[0]["invite"])
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
    simulate_respondents(survey, 500, 0.3, np.random.default_rng(3))
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
    assert stored_count(survey, simulated=False) == 2
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
    assert stored_count(survey) == 0


def test_the_time_chart_is_cumulative_and_thinned_for_long_surveys(survey):
    from datetime import timedelta

    from analysis.charts import estimates_over_time, thin
    from responses.counts import survey_counts
    from responses.write import bulk_record
    from survey.models import current_hour

    question = survey.questions.get()
    start = current_hour() - timedelta(hours=499)
    for hour in range(500):
        reports = [{question.id: 1}, {question.id: 0}]
        bulk_record(survey, reports, simulated=True, hour=start + timedelta(hours=hour))
    points = estimates_over_time(
        question, survey_counts(question.survey, 1).hours(question.id), 0.95, "wilson"
    )
    assert [p.n for p in points[:3]] == [2, 4, 6]
    assert points[-1].n == 1000
    assert points[-1].estimate == pytest.approx(0.5)
    thinned = thin(points)
    assert len(thinned) == 120
    assert (thinned[0], thinned[-1]) == (points[0], points[-1])


@pytest.mark.parametrize("key", sorted(__import__("estimator.designs").designs.REGISTRY))
def test_every_registered_design_is_built_from_its_declaration(logged_in, draft, key):
    """No design is written out in the builder: its declaration's defaults are enough."""
    from estimator.designs import REGISTRY

    kind, name = key
    declared = REGISTRY[key].declaration()["parameters"]
    params = {p["name"]: "" if p["default"] is None else str(p["default"]) for p in declared}
    fields = {"kind": kind, "preset": "custom", "design_name": name, **params}
    if kind == "choice":
        fields["options"] = "first\nsecond\nthird"
    if REGISTRY[key].asks_innocuous:
        fields["innocuous_text"] = "Were you born in the first half of the year?"
    preview = logged_in.post(f"/surveys/{draft.id}/preview/?prefix=new", question_data(**fields))
    assert preview.status_code == 200 and "Not saved yet" not in preview.content.decode()
    response = add(logged_in, draft, confirm_no_privacy="on", **fields)
    assert response.status_code == 302
    question = draft.questions.last()
    assert (question.kind, question.design_name) == key
    page = logged_in.get(f"/surveys/{draft.id}/edit/").content.decode()
    assert "Traceback" not in page


def test_an_editor_duplicates_into_a_draft_of_their_own(client, draft, django_user_model):
    from survey.models import Role

    editor = django_user_model.objects.create_user("editor", password="editor-password-1")
    draft.share_with(editor, Role.EDITOR)
    client.force_login(editor)
    assert client.post(f"/surveys/{draft.id}/duplicate/").status_code == 302
    copy = Survey.objects.exclude(pk=draft.pk).get()
    assert copy.owner == editor and not copy.collaborators.exists()


def test_a_viewer_cannot_redraw_preview_or_reword(client, draft, django_user_model):
    from survey.models import Role

    viewer = django_user_model.objects.create_user("viewer", password="viewer-password-1")
    draft.share_with(viewer, Role.VIEWER)
    client.force_login(viewer)
    question = draft.questions.first()
    for path in (
        "/question-form/?prefix=new",
        "/preview/?prefix=new",
        f"/questions/{question.id}/wording/",
        "/closing/",
    ):
        response = client.post(f"/surveys/{draft.id}{path}", {f"q{question.id}-text": "X"})
        assert response.status_code == 404
    question.refresh_from_db()
    assert question.text == "Question 1?"


def test_a_new_question_form_shows_its_design_not_an_error_before_anything_is_typed(
    logged_in, make_survey
):
    survey = make_survey(n_questions=0, status=Survey.Status.DRAFT)
    page = logged_in.get(f"/surveys/{survey.id}/edit/").content.decode()
    assert "Not saved yet" not in page
    new_card = page.split('class="question-card new"', 1)[1]
    assert 'class="preview-epsilon"' in new_card


def test_after_the_first_answer_the_builder_says_a_duplicate_adds_questions(logged_in, make_survey):
    survey = make_survey(n_questions=1)
    assert "data-add-frozen" not in logged_in.get(f"/surveys/{survey.id}/edit/").content.decode()
    record_submission(survey, uuid.uuid4(), {survey.questions.get().id: 1})
    page = logged_in.get(f"/surveys/{survey.id}/edit/").content.decode()
    assert "<h3>Add a question</h3>" not in page
    assert "To ask more, use <strong>Duplicate</strong>" in page
    assert f"/surveys/{survey.id}/duplicate/" in page
