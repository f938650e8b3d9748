"""Invites sent by email from *Distribute*, reminders to those whose invite is unused,
and deleting the addresses: through Django's locmem mail backend. Every refusal sends
nothing and stores nothing."""

from __future__ import annotations

import re
import smtplib
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from responses.sealing import seal
from survey.email_invites import MAX_ADDRESSES
from survey.models import AuditEntry, EmailedInvite, Invite, Role, Survey
from tests.storage import stored_count, use_invite
from tests.survey.test_invites import submit

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://\S+/s/(?P<slug>[^/]+)/\?invite=(?P<token>[0-9a-f]+)")


@pytest.fixture(autouse=True)
def email_on(settings):
    settings.EMAIL_ENABLED = True


@pytest.fixture
def invited_survey(make_survey) -> Survey:
    return make_survey(n_questions=2, requires_invite=True)


def send(client, survey: Survey, addresses: str = "", file=None):
    data = {"addresses": addresses} | ({"file": file} if file else {})
    return client.post(reverse("survey:email_send", args=[survey.id]), data)


def remind(client, survey: Survey):
    return client.post(reverse("survey:email_remind", args=[survey.id]))


def token_in(mail) -> str:
    return LINK.search(mail.body)["token"]


def nothing_stored() -> bool:
    return not Invite.objects.exists() and not EmailedInvite.objects.exists()


def audit(survey: Survey) -> list[str]:
    entries = AuditEntry.objects.filter(survey=survey, action=AuditEntry.Action.INVITES)
    return [e.detail for e in reversed(entries)]


def test_each_address_is_mailed_its_own_invite_link(logged_in, invited_survey, mailoutbox):
    pasted = "ana@example.org\n\n  Ben@Example.org ,\nana@example.org\ncy@example.net;\n"
    response = send(logged_in, invited_survey, pasted)
    assert response.status_code == 302
    assert [m.to for m in mailoutbox] == [
        ["ana@example.org"],
        ["ben@example.org"],
        ["cy@example.net"],
    ]
    tokens = [token_in(m) for m in mailoutbox]
    assert len(set(tokens)) == 3
    assert all(LINK.search(m.body)["slug"] == invited_survey.slug for m in mailoutbox)
    assert mailoutbox[0].subject == "Invitation: Exam honesty"
    assert "that you took part — but never what you answered" in mailoutbox[0].body
    assert Invite.objects.filter(survey=invited_survey).count() == 3
    assert sorted(invited_survey.emailed_invites.values_list("address", flat=True)) == [
        "ana@example.org",
        "ben@example.org",
        "cy@example.net",
    ]
    assert audit(invited_survey) == ["invites mailed to 3 addresses"]
    page = logged_in.get(response.url).content.decode()
    assert "Mailed 3 invites." in page
    assert re.search(r"data-emailed-kept>3<", page) and re.search(r"data-emailed-unused>3<", page)


def test_the_mailed_link_opens_the_survey_and_admits_one_response(
    client, logged_in, invited_survey, mailoutbox
):
    send(logged_in, invited_survey, "ana@example.org")
    link = LINK.search(mailoutbox[0].body)[0]
    page = client.get(link)
    assert page.status_code == 200
    assert "data-emailed" in page.content.decode()
    token = token_in(mailoutbox[0])
    assert submit(client, invited_survey, invite=token).status_code == 201
    assert submit(client, invited_survey, invite=token).status_code == 403
    assert stored_count(invited_survey) == 1


def test_a_page_opened_from_a_downloaded_invite_does_not_speak_of_email(client, invited_survey):
    token = Invite.create_batch(invited_survey, 1)[0]
    page = client.get(f"{invited_survey.get_absolute_url()}?invite={token}")
    assert page.status_code == 200 and "data-emailed" not in page.content.decode()


