"""The distribution page: a real link with a copy button, QR downloads, a preview link,
and closing rules (a close date and a response quota) that the survey enforces itself."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from responses.fast_path import store_if_accepting
from responses.write import simulate_respondents
from survey.models import Survey
from tests.conftest import CLASSIC
from tests.storage import stored_count

pytestmark = pytest.mark.django_db


def test_the_public_link_is_a_link_with_a_copy_button_and_a_preview(logged_in, survey):
    page = logged_in.get(f"/surveys/{survey.id}/distribute/").content.decode()
    link = f"http://testserver/s/{survey.slug}/"
    assert f'<a class="copy-url" id="public-link" href="{link}">{link}</a>' in page
    assert 'data-copy="public-link"' in page and "survey/copy" in page
    assert f'href="/surveys/{survey.id}/respondent-preview/"' in page


@pytest.mark.parametrize(
    ("fmt", "kind", "magic"), [("svg", "image/svg+xml", b"<?xml"), ("png", "image/png", b"\x89PNG")]
)
def test_the_qr_code_downloads_as_svg_and_png(logged_in, survey, fmt, kind, magic):
    response = logged_in.get(f"/surveys/{survey.id}/qr.{fmt}")
    assert response.status_code == 200
    assert response["Content-Type"] == kind
    assert response.content.startswith(magic)
    assert f'filename="survey-{survey.id}-qr.{fmt}"' in response["Content-Disposition"]


def test_an_unknown_qr_format_and_other_people_get_404(client, logged_in, outsider, survey):
    assert logged_in.get(f"/surveys/{survey.id}/qr.gif").status_code == 404
    client.force_login(outsider)
    assert client.get(f"/surveys/{survey.id}/qr.png").status_code == 404


def closing(client, survey, **data):
    return client.post(f"/surveys/{survey.id}/closing/", data)


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"closes_at": "2000-01-01T10:00"}, "closes_at", "Choose a time in the future"),
        ({"closes_at": "tomorrow"}, "closes_at", "Enter a valid date/time."),
        ({"response_quota": "0"}, "response_quota", "A quota is at least one response."),
        ({"response_quota": "-5"}, "response_quota", "greater than or equal to 0"),
        ({"response_quota": "many"}, "response_quota", "Enter a whole number."),
        (
            {"response_quota": "1000000001"},
            "response_quota",
            "A quota is at most 1,000,000,000 responses.",
        ),
    ],
)
def test_bad_closing_rules_are_shown_beside_the_field_and_not_saved(
    logged_in, survey, data, field, message
):
    response = closing(logged_in, survey, **data)
    page = response.content.decode()
    assert response.status_code == 400
    beside = page.split(f'class="field field-{field} has-error"', 1)[1].split("</div>", 1)[0]
    assert message in beside
    survey.refresh_from_db()
    assert (survey.closes_at, survey.response_quota) == (None, None)


def test_a_survey_closes_itself_at_its_close_date(logged_in, survey):
    later = (timezone.now() + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    assert closing(logged_in, survey, closes_at=later).status_code == 302
    survey.refresh_from_db()
    assert survey.is_accepting
    Survey.objects.filter(pk=survey.pk).update(closes_at=timezone.now() - timedelta(minutes=1))
    question = survey.questions.get()
    # The fast path refuses it before anyone has looked at the survey...
    assert not store_if_accepting(
        survey.id, uuid.uuid4(), {question.id: 1}, design=survey.design_version
    )
    survey.refresh_from_db()
    assert survey.status == "open"
    # ...and the first access closes it for good.
    assert not survey.is_accepting
    survey.refresh_from_db()
    assert survey.status == "closed"
    assert stored_count(survey) == 0
    page = logged_in.get(f"/s/{survey.slug}/")
    assert page.status_code == 409


def test_a_survey_closes_itself_at_its_quota_on_the_fast_path_too(logged_in, survey):
    assert closing(logged_in, survey, response_quota="2").status_code == 302
    survey.refresh_from_db()
    question = survey.questions.get()
    stored = [
        store_if_accepting(survey.id, uuid.uuid4(), {question.id: 1}, design=survey.design_version)
        for _ in range(3)
    ]
    assert stored == [True, True, False]
    assert stored_count(survey) == 2
    assert not survey.is_accepting
    survey.refresh_from_db()
    assert survey.status == "closed"
    page = logged_in.get(f"/surveys/{survey.id}/distribute/").content.decode()
    assert "(now 2 of 2)" in page


def test_simulated_answers_do_not_count_towards_the_quota(survey):
    import numpy as np

    survey.response_quota = 5
    survey.save()
    simulate_respondents(survey, 20, 0.3, np.random.default_rng(1))
    assert survey.is_accepting


def test_a_survey_past_its_close_date_cannot_be_reopened(logged_in, survey):
    Survey.objects.filter(pk=survey.pk).update(
        closes_at=timezone.now() - timedelta(minutes=1), status="closed"
    )
    response = logged_in.post(f"/surveys/{survey.id}/status/", {"action": "open"}, follow=True)
    assert "its close date has passed" in response.content.decode()
    survey.refresh_from_db()
    assert survey.status == "closed"


def test_the_import_help_describes_this_surveys_own_columns(logged_in, owner):
    survey = Survey.objects.create(owner=owner, title="Mixed")
    survey.questions.create(position=0, text="Cheated?", design_params=CLASSIC)
    survey.questions.create(
        position=1, text="Faculty?", kind="choice", options=["Law", "Arts"], design_name="direct"
    )
    survey.questions.create(
        position=2,
        text="Hours?",
        kind="number",
        design_name="laplace",
        design_params={"epsilon": 1.0, "lower": 0, "upper": 10},
    )
    page = logged_in.get(f"/surveys/{survey.id}/distribute/").content.decode()
    table = page.split("data-import-columns", 1)[1].split("</table>", 1)[0]
    assert "1 = yes, 0 = no" in table.split("<code>q2</code>")[0]
    assert "0 = Law, 1 = Arts (the reported option)" in table
    low, high = survey.questions.get(position=2).design.output_description()["min_report"], 10
    assert f"a whole number from {low} to " in table and low < 0 < high
    assert "(1 = yes, 0 = no), optionally" not in page


def test_the_import_help_of_a_number_sent_as_one_bit_says_one_or_zero(logged_in, owner):
    """Once a KeyError (a 500): the help read a number's report range off a one-bit design."""
    survey = Survey.objects.create(owner=owner, title="Hours")
    survey.questions.create(
        position=0,
        text="Hours?",
        kind="number",
        design_name="one_bit",
        design_params={"epsilon": 1.0, "lower": 0, "upper": 10},
    )
    page = logged_in.get(f"/surveys/{survey.id}/distribute/")
    assert page.status_code == 200
    table = page.content.decode().split("data-import-columns", 1)[1].split("</table>", 1)[0]
    assert "1 or 0 (the reported bit" in table and "a whole number" not in table
