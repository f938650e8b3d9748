from __future__ import annotations

import re
import uuid

import numpy as np
import pytest
from django.urls import reverse

from classroom.views import DEFAULT_QUESTION, MAX_SIMULATED
from responses.write import simulate_respondents
from survey.models import JOIN_CODE_ALPHABET, Survey, new_join_code
from tests.storage import nothing_stored, stored_count, stored_rounds

pytestmark = pytest.mark.django_db


@pytest.fixture
def classroom(make_survey) -> Survey:
    return make_survey(mode=Survey.Mode.CLASSROOM)


@pytest.fixture
def instructor(client, owner):
    client.force_login(owner)
    return client


def submit(client, survey, value=1, submission_id=None):
    body = {
        "submission_id": str(submission_id or uuid.uuid4()),
        "answers": [{"question": q.id, "value": value} for q in survey.questions.all()],
    }
    url = reverse("api-submit", args=[survey.slug])
    return client.post(url, body, content_type="application/json")


def poll(client, survey, **headers):
    return client.get(reverse("classroom:poll", args=[survey.id]), headers=headers)


def bar_width(html: str) -> float:
    return float(re.search(r'data-ci-bar x="[\d.]+" y="\d+" width="([\d.]+)"', html)[1])


def assert_nothing_stored():
    assert nothing_stored()


# Joining


def test_join_codes_have_six_characters_without_look_alikes():
    assert not set("0O1IL") & set(JOIN_CODE_ALPHABET)
    codes = {new_join_code() for _ in range(200)}
    assert all(len(code) == 6 and set(code) <= set(JOIN_CODE_ALPHABET) for code in codes)


def test_a_join_link_leads_to_the_respondent_page(client, classroom):
    response = client.get(f"/j/{classroom.join_code}")
    assert response.status_code == 302
    assert response.url == classroom.get_absolute_url()


def test_the_join_form_forgives_case_spaces_and_dashes(client, classroom):
    typed = f" {classroom.join_code[:3].lower()}-{classroom.join_code[3:].lower()} "
    response = client.get(reverse("classroom:join_form"), {"code": typed})
    assert response.url == classroom.get_absolute_url()


def test_an_unknown_code_is_a_404_that_says_so(client, classroom):
    code = "Z" * 6 if classroom.join_code != "Z" * 6 else "Y" * 6
    response = client.get(f"/j/{code}")
    assert response.status_code == 404
    assert f"No session has the code {code}" in response.content.decode()


def test_a_malformed_code_explains_what_a_code_looks_like(client, classroom):
    response = client.get(reverse("classroom:join_form"), {"code": "0O1"})
    assert response.status_code == 404
    assert "6 letters and digits" in response.content.decode()


def test_the_join_pages_set_no_cookies_and_send_no_referrer(client, classroom):
    for url in (reverse("classroom:join_form"), f"/j/{classroom.join_code}", "/j/XXXXXX"):
        response = client.get(url)
        assert response.cookies == {}
        assert response["Referrer-Policy"] == "no-referrer"


def test_the_home_page_offers_the_join_form_and_the_demo(client, owner):
    page = client.get("/").content.decode()
    assert 'name="code"' in page
    assert reverse("classroom:new") in page
    client.force_login(owner)
    page = client.get("/").content.decode()
    assert 'name="question"' in page and "Start a classroom demo" in page


# One-click demo


def test_one_click_opens_a_classroom_with_the_default_question(instructor, owner):
    response = instructor.post(reverse("classroom:new"))
    survey = Survey.objects.get()
    assert response.url == reverse("classroom:join_screen", args=[survey.id])
    assert (survey.owner, survey.mode, survey.status) == (owner, "classroom", "open")
    question = survey.questions.get()
    assert question.text == DEFAULT_QUESTION
    assert question.epsilon == pytest.approx(np.log(3))


def test_the_instructor_can_ask_their_own_question(instructor):
    instructor.post(reverse("classroom:new"), {"question": "  Have you ever lied to a doctor?  "})
    assert Survey.objects.get().questions.get().text == "Have you ever lied to a doctor?"


def test_a_question_over_500_characters_is_refused_and_nothing_is_stored(instructor):
    response = instructor.post(reverse("classroom:new"), {"question": "x" * 501})
    assert response.status_code == 400
    assert "at most 500 characters" in response.content.decode()
    assert not Survey.objects.exists()


