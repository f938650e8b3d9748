"""The lessons' pages: who may see and steer them, what students can send, and that the
polled fragments stay cheap (304) until something changes."""

from __future__ import annotations

import math

import pytest
from django.urls import reverse

from classroom import lessons
from classroom.models import Action, Lesson, new_classroom_survey
from estimator import lessons as maths
from responses.write import bulk_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def instructor(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def make_lesson(owner):
    def make(kind=Lesson.Kind.DIFFERENCING, **fields) -> Lesson:
        return Lesson.objects.create(owner=owner, kind=kind, seed=7, **fields)

    return make


def remote_post(client, lesson, action, data=None):
    return client.post(reverse("classroom:remote_action", args=[lesson.remote_token, action]), data)


def send(client, lesson, choice="query"):
    return client.post(lesson.get_absolute_url(), {"choice": choice})


def live(client, lesson, **headers):
    return client.get(reverse("classroom:lesson_student_live", args=[lesson.slug]), headers=headers)


@pytest.mark.parametrize("kind", Lesson.Kind.values)
def test_starting_a_lesson_lands_on_its_remote(instructor, owner, kind):
    response = instructor.post(reverse("classroom:lesson_start", args=[kind]))
    lesson = Lesson.objects.get()
    assert (lesson.owner, lesson.kind) == (owner, kind)
    assert response.url == reverse("classroom:remote", args=[lesson.remote_token])
    page = instructor.get(response.url).content.decode()
    assert lesson.join_code in page and "Open the projector view" in page


def test_an_unknown_lesson_kind_is_a_404_and_creates_nothing(instructor):
    assert instructor.post("/classroom/lessons/start/astrology/").status_code == 404
    assert not Lesson.objects.exists()


def test_starting_needs_a_login(client):
    response = client.post(reverse("classroom:lesson_start", args=["laplace"]))
    assert response.status_code == 302 and "login" in response.url
    assert not Lesson.objects.exists()


def test_it_checks_ownership(client, outsider, make_lesson):
    lesson = make_lesson()
    client.force_login(outsider)
    for name in ("lesson_projector", "lesson_projector_live", "lesson_control"):
        assert client.get(reverse(f"classroom:{name}", args=[lesson.id])).status_code == 404


def test_the_owner_sees_the_projector_without_controls(instructor, make_lesson):
    lesson = make_lesson()
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert str(lesson.seed) in page and lesson.join_code in page
    # No visible control and never the remote's link: only the hidden forms of the keys.
    assert "<button" not in page and lesson.remote_token not in page
    assert "<kbd>R</kbd> reveal/hide" in page and "<kbd>N</kbd> new round" in page


def test_the_projector_keys_steer_the_lesson_for_its_owner_only(
    instructor, client, outsider, make_lesson
):
    lesson = make_lesson()
    for action, expected in [
        ("toggle-reveal", (0, True, False)),
        ("toggle-lock", (0, True, True)),
        ("next", (1, False, False)),
        ("toggle-reveal", (1, True, False)),
        ("previous", (0, False, False)),
    ]:
        response = instructor.post(reverse("classroom:lesson_key", args=[lesson.id, action]))
        assert response.status_code == 204
        lesson.refresh_from_db()
        assert (lesson.step, lesson.revealed, lesson.is_locked) == expected, action
    assert (
        instructor.post(reverse("classroom:lesson_key", args=[lesson.id, "epsilon"])).status_code
        == 404
    )
    client.force_login(outsider)
    assert client.post(reverse("classroom:lesson_key", args=[lesson.id, "next"])).status_code == 404
    lesson.refresh_from_db()
    assert lesson.step == 0


def test_the_remote_updates_live_and_is_304_while_nothing_changed(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.LAPLACE)
    url = reverse("classroom:remote_live", args=[lesson.remote_token])
    first = client.get(url)
    assert "data-sent-count>0<" in first.content.decode()
    assert client.get(url, headers={"If-None-Match": first["ETag"]}).status_code == 304
    send(client, lesson)
    send(client, lesson)
    changed = client.get(url, headers={"If-None-Match": first["ETag"]})
    page = changed.content.decode()
    assert changed.status_code == 200 and "data-sent-count>2<" in page
    assert "budget ε 2.00 / 5.00" in page
    remote_post(client, lesson, "lock")
    assert "Answering locked" in client.get(url).content.decode()
    assert client.get(reverse("classroom:remote_live", args=["nope"])).status_code == 404


@pytest.mark.parametrize(
    ("kind", "step", "shows_epsilon"),
    [
        (Lesson.Kind.DIFFERENCING, 0, False),
        (Lesson.Kind.DIFFERENCING, 1, True),
        (Lesson.Kind.LINKAGE, 0, False),
        (Lesson.Kind.LINKAGE, 2, False),
        (Lesson.Kind.LAPLACE, 0, True),
    ],
)
def test_the_epsilon_pill_shows_only_where_noise_is_added(
    instructor, make_lesson, kind, step, shows_epsilon
):
    lesson = make_lesson(kind=kind, step=step)
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert ("data-epsilon-pill" in page) == shows_epsilon


def test_the_control_link_redirects_the_owner_to_the_remote(instructor, make_lesson):
    lesson = make_lesson()
    response = instructor.get(reverse("classroom:lesson_control", args=[lesson.id]))
    assert response.url == reverse("classroom:remote", args=[lesson.remote_token])


def test_a_wrong_remote_token_is_a_404(client, make_lesson):
    make_lesson()
    assert client.get(reverse("classroom:remote", args=["nope"])).status_code == 404
    assert client.post(reverse("classroom:remote_action", args=["nope", "lock"])).status_code == 404


def test_the_remote_works_without_a_login(client, make_lesson):
    lesson = make_lesson()
    assert client.get(reverse("classroom:remote", args=[lesson.remote_token])).status_code == 200
    for action, field, value in [
        ("lock", "is_locked", True),
        ("unlock", "is_locked", False),
        ("reveal", "revealed", True),
        ("next", "step", 1),
        ("next", "step", 1),  # the last step stays the last
        ("previous", "step", 0),
    ]:
        assert remote_post(client, lesson, action).status_code == 302
        lesson.refresh_from_db()
        assert getattr(lesson, field) == value, action


def test_a_new_round_starts_over_and_new_data_changes_the_seed(client, make_lesson):
    lesson = make_lesson(step=1, revealed=True, is_locked=True)
    remote_post(client, lesson, "new-round")
    lesson.refresh_from_db()
    assert (lesson.round, lesson.step, lesson.revealed, lesson.is_locked) == (2, 0, False, False)
    remote_post(client, lesson, "new-data")
    lesson.refresh_from_db()
    assert (lesson.seed, lesson.round) == (8, 3)


def test_an_unknown_remote_action_is_a_404(client, make_lesson):
    lesson = make_lesson()
    assert remote_post(client, lesson, "explode").status_code == 404


def test_epsilon_is_set_by_the_sliders_notches_and_a_bad_one_changes_nothing(client, make_lesson):
    lesson = make_lesson()
    page = client.get(reverse("classroom:remote", args=[lesson.remote_token])).content.decode()
    assert 'type="range"' in page and 'value="4"' in page  # ε = 1 is the fifth notch
    remote_post(client, lesson, "epsilon", {"notch": "2"})
    lesson.refresh_from_db()
    assert lesson.epsilon == 0.25
    response = remote_post(client, lesson, "epsilon", {"notch": "7"})
    assert response.status_code == 400 and "less than or equal to 6" in response.content.decode()
    lesson.refresh_from_db()
    assert lesson.epsilon == 0.25


def test_generalizing_the_table_raises_k(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.LINKAGE, step=1)
    form = {"postcode_digits": 2, "year_width": 10, "suppress_below": 2}
    assert remote_post(client, lesson, "generalize", form).status_code == 302
    lesson.refresh_from_db()
    assert (lesson.postcode_digits, lesson.year_width, lesson.keep_sex) == (2, 10, False)
    data = maths.clinic(lesson.seed)
    rows = lesson.generalization.release(data.people)
    k = maths.k_anonymity([key for key, _ in rows])
    assert k >= 2
    page = client.get(lesson.get_absolute_url())
    assert page.status_code == 200
    remote = client.get(reverse("classroom:remote", args=[lesson.remote_token])).content.decode()
    assert f"k = {k}" in remote


def test_a_bad_generalization_is_refused_and_nothing_changes(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.LINKAGE, step=1)
    response = remote_post(client, lesson, "generalize", {"postcode_digits": 9, "year_width": 3})
    assert response.status_code == 400
    assert "Postcode digits kept" in response.content.decode()
    lesson.refresh_from_db()
    assert (lesson.postcode_digits, lesson.year_width) == (4, 1)


# Students


def test_the_join_code_leads_to_the_lesson(client, make_lesson):
    lesson = make_lesson()
    response = client.get(f"/j/{lesson.join_code.lower()}")
    assert response.url == lesson.get_absolute_url()


def test_a_guess_is_stored_for_the_current_round_and_step(client, make_lesson):
    lesson = make_lesson()
    response = send(client, lesson, "Has the condition")
    assert response.status_code == 200 and "Sent: Has the condition" in response.content.decode()
    action = Action.objects.get()
    assert (action.kind, action.round, action.step, action.choice) == (
        "guess",
        1,
        0,
        "Has the condition",
    )


def test_a_choice_that_is_not_offered_is_refused_and_nothing_stored(client, make_lesson):
    lesson = make_lesson()
    response = send(client, lesson, "<script>")
    assert response.status_code == 400 and "Choose one of the options" in response.content.decode()
    assert not Action.objects.exists()


@pytest.mark.parametrize("kind", Lesson.Kind.values)
def test_sending_while_locked_is_refused_says_so_and_stores_nothing(client, make_lesson, kind):
    lesson = make_lesson(kind=kind, is_locked=True)
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert "Answering is locked" in page and "<fieldset disabled>" in page
    response = send(client, lesson, "Cryptography")
    assert response.status_code == 409
    body = response.content.decode()
    assert "nothing was sent" in body and "Sent:" not in body and "database answered" not in body
    assert not Action.objects.exists()


def test_a_noisy_query_costs_epsilon_until_the_budget_is_spent(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.LAPLACE, epsilon=2.0, budget=5.0)
    for _ in range(2):
        response = send(client, lesson)
        assert response.status_code == 200 and "The database answered" in response.content.decode()
    assert lesson.spent() == 4.0
    response = send(client, lesson)
    assert response.status_code == 409 and "spent its budget" in response.content.decode()
    assert Action.objects.count() == 2
    remote_post(client, lesson, "new-round")
    lesson.refresh_from_db()
    assert lesson.spent() == 0 and send(client, lesson).status_code == 200


def test_noisy_answers_scatter_around_the_true_count(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.LAPLACE, epsilon=1.0, budget=1000)
    for _ in range(40):
        send(client, lesson)
    values = list(Action.objects.values_list("value", flat=True))
    true = maths.hospital(7).total
    assert len(set(values)) == 40
    # |mean − true| of 40 Lap(1) draws: sd = √2/√40 ≈ 0.22; 1.5 is > 6 sd.
    assert abs(sum(values) / 40 - true) < 1.5


def test_votes_and_private_picks(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.EXPONENTIAL, epsilon=4.0)
    for choice in ["Cryptography"] * 5 + ["Synthetic data"]:
        assert send(client, lesson, choice).status_code == 200
    remote_post(client, lesson, "next")
    remote_post(client, lesson, "pick")
    lesson.refresh_from_db()
    assert lesson.last_pick in {
        "Cryptography",
        "Synthetic data",
        "Fairness in ML",
        "Data protection law",
    }
    assert Action.objects.filter(kind="pick").count() == 1
    remote_post(client, lesson, "reveal")
    assert lesson.last_pick in client.get(lesson.get_absolute_url()).content.decode()


# Live fragments


def test_the_student_fragment_is_304_until_the_instructor_changes_something(client, make_lesson):
    lesson = make_lesson()
    first = live(client, lesson)
    etag = first["ETag"]
    assert first.status_code == 200 and "Cache-Control" in first
    assert live(client, lesson, if_none_match=etag).status_code == 304
    send(client, lesson, "Does not")  # answers do not change what phones show
    assert live(client, lesson, if_none_match=etag).status_code == 304
    for action in ("lock", "unlock", "reveal", "next", "new-round"):
        remote_post(client, lesson, action)
        response = live(client, lesson, if_none_match=etag)
        assert response.status_code == 200, action
        etag = response["ETag"]
    locked = (remote_post(client, lesson, "lock"), live(client, lesson))[1].content.decode()
    assert "Answering is locked" in locked


def test_the_projector_fragment_changes_with_each_answer(instructor, make_lesson):
    lesson = make_lesson()
    url = reverse("classroom:lesson_projector_live", args=[lesson.id])
    etag = instructor.get(url)["ETag"]
    assert instructor.get(url, headers={"if-none-match": etag}).status_code == 304
    send(instructor, lesson, "Does not")
    response = instructor.get(url, headers={"if-none-match": etag})
    assert (
        response.status_code == 200
        and "Answers so far: <strong>1</strong>" in response.content.decode()
    )


def test_the_differencing_reveal_shows_the_recovered_value(instructor, make_lesson):
    lesson = make_lesson(revealed=True)
    attack = maths.hospital(7)
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert f"{attack.total} − {attack.younger} = {attack.recovered}" in page
    lesson.go(step=1)
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert "data-posterior" in page and "e<sup>2ε</sup>" in page


def test_the_linkage_reveal_triangulates_the_target(instructor, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.LINKAGE, step=2, revealed=True)
    data = maths.clinic(7)
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert f"<strong data-found>{data.target.diagnosis}</strong>" in page


def test_the_error_chart_grows_to_the_current_epsilon_or_says_it_is_clipped(
    instructor, make_lesson
):
    lesson = make_lesson(kind=Lesson.Kind.LAPLACE, step=1, epsilon=1.0)
    url = reverse("classroom:lesson_projector", args=[lesson.id])
    page = instructor.get(url).content.decode()
    # At ε = 1 the axis stops at 12 and says what lies above: at ε = 0.05 the mean is 20.
    assert "The axis stops at 12: at ε = 0.05 the mean error is 20 and 95 % lie within 60" in page
    lesson.go(epsilon=0.05)
    page = instructor.get(url).content.decode()
    # At ε = 0.05 the axis reaches the 95 % error (about 60): nothing is clipped.
    assert "data-error-clipped" not in page
    assert '<text class="tick-label" x="40" y="25.0" text-anchor="end">60</text>' in page


def test_the_phones_see_the_class_budget_drain(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.LAPLACE, epsilon=1.0)
    etag = live(client, lesson)["ETag"]
    response = send(client, lesson)
    assert "ε 1.00 of 5.00 spent" in response.content.decode()
    updated = live(client, lesson, if_none_match=etag)
    assert updated.status_code == 200 and "ε 1.00 of 5.00 spent" in updated.content.decode()


def test_suppressing_every_row_shows_an_empty_release(client, make_lesson, instructor):
    lesson = make_lesson(kind=Lesson.Kind.LINKAGE, step=1, revealed=True)
    form = {"postcode_digits": 4, "year_width": 1, "keep_sex": "on", "suppress_below": 10}
    remote_post(client, lesson, "generalize", form)
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert "k = 0" in page and "16 rows suppressed" in page


@pytest.mark.parametrize("seed", range(0, 60, 7))
def test_every_step_of_every_lesson_renders_for_many_seeds(instructor, owner, seed):
    for kind in Lesson.Kind.values:
        lesson = Lesson.objects.create(owner=owner, kind=kind, seed=seed, revealed=True)
        for step in range(len(lesson.steps)):
            lesson.go(step=step)
            url = reverse("classroom:lesson_projector", args=[lesson.id])
            assert instructor.get(url).status_code == 200
            assert instructor.get(lesson.get_absolute_url()).status_code == 200


def test_each_phone_sends_its_classmates_secret_with_local_noise(client, make_lesson, instructor):
    lesson = make_lesson(kind=Lesson.Kind.LOCAL, epsilon=1.0)
    mates = maths.classmates(lesson.seed)
    for _ in range(3):
        response = send(client, lesson, "send")
        assert response.status_code == 200
        assert b"data-my-report" in response.content
    reports = list(lesson.actions.order_by("id").values_list("choice", "value", "epsilon"))
    assert [int(c) for c, _, _ in reports] == [mates.secret(i) for i in range(3)]
    # What the collector stores is noisy, not the secret itself.
    assert all(v != int(c) for c, v, _ in reports) and {e for *_, e in reports} == {1.0}
    lesson.go(revealed=True)
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert f"data-true-count>{sum(mates.secret(i) for i in range(3))}<" in page
    assert "data-ratio>1.7×" in page  # √3


def test_the_size_chart_says_how_many_respondents_each_model_needs(client, make_lesson, instructor):
    lesson = make_lesson(kind=Lesson.Kind.LOCAL, epsilon=1.0, step=1)
    assert remote_post(client, lesson, "simulate-phones").status_code == 302
    assert lesson.actions.count() == 20
    context = lessons.lesson_context(lesson)
    assert context["ratio"] == pytest.approx(20**0.5)
    assert context["needed"] == {
        m: maths.respondents_needed(1.0, 0.05, m) for m in ("central", "local", "randomized")
    }
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert "data-needed" in page and "data-class-size" in page
    assert f"<td>{context['needed']['local']}</td>" in page


def test_only_the_local_lesson_simulates_phones(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.LAPLACE)
    response = remote_post(client, lesson, "simulate-phones")
    assert response.status_code == 400 and b"Only the local" in response.content
    assert not lesson.actions.exists()


def test_a_phone_asks_both_databases_and_delta_moves_sigma(client, make_lesson, instructor):
    lesson = make_lesson(kind=Lesson.Kind.GAUSSIAN, epsilon=1.0)
    response = send(client, lesson)
    assert response.status_code == 200 and b"data-my-answers" in response.content
    assert sorted(lesson.actions.values_list("choice", flat=True)) == ["approximate", "pure"]
    projector = reverse("classroom:lesson_projector", args=[lesson.id])
    sigma = maths.gaussian_sigma(1.0, 1e-5)
    assert f"data-sigma>{sigma:.2f}<" in instructor.get(projector).content.decode()
    assert remote_post(client, lesson, "delta", {"notch": 1}).status_code == 302
    lesson.refresh_from_db()
    assert lesson.delta == 0.01
    sigma = maths.gaussian_sigma(1.0, 0.01)
    assert f"data-sigma>{sigma:.2f}<" in instructor.get(projector).content.decode()


def test_a_bad_delta_is_refused_and_nothing_changes(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.GAUSSIAN)
    response = remote_post(client, lesson, "delta", {"notch": 99})
    assert response.status_code == 400
    assert "Ensure this value is less than or equal to 5" in response.content.decode()
    lesson.refresh_from_db()
    assert lesson.delta == 1e-5


def test_what_delta_permits_shows_the_people_exposed(instructor, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.GAUSSIAN, step=1, delta=0.01)
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert "data-exposed" in page and "data-delta-marker" in page
    assert "<td>0.24</td>" in page  # 24 patients × δ = 0.01


def test_each_phone_asks_the_holdout_about_a_bigger_model(client, make_lesson, instructor):
    lesson = make_lesson(kind=Lesson.Kind.HOLDOUT)
    naive = maths.holdout_analysis(lesson.seed, queries=lessons.HOLDOUT_QUERIES).naive
    for i in range(2):
        response = send(client, lesson)
        assert response.status_code == 200 and b"data-my-holdout" in response.content
        assert f"With {naive.sizes[i]} features" in response.content.decode()
    assert list(lesson.actions.values_list("choice", "value")) == [
        (str(naive.sizes[i]), naive.reported[i]) for i in range(2)
    ]
    projector = reverse("classroom:lesson_projector", args=[lesson.id])
    page = instructor.get(projector).content.decode()
    assert "data-asked>2<" in page and 'data-line="fresh"' not in page
    assert "data-fresh>?<" in page  # fresh data only once revealed
    lesson.go(revealed=True)
    page = instructor.get(projector).content.decode()
    assert 'data-line="fresh"' in page and "overfitted by reuse" in page
    assert f"data-fresh>{100 * naive.fresh[1]:.1f} %<" in page


def test_thresholdout_answers_in_the_next_step_beside_the_direct_reuse(
    client, make_lesson, instructor
):
    lesson = make_lesson(kind=Lesson.Kind.HOLDOUT, step=1, revealed=True)
    assert remote_post(client, lesson, "simulate-phones").status_code == 302
    guarded = maths.holdout_analysis(lesson.seed, queries=lessons.HOLDOUT_QUERIES).thresholdout
    values = list(lesson.actions.values_list("value", flat=True))
    assert values == list(guarded.reported[:5])
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert 'data-line="naive"' in page and "reusable" in page
    assert f"answers {guarded.over_threshold} of the analysis" in page


def test_the_holdout_analysis_stops_after_its_last_query(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.HOLDOUT)
    for _ in range(4):
        remote_post(client, lesson, "simulate-phones")
    assert lesson.actions.count() == lessons.HOLDOUT_QUERIES
    response = send(client, lesson)
    assert response.status_code == 409
    assert "asked all its questions" in response.content.decode()
    assert lesson.actions.count() == lessons.HOLDOUT_QUERIES


def test_the_holdout_lesson_has_no_epsilon(instructor, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.HOLDOUT)
    remote = instructor.get(reverse("classroom:remote", args=[lesson.remote_token])).content
    assert "Set ε" not in remote.decode() and "Run 5 more queries" in remote.decode()
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert "data-epsilon-pill" not in page


def test_the_class_spots_disclosures_in_the_clinic_table(client, make_lesson, instructor):
    lesson = make_lesson(kind=Lesson.Kind.DISCLOSURE)
    assert send(client, lesson, "Identity").status_code == 200
    assert send(client, lesson, "Nobody").status_code == 400
    assert list(lesson.actions.values_list("choice", flat=True)) == ["Identity"]
    found = maths.disclosures(maths.publish(maths.clinic_table(lesson.seed)))
    projector = reverse("classroom:lesson_projector", args=[lesson.id])
    page = instructor.get(projector).content.decode()
    assert f"data-identity>{len(found['identity'])}<" in page and "mark-identity" not in page
    lesson.go(revealed=True)
    assert 'class="mark mark-identity"' in instructor.get(projector).content.decode()


def test_the_remote_applies_the_ons_practices_one_by_one(client, make_lesson, instructor):
    lesson = make_lesson(kind=Lesson.Kind.DISCLOSURE, step=1)
    groups = maths.clinic_table(lesson.seed)
    projector = reverse("classroom:lesson_projector", args=[lesson.id])
    assert remote_post(client, lesson, "practices", {"practices": ["suppress"]}).status_code == 302
    lesson.refresh_from_db()
    assert lesson.practices == ["suppress"]
    alone = maths.disclosures(maths.publish(groups, suppressed=True))
    page = instructor.get(projector).content.decode()
    assert f"data-identity>{len(alone['identity'])}<" in page and "c+" in page
    data = {"practices": ["round", "collapse", "suppress"]}
    assert remote_post(client, lesson, "practices", data).status_code == 302
    page = instructor.get(projector).content.decode()
    assert "data-identity>0<" in page and "16–49" in page and "35–49" not in page
    # The phones vote for the next practice.
    assert send(client, lesson, "Round to base 5").status_code == 200


def test_an_unknown_practice_is_refused_and_nothing_changes(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.DISCLOSURE, step=1, practices=["round"])
    response = remote_post(client, lesson, "practices", {"practices": ["shred"]})
    assert response.status_code == 400
    assert "Select a valid choice. shred is not one of the available choices." in (
        response.content.decode()
    )
    lesson.refresh_from_db()
    assert lesson.practices == ["round"]


def test_the_practices_only_apply_in_their_step(instructor, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.DISCLOSURE, practices=["round", "suppress"])
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert "c+" not in page  # step 1 shows the exact table


def test_the_sparse_linkage_says_how_many_ratings_single_out_a_record(
    client, make_lesson, instructor
):
    lesson = make_lesson(kind=Lesson.Kind.DISCLOSURE, step=2)
    assert send(client, lesson, "3").status_code == 200
    counts = maths.ratings(lesson.seed).candidates_by_known(6)
    projector = reverse("classroom:lesson_projector", args=[lesson.id])
    assert "data-singled" not in instructor.get(projector).content.decode()
    lesson.go(revealed=True)
    page = instructor.get(projector).content.decode()
    assert f"data-singled>{counts.index(1) + 1}<" in page
    assert f'<span class="tally-n">{counts[0]}</span>' in page


def reports(lesson, yes: int, no: int) -> None:
    """Randomized reports as the phones send them (what the server stores)."""
    question = lesson.survey.questions.get()
    bulk_record(lesson.survey, [{question.id: 1}] * yes + [{question.id: 0}] * no, simulated=False)


def test_an_attack_lesson_brings_its_own_question_asked_with_coins(instructor, owner):
    response = instructor.post(reverse("classroom:lesson_start", args=["attack"]))
    lesson = Lesson.objects.get()
    question = lesson.survey.questions.get()
    assert (question.design_name, question.design.epsilon) == (
        "forced_response",
        pytest.approx(math.log(3)),
    )
    assert lesson.survey.mode == "classroom" and lesson.survey.owner == owner
    page = instructor.get(lesson.get_absolute_url()).content.decode()
    assert f'href="{lesson.survey.get_absolute_url()}"' in page
    # The lesson's question is not a lone demo of its own on the classroom page.
    classroom = instructor.get("/classroom/new/")
    assert lesson.survey not in classroom.context["single_questions"]
    assert response.status_code == 302


def test_a_question_page_in_class_has_one_visible_heading_naming_where_it_is(
    client, make_lesson, owner
):
    """The survey's title repeats the question, so in class the page's one <h1> names the
    lesson instead (or says it is a question for the class) rather than being hidden."""
    lesson = make_lesson(kind=Lesson.Kind.ATTACK)
    german = client.get(lesson.survey.get_absolute_url(), headers={"accept-language": "de"})
    html = german.content.decode()
    assert html.count("<h1") == 1
    assert '<h1 class="class-heading">Greifen Sie Ihren eigenen Kurs an</h1>' in html
    demo = new_classroom_survey(owner, "Have you ever skipped a lecture?")
    html = client.get(demo.get_absolute_url()).content.decode()
    assert (
        html.count("<h1") == 1 and '<h1 class="class-heading">A question for the class</h1>' in html
    )


def test_lock_and_new_round_reach_the_phones_answering_the_question(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.ATTACK)
    remote_post(client, lesson, "lock")
    lesson.survey.refresh_from_db()
    assert lesson.survey.is_locked
    remote_post(client, lesson, "unlock")
    remote_post(client, lesson, "new-round")
    lesson.survey.refresh_from_db()
    assert not lesson.survey.is_locked and lesson.survey.current_round == 2


def test_a_phone_on_the_question_goes_back_to_the_lesson_after_answering(client, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.ATTACK)
    status = reverse("classroom:student_status", args=[lesson.survey.slug])
    assert "data-current" not in client.get(status).content.decode()
    lesson.go(step=1)
    assert f'data-current="{lesson.get_absolute_url()}"' in client.get(status).content.decode()


def test_differencing_the_class_reports_gives_a_report_never_an_answer(
    client, make_lesson, instructor
):
    lesson = make_lesson(kind=Lesson.Kind.ATTACK, step=1)
    reports(lesson, yes=3, no=5)
    context = lessons.lesson_context(lesson)
    assert (context["yes"], context["n_reports"]) == (3, 8)
    assert context["yes"] - context["without"] == context["report"]
    assert context["belief"] == pytest.approx(0.75 if context["report"] else 0.25)
    assert send(client, lesson, "A little").status_code == 200
    projector = reverse("classroom:lesson_projector", args=[lesson.id])
    assert "data-x-report>?<" in instructor.get(projector).content.decode()
    lesson.go(revealed=True)
    page = instructor.get(projector).content.decode()
    assert f"data-belief>{100 * context['belief']:.1f} %<" in page and "ln 3" in page


def test_averaging_repeated_answers_learns_nothing_from_the_memo(instructor, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.ATTACK, step=2, revealed=True)
    memo, fresh = maths.averaging_attack(lesson.seed, 0.75, 0.25, asks=20)
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert f"data-memo-belief>{100 * memo[-1]:.1f} %<" in page
    assert fresh[-1] > 0.9 and 'data-line="fresh"' in page
    assert f"data-fresh-belief>{100 * fresh[-1]:.1f} %<" in page
    lesson.go(seed=9494)  # twenty fresh flips that leave no doubt
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id])).content.decode()
    assert "data-fresh-belief>more than 99.9 %<" in page


def test_an_attack_lesson_whose_question_was_deleted_gets_a_fresh_one(instructor, make_lesson):
    lesson = make_lesson(kind=Lesson.Kind.ATTACK)
    lesson.survey.delete()
    lesson.refresh_from_db()
    assert lesson.survey is None
    page = instructor.get(reverse("classroom:lesson_projector", args=[lesson.id]))
    assert page.status_code == 200
    lesson.refresh_from_db()
    assert lesson.survey.questions.get().text == "Have you ever cheated on an exam?"