def test_the_mail_and_its_page_speak_the_survey_language(
    client, logged_in, invited_survey, mailoutbox
):
    Survey.objects.filter(pk=invited_survey.pk).update(language="de")
    send(logged_in, invited_survey, "ana@example.org")
    assert mailoutbox[0].subject == "Einladung: Exam honesty"
    assert "nie, was Sie geantwortet haben" in mailoutbox[0].body
    page = client.get(LINK.search(mailoutbox[0].body)[0]).content.decode()
    assert "nie, <strong>was</strong> Sie geantwortet haben" in page


def test_a_csv_file_of_addresses_is_read_by_its_email_column(logged_in, invited_survey, mailoutbox):
    file = SimpleUploadedFile(
        "people.csv", b"\xef\xbb\xbfName,Email\nAna,ana@example.org\nBen,ben@example.org\n"
    )
    assert send(logged_in, invited_survey, file=file).status_code == 302
    assert [m.to for m in mailoutbox] == [["ana@example.org"], ["ben@example.org"]]


def test_an_address_already_invited_is_not_mailed_a_second_invite(
    logged_in, invited_survey, mailoutbox
):
    send(logged_in, invited_survey, "ana@example.org")
    response = send(logged_in, invited_survey, "ANA@example.org\nben@example.org")
    assert [m.to for m in mailoutbox] == [["ana@example.org"], ["ben@example.org"]]
    assert Invite.objects.count() == 2
    page = logged_in.get(response.url).content.decode()
    assert "Mailed 1 invite. 1 already had one and were not mailed again." in page


@pytest.mark.parametrize(
    ("pasted", "file", "said"),
    [
        (
            "ana@example.org\nnot an address\nben@example.org\nben@\n",
            None,
            ["Line 2: “not an address” is not an email address.", "Line 4: “ben@” is not"],
        ),
        ("\n  \n", None, ["Paste at least one email address, one per line."]),
        (
            "\n".join(f"p{i}@example.org" for i in range(MAX_ADDRESSES + 1)),
            None,
            [f"501 addresses: send at most {MAX_ADDRESSES} at a time."],
        ),
        ("ana@example.org", b"email\nben@example.org\n", ["not both"]),
        ("", b"Name,Mail address\nAna,ana@example.org\n", ["head the one with the addresses"]),
        ("", b"email\nana@example.org\nana at example.org\n", ["Line 3: “ana at example.org”"]),
        ("", b"\xff\xfe\x00e", ["not UTF-8"]),
        (f"{'a' * 64}@{'b' * 63}.{'c' * 63}.{'d' * 63}.org", None, ["Line 1:"]),
    ],
    ids=[
        "bad lines",
        "empty",
        "too many",
        "both",
        "no email column",
        "bad csv line",
        "not utf-8",
        "too long",
    ],
)
def test_bad_addresses_say_what_is_wrong_and_nothing_is_sent_or_stored(
    logged_in, invited_survey, mailoutbox, pasted, file, said
):
    upload = SimpleUploadedFile("people.csv", file) if file else None
    response = send(logged_in, invited_survey, pasted, upload)
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="email-errors"' in page and "Nothing was sent or stored" in page
    for words in said:
        assert words in page
    assert mailoutbox == [] and nothing_stored() and audit(invited_survey) == []


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"status": "closed"}, "This survey is closed: open it before mailing"),
        ({"status": "draft"}, "This survey is draft: open it before mailing"),
        ({"requires_invite": False}, "Turn on “Require a one-time invite” in Build first"),
    ],
)
def test_a_survey_that_cannot_use_mailed_invites_refuses_to_send(
    logged_in, make_survey, mailoutbox, fields, said
):
    survey = make_survey(n_questions=1, **({"requires_invite": True} | fields))
    response = send(logged_in, survey, "ana@example.org")
    assert response.status_code == 400 and said in response.content.decode()
    assert remind(logged_in, survey).status_code == 400
    assert mailoutbox == [] and nothing_stored()