def test_a_logged_out_instructor_is_sent_to_log_in_and_back(client):
    response = client.get(reverse("classroom:new"))
    assert response.url == f"{reverse('login')}?next={reverse('classroom:new')}"
    client.post(reverse("classroom:new"))
    assert not Survey.objects.exists()


# Instructor pages: owner only


def test_the_join_screen_shows_the_code_the_url_and_a_qr_code(instructor, classroom):
    page = instructor.get(reverse("classroom:join_screen", args=[classroom.id])).content.decode()
    assert f">{classroom.join_code}<" in page
    assert f"testserver/j/{classroom.join_code}" in page
    assert "<svg" in page and "QR code for http://testserver/j/" in page


@pytest.mark.parametrize(
    ("method", "name", "extra"),
    [
        ("get", "presenter", []),
        ("get", "join_screen", []),
        ("get", "poll", []),
        ("post", "simulate", []),
        ("post", "control", ["reveal"]),
        ("post", "control", ["new-round"]),
    ],
)
def test_another_instructors_classroom_is_a_404(client, outsider, classroom, method, name, extra):
    client.force_login(outsider)
    url = reverse(f"classroom:{name}", args=[classroom.id, *extra])
    response = getattr(client, method)(url, {"n": 10, "true_rate": 30} if method == "post" else {})
    assert response.status_code == 404
    classroom.refresh_from_db()
    assert (classroom.results_revealed, classroom.current_round) == (False, 1)
    assert_nothing_stored()


def test_a_research_survey_has_no_presenter_view(instructor, make_survey):
    research = make_survey()
    assert instructor.get(reverse("classroom:presenter", args=[research.id])).status_code == 404


def test_results_stay_hidden_until_revealed(client, instructor, classroom):
    for _ in range(3):
        submit(client, classroom)
    page = instructor.get(reverse("classroom:presenter", args=[classroom.id])).content.decode()
    assert "data-count>3<" in page
    assert "data-estimate" not in page and "data-ci-bar" not in page
    assert "Results stay hidden" in page
    instructor.post(reverse("classroom:control", args=[classroom.id, "reveal"]))
    page = poll(instructor, classroom).content.decode()
    assert "data-estimate>100 %<" in page and "data-ci-bar" in page


@pytest.mark.parametrize(
    ("action", "field", "value"),
    [
        ("reveal", "results_revealed", True),
        ("lock", "is_locked", True),
        ("end", "status", "closed"),
    ],
)
def test_each_control_changes_the_session_and_returns_to_the_controls(
    instructor, classroom, action, field, value
):
    response = instructor.post(reverse("classroom:control", args=[classroom.id, action]))
    assert response.url == reverse("classroom:controls", args=[classroom.id])
    classroom.refresh_from_db()
    assert getattr(classroom, field) == value


def test_hide_unlock_and_reopen_undo_reveal_lock_and_end(instructor, classroom):
    for action in ("reveal", "lock", "end", "hide", "unlock", "reopen"):
        instructor.post(reverse("classroom:control", args=[classroom.id, action]))
    classroom.refresh_from_db()
    assert (classroom.results_revealed, classroom.is_locked, classroom.status) == (
        False,
        False,
        "open",
    )


def test_the_simulated_true_rate_stays_marked_across_controls(instructor, classroom):
    url = reverse("classroom:control", args=[classroom.id, "reveal"]) + "?true_rate=30"
    response = instructor.post(url)
    assert response.url == reverse("classroom:controls", args=[classroom.id]) + "?true_rate=30"
    page = instructor.get(response.url).content.decode()
    assert f'action="/classroom/{classroom.id}/hide/?true_rate=30"' in page


def test_an_unknown_action_is_a_404_and_changes_nothing(instructor, classroom):
    response = instructor.post(reverse("classroom:control", args=[classroom.id, "explode"]))
    assert response.status_code == 404
    classroom.refresh_from_db()
    assert (classroom.status, classroom.is_locked, classroom.current_round) == ("open", False, 1)


def test_controls_refuse_get(instructor, classroom):
    response = instructor.get(reverse("classroom:control", args=[classroom.id, "lock"]))
    assert response.status_code == 405
    classroom.refresh_from_db()
    assert not classroom.is_locked


def test_locked_answering_refuses_new_answers_and_stores_nothing(client, instructor, classroom):
    instructor.post(reverse("classroom:control", args=[classroom.id, "lock"]))
    response = submit(client, classroom)
    assert response.status_code == 409
    assert "not accepting answers" in response.json()["detail"]
    assert_nothing_stored()
    page = client.get(classroom.get_absolute_url())
    assert page.status_code == 409
    assert "not accepting answers right now" in page.content.decode()


def test_a_new_round_keeps_the_question_and_starts_from_zero(client, instructor, classroom):
    submit(client, classroom)
    instructor.post(reverse("classroom:control", args=[classroom.id, "reveal"]))
    instructor.post(reverse("classroom:control", args=[classroom.id, "new-round"]))
    classroom.refresh_from_db()
    assert (classroom.current_round, classroom.results_revealed) == (2, False)
    assert classroom.questions.count() == 1
    assert "data-count>0<" in poll(instructor, classroom).content.decode()
    submit(client, classroom)
    assert stored_rounds() == [1, 2]


# Polling


def test_the_poll_answers_304_while_nothing_changed(client, instructor, classroom):
    first = poll(instructor, classroom)
    assert first.status_code == 200
    assert first["Cache-Control"] == "private, no-cache"
    again = poll(instructor, classroom, if_none_match=first["ETag"])
    assert (again.status_code, again.content) == (304, b"")
    submit(client, classroom)
    changed = poll(instructor, classroom, if_none_match=first["ETag"])
    assert changed.status_code == 200
    assert changed["ETag"] != first["ETag"]
    assert "data-count>1<" in changed.content.decode()


def test_revealing_changes_the_poll_etag(instructor, classroom):
    etag = poll(instructor, classroom)["ETag"]
    instructor.post(reverse("classroom:control", args=[classroom.id, "reveal"]))
    assert poll(instructor, classroom, if_none_match=etag).status_code == 200


def test_an_unchanged_poll_costs_two_count_queries(
    instructor, classroom, django_assert_max_num_queries
):
    etag = poll(instructor, classroom)["ETag"]
    # session + user + survey + the round's sealed tallies + its current rows, grouped
    with django_assert_max_num_queries(5):
        assert poll(instructor, classroom, if_none_match=etag).status_code == 304


def test_the_poll_is_a_small_fragment(client, instructor, classroom):
    simulate_respondents(classroom, 500, 0.3, np.random.default_rng(1))
    instructor.post(reverse("classroom:control", args=[classroom.id, "reveal"]))
    response = poll(instructor, classroom)
    assert len(response.content) < 4096
    assert b"<html" not in response.content


# Simulation


def test_simulated_students_converge_on_the_true_rate(instructor, classroom):
    response = instructor.post(
        reverse("classroom:simulate", args=[classroom.id]), {"n": MAX_SIMULATED, "true_rate": 30}
    )
    assert response.url == reverse("classroom:controls", args=[classroom.id]) + "?true_rate=30"
    assert stored_count(simulated=True) == MAX_SIMULATED
    assert stored_count(simulated=False) == 0
    from analysis.results import survey_results

    estimate = survey_results(classroom).questions[0].estimate
    # ±5.5 standard errors: fails by chance with probability < 1e-7
    assert abs(estimate.estimate_unbiased - 0.3) < 5.5 * estimate.std_error


def test_the_interval_bar_shrinks_as_n_grows(instructor, classroom):
    rng = np.random.default_rng(7)
    instructor.post(reverse("classroom:control", args=[classroom.id, "reveal"]))
    simulate_respondents(classroom, 50, 0.3, rng)
    small = bar_width(poll(instructor, classroom).content.decode())
    simulate_respondents(classroom, 5000, 0.3, rng)
    page = poll(instructor, classroom).content.decode()
    assert bar_width(page) < small / 5
    assert "5050" in page and "5050 simulated" in page