def test_a_mail_server_that_refuses_leaves_nothing_stored(logged_in, invited_survey):
    refused = smtplib.SMTPRecipientsRefused({"ana@example.org": (550, b"no such user")})
    with mock.patch(
        "django.core.mail.backends.locmem.EmailBackend.send_messages", side_effect=refused
    ):
        response = send(logged_in, invited_survey, "ana@example.org")
    assert response.status_code == 400
    assert "The mail server refused" in response.content.decode()
    assert nothing_stored() and audit(invited_survey) == []


def test_only_editors_and_owners_mail_and_only_where_mail_is_set_up(
    client, outsider, logged_in, invited_survey, mailoutbox, settings
):
    client.force_login(outsider)
    assert send(client, invited_survey, "ana@example.org").status_code == 404
    settings.EMAIL_ENABLED = False
    assert send(logged_in, invited_survey, "ana@example.org").status_code == 404
    assert (
        'id="email-h"'
        not in logged_in.get(
            reverse("survey:distribute", args=[invited_survey.id])
        ).content.decode()
    )
    assert mailoutbox == [] and nothing_stored()


def test_a_reminder_goes_only_to_addresses_whose_invite_is_unused(
    logged_in, invited_survey, mailoutbox
):
    send(logged_in, invited_survey, "ana@example.org\nben@example.org\ncy@example.org")
    tokens = {m.to[0]: token_in(m) for m in mailoutbox}
    assert use_invite(invited_survey, tokens["ana@example.org"])  # sealed below
    seal(everything=True)
    assert use_invite(invited_survey, tokens["ben@example.org"])  # this hour, not yet sealed
    mailoutbox.clear()
    response = remind(logged_in, invited_survey)
    assert response.status_code == 302
    assert [m.to for m in mailoutbox] == [["cy@example.org"]]
    assert mailoutbox[0].subject == "Reminder: Exam honesty"
    assert token_in(mailoutbox[0]) == tokens["cy@example.org"]  # the same link again
    assert audit(invited_survey)[-1] == "reminder mailed to 1 unused invite"
    assert "Reminded 1" in logged_in.get(response.url).content.decode()


def test_deleting_the_addresses_keeps_the_invites_and_ends_the_reminders(
    client, logged_in, invited_survey, mailoutbox
):
    send(logged_in, invited_survey, "ana@example.org\nben@example.org")
    token = token_in(mailoutbox[0])
    response = forget(logged_in, invited_survey, confirm="yes")
    assert response.status_code == 302
    assert not EmailedInvite.objects.exists() and Invite.objects.count() == 2
    assert audit(invited_survey)[-1] == "2 mailed addresses deleted"
    mailoutbox.clear()
    remind(logged_in, invited_survey)
    assert mailoutbox == []
    assert submit(client, invited_survey, invite=token).status_code == 201


def forget(client, survey: Survey, **confirmation):
    return client.post(reverse("survey:email_forget", args=[survey.id]), confirmation)


@pytest.mark.parametrize("confirmation", [{}, {"confirm": ""}, {"confirm": "on"}])
def test_deleting_the_addresses_without_ticking_the_confirmation_deletes_nothing(
    logged_in, invited_survey, mailoutbox, confirmation
):
    send(logged_in, invited_survey, "ana@example.org\nben@example.org")
    response = forget(logged_in, invited_survey, **confirmation)
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="forget-error"' in page and "tick “Yes, delete them” first" in page
    assert 'name="confirm" value="yes" required aria-invalid="true"' in page
    assert EmailedInvite.objects.count() == 2 and Invite.objects.count() == 2
    assert audit(invited_survey)[-1] != "2 mailed addresses deleted"


def test_the_addresses_go_with_the_responses_when_the_retention_runs_out(
    logged_in, make_survey, mailoutbox, capsys
):
    survey = make_survey(n_questions=1, requires_invite=True, retention_days=7)
    send(logged_in, survey, "ana@example.org")
    survey.close()
    Survey.objects.filter(pk=survey.pk).update(closed_at=timezone.now() - timezone.timedelta(8))
    call_command("purge_responses")
    assert not EmailedInvite.objects.exists()