def test_the_true_rate_is_marked_on_the_bar(instructor, classroom):
    simulate_respondents(classroom, 100, 0.3, np.random.default_rng(3))
    instructor.post(reverse("classroom:control", args=[classroom.id, "reveal"]))
    page = instructor.get(reverse("classroom:presenter", args=[classroom.id]) + "?true_rate=30")
    assert "simulated true rate 30 %" in page.content.decode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"n": 0, "true_rate": 30}, "greater than or equal to 1"),
        ({"n": MAX_SIMULATED + 1, "true_rate": 30}, "less than or equal to"),
        ({"n": 10, "true_rate": 101}, "less than or equal to 100"),
        ({"n": 10, "true_rate": -1}, "greater than or equal to 0"),
        ({"n": "many", "true_rate": 30}, "Enter a whole number"),
        ({"n": 10}, "This field is required"),
    ],
)
def test_a_bad_simulation_is_refused_with_a_clear_error_and_stores_nothing(
    instructor, classroom, data, message
):
    response = instructor.post(reverse("classroom:simulate", args=[classroom.id]), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert_nothing_stored()


def test_an_ended_session_cannot_simulate(instructor, classroom):
    classroom.close()
    response = instructor.post(
        reverse("classroom:simulate", args=[classroom.id]), {"n": 10, "true_rate": 30}
    )
    assert response.status_code == 400
    assert "This session has ended" in response.content.decode()
    assert_nothing_stored()


# The student's phone


def status(client, survey, **headers):
    return client.get(reverse("classroom:student_status", args=[survey.slug]), headers=headers)


def test_the_student_page_carries_the_classroom_status(client, classroom, make_survey):
    page = client.get(classroom.get_absolute_url()).content.decode()
    assert "data-classroom-status" in page and "classroom/student" in page
    research = make_survey()
    assert "data-classroom-status" not in client.get(research.get_absolute_url()).content.decode()


def test_students_see_the_class_result_only_after_reveal(client, classroom):
    for value in (1, 1, 0):
        submit(client, classroom, value)
    hidden = status(client, classroom).content.decode()
    assert "data-class-result" not in hidden and "%" not in hidden
    classroom.reveal()
    shown = status(client, classroom).content.decode()
    assert "data-class-result" in shown and "from 3 answers" in shown


def test_students_are_told_when_answering_is_locked_or_ended(client, classroom):
    classroom.lock()
    assert "Answering is locked" in status(client, classroom).content.decode()
    classroom.close()
    assert "This session has ended" in status(client, classroom).content.decode()


def test_the_student_status_is_cheap_cookie_free_and_cacheable(client, classroom):
    first = status(client, classroom)
    assert first.cookies == {} and first["Referrer-Policy"] == "no-referrer"
    again = status(client, classroom, if_none_match=first["ETag"])
    assert again.status_code == 304
    classroom.new_round()
    assert status(client, classroom, if_none_match=first["ETag"]).status_code == 200


def test_the_student_status_hides_counts_before_reveal(client, classroom):
    etag = status(client, classroom)["ETag"]
    submit(client, classroom)
    assert status(client, classroom, if_none_match=etag).status_code == 304


def test_the_revealed_status_is_computed_once_per_freshness_window(
    client, classroom, django_assert_num_queries
):
    submit(client, classroom)
    classroom.reveal()
    etag = status(client, classroom)["ETag"]
    submit(client, classroom)
    with django_assert_num_queries(1):  # the survey's state; the fragment comes from the cache
        assert status(client, classroom, if_none_match=etag).status_code == 304


def test_a_research_survey_has_no_student_status(client, survey):
    assert status(client, survey).status_code == 404


# The explain panel


def test_the_explain_page_teaches_the_lecture_notes(client, classroom):
    page = client.get(reverse("classroom:explain"), {"s": classroom.slug}).content.decode()
    for fact in ("¼ + q/2", "q = 2 · E[p] − ½", "ε = ln 3", "3 times", "ln 9", "post-processing"):
        assert fact in page
    # the adversary's posterior with a 50 % prior after a "yes" is 75 % (3:1 odds)
    assert "<tr><td>50 %</td><td>75 %</td><td>25 %</td></tr>" in page
    assert 'data-yes1="0.75" data-yes0="0.25"' in page


def test_the_presenter_has_a_toggleable_explain_panel(instructor, classroom):
    page = instructor.get(reverse("classroom:presenter", args=[classroom.id])).content.decode()
    assert '<details class="explain-panel">' in page and "q = 2 · E[p] − ½" in page


def mirrored(survey: Survey) -> Survey:
    survey.questions.update(design_name="mirrored", design_params={"p": 0.75})
    return survey


def test_the_join_screen_states_the_designs_own_epsilon(instructor, classroom):
    page = instructor.get(reverse("classroom:join_screen", args=[classroom.id])).content.decode()
    assert "ε = 1.10" in page and "3× more likely" in page and "two coins" in page
    mirrored(classroom).questions.update(design_params={"p": 0.9})
    page = instructor.get(reverse("classroom:join_screen", args=[classroom.id])).content.decode()
    assert "ε = 2.20" in page and "9× more likely" in page
    assert "ln 3" not in page and "coins" not in page


def test_the_mirrored_designs_results_speak_of_no_coins(instructor, client, classroom):
    mirrored(classroom)
    for value in (1, 0, 1):
        submit(client, classroom, value)
    classroom.reveal()
    presenter = instructor.get(reverse("classroom:presenter", args=[classroom.id]))
    live = presenter.content.decode().split('id="live"')[1].split("</section>")[0]
    status = client.get(reverse("classroom:student_status", args=[classroom.slug])).content
    for text in (live, status.decode()):
        assert "randomization included" in text and "coins" not in text


def test_the_simulated_true_rate_is_kept_with_the_session(instructor, classroom):
    instructor.post(reverse("classroom:simulate", args=[classroom.id]), {"n": 50, "true_rate": 40})
    classroom.reveal()
    for url in (
        reverse("classroom:presenter", args=[classroom.id]),
        reverse("classroom:poll", args=[classroom.id]),
    ):
        assert "simulated true rate 40 %" in instructor.get(url).content.decode()


def test_the_status_fragment_says_whether_answering_is_open(client, classroom):
    url = reverse("classroom:student_status", args=[classroom.slug])
    assert 'data-open="1"' in client.get(url).content.decode()
    classroom.lock()
    assert 'data-open="0"' in client.get(url).content.decode()


def test_a_page_opened_while_locked_polls_the_status_to_come_back(client, classroom):
    classroom.lock()
    page = client.get(classroom.get_absolute_url()).content.decode()
    assert "not accepting answers right now" in page
    assert reverse("classroom:student_status", args=[classroom.slug]) in page


def test_the_projector_has_no_controls_and_the_controls_page_has_them(instructor, classroom):
    page = instructor.get(reverse("classroom:presenter", args=[classroom.id])).content.decode()
    assert 'aria-label="Session controls"' not in page and "/reveal/" not in page
    assert "/simulate/" not in page
    controls = instructor.get(reverse("classroom:controls", args=[classroom.id]))
    body = controls.content.decode()
    for label in ("Reveal results", "Lock answering", "New round", "End session", "Simulate"):
        assert label in body
    assert "Use your phone as the remote" in body


def test_the_controls_check_ownership(client, outsider, classroom):
    client.force_login(outsider)
    assert client.get(reverse("classroom:controls", args=[classroom.id])).status_code == 404


def test_the_controls_show_the_code_the_answers_and_confirm_the_end(client, instructor, classroom):
    for _ in range(3):
        submit(client, classroom)
    body = instructor.get(reverse("classroom:controls", args=[classroom.id])).content.decode()
    assert f"join with code <strong>{classroom.join_code}</strong>" in body
    assert "<strong data-answers>3</strong> answers this round" in body
    # Ending needs a second, explicit press: the first only opens the confirmation.
    assert "End session…</summary>" in body and "Yes, end the session" in body
    assert 'hx-select="#answer-count"' in body


def test_simulating_says_what_it_added(instructor, classroom):
    url = reverse("classroom:simulate", args=[classroom.id])
    response = instructor.post(url, {"n": 40, "true_rate": 30}, follow=True)
    body = response.content.decode()
    assert "Added 40 simulated students to round 1." in body
    assert "<strong data-answers>40</strong> answers this round (40 simulated)" in body


def test_the_projector_lists_its_keys_for_an_editor(instructor, classroom):
    page = instructor.get(reverse("classroom:presenter", args=[classroom.id])).content.decode()
    assert "<kbd>R</kbd> reveal/hide" in page and "<kbd>L</kbd> lock/unlock" in page
    instructor.post(reverse("classroom:control", args=[classroom.id, "toggle-reveal"]))
    instructor.post(reverse("classroom:control", args=[classroom.id, "toggle-lock"]))
    classroom.refresh_from_db()
    assert classroom.results_revealed and classroom.is_locked