def test_the_addresses_go_with_a_survey_purged_from_the_trash(
    logged_in, invited_survey, mailoutbox, settings
):
    send(logged_in, invited_survey, "ana@example.org")
    invited_survey.move_to_trash()
    Survey.with_trashed.filter(pk=invited_survey.pk).update(
        trashed_at=timezone.now() - timezone.timedelta(days=settings.TRASH_RETENTION_DAYS + 1)
    )
    call_command("purge_trash")
    assert not EmailedInvite.objects.exists() and not Invite.objects.exists()


# The API ------------------------------------------------------------------------------


def api_url(survey: Survey, tail: str = "") -> str:
    return f"/api/surveys/{survey.id}/invites/email/{tail}"


def test_the_api_mails_reminds_counts_and_forgets(api, invited_survey, mailoutbox):
    response = api.post(
        api_url(invited_survey), {"addresses": ["ana@example.org", "Ben@example.org"]}, "json"
    )
    assert response.status_code == 201, response.content
    assert response.json() == {"sent": 2, "already_invited": 0}
    assert [m.to for m in mailoutbox] == [["ana@example.org"], ["ben@example.org"]]
    assert use_invite(invited_survey, token_in(mailoutbox[0]))
    assert api.get(api_url(invited_survey)).json() == {"kept": 2, "unused": 1}
    mailoutbox.clear()
    assert api.post(api_url(invited_survey, "remind/")).json() == {"reminded": 1}
    assert [m.to for m in mailoutbox] == [["ben@example.org"]]
    assert api.delete(api_url(invited_survey)).json() == {"deleted": 2}
    assert audit(invited_survey) == [
        "invites mailed to 2 addresses",
        "reminder mailed to 1 unused invite",
        "2 mailed addresses deleted",
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"addresses": ["ana@example.org", "nope"]}, "Item 2: “nope” is not an email address."),
        ({"addresses": []}, "Paste at least one email address"),
        ({"addresses": "ana@example.org"}, "addresses"),
        ({}, "addresses"),
        ({"addresses": [f"p{i}@example.org" for i in range(MAX_ADDRESSES + 1)]}, "addresses"),
    ],
    ids=["bad item", "empty", "not a list", "missing", "too many"],
)
def test_the_api_names_the_field_of_bad_addresses_and_stores_nothing(
    api, invited_survey, mailoutbox, body, field
):
    response = api.post(api_url(invited_survey), body, "json")
    assert response.status_code == 400
    assert "addresses" in response.json() and field in response.content.decode()
    assert mailoutbox == [] and nothing_stored() and audit(invited_survey) == []


def test_the_api_refuses_a_closed_survey_and_a_site_without_mail(
    api, invited_survey, mailoutbox, settings
):
    invited_survey.close()
    body = {"addresses": ["ana@example.org"]}
    response = api.post(api_url(invited_survey), body, "json")
    assert response.status_code == 409 and "closed" in response.json()["detail"]
    assert api.post(api_url(invited_survey, "remind/")).status_code == 409
    settings.EMAIL_ENABLED = False
    assert api.post(api_url(invited_survey), body, "json").status_code == 404
    assert mailoutbox == [] and nothing_stored()


def test_the_api_hides_mailing_from_viewers_and_strangers(
    client, invited_survey, outsider, mailoutbox
):
    invited_survey.share_with(outsider, Role.ANALYST)
    stranger = APIClient()
    stranger.force_authenticate(outsider)
    body = {"addresses": ["ana@example.org"]}
    assert stranger.post(api_url(invited_survey), body, "json").status_code == 404
    assert stranger.get(api_url(invited_survey)).status_code == 404
    assert stranger.delete(api_url(invited_survey)).status_code == 404
    assert mailoutbox == [] and nothing_stored()
