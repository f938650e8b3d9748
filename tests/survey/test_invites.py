"""Invites exchanged for one-time credentials: the exchange endpoint, submitting with a
credential, the no-JavaScript start step, the page that no longer tells a used invite
from an unused one, and the reseal the hourly job runs. Every refusal stores nothing."""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid

import pytest
from cryptography.hazmat.primitives import serialization
from django.urls import reverse

from responses.credentials import used_invites
from responses.sealing import seal
from survey import invites
from survey.models import CredentialKey, Invite, Survey
from tests.storage import (
    spent_credential_count,
    stored_answers,
    stored_count,
    tallied_total,
    use_invite,
    used_invite_count,
)
from tests.survey.test_invites_crypto import Browser

pytestmark = pytest.mark.django_db


def stored() -> tuple[int, int, int, int, int]:
    """Submissions, answers, tallied answers, used invites, spent credentials."""
    return (
        stored_count(),
        stored_answers(),
        tallied_total(),
        used_invite_count(),
        spent_credential_count(),
    )


def exchange(client, survey: Survey, invite: str, browser: Browser | None = None):
    browser = browser or Browser(CredentialKey.of(survey).public)
    body = {"invite": invite, "blinded_message": browser.blinded_message}
    return client.post(
        reverse("api-credential", args=[survey.slug]), body, content_type="application/json"
    )


def credential_for(client, survey: Survey, invite: str) -> dict[str, str]:
    """What the respondent's browser holds after the page has loaded."""
    browser = Browser(CredentialKey.of(survey).public)
    response = exchange(client, survey, invite, browser)
    assert response.status_code == 201, response.content
    return browser.credential(response.json()["blind_signature"])


def submit(client, survey: Survey, **extra):
    answers = [{"question": q.id, "value": 1} for q in survey.questions.all()]
    body = {"submission_id": str(uuid.uuid4()), "answers": answers, **extra}
    return client.post(
        reverse("api-submit", args=[survey.slug]), body, content_type="application/json"
    )


@pytest.fixture
def invited(make_survey) -> tuple[Survey, list[str]]:
    survey = make_survey(n_questions=2, requires_invite=True)
    return survey, Invite.create_batch(survey, 3)


# The exchange ---------------------------------------------------------------------------


def test_an_invite_becomes_a_credential_that_admits_one_submission(client, invited):
    survey, tokens = invited
    credential = credential_for(client, survey, tokens[0])
    assert stored() == (0, 0, 0, 1, 0)
    assert invites.verify(
        CredentialKey.of(survey).private_key, invites.Credential.parse(credential)
    )
    assert submit(client, survey, credential=credential).status_code == 201
    assert stored() == (1, 2, 2, 1, 1)


def test_a_lost_answer_may_be_asked_for_again_with_the_same_blinded_message_only(client, invited):
    survey, tokens = invited
    browser = Browser(CredentialKey.of(survey).public)
    first, again = (exchange(client, survey, tokens[0], browser) for _ in range(2))
    assert (first.status_code, again.status_code) == (201, 201)
    assert first.json() == again.json()
    assert exchange(client, survey, tokens[0]).status_code == 403  # another blinded message
    assert stored() == (0, 0, 0, 1, 0)
    credential = browser.credential(again.json()["blind_signature"])
    assert submit(client, survey, credential=credential).status_code == 201


@pytest.mark.parametrize("which", ["used", "unknown", "other survey", "blank"])
def test_a_wrong_or_used_invite_at_the_exchange_is_403_and_changes_nothing(
    client, invited, make_survey, which
):
    survey, tokens = invited
    use_invite(survey, tokens[0])
    other = make_survey(requires_invite=True)
    token = {
        "used": tokens[0],
        "unknown": "never-issued",
        "other survey": Invite.create_batch(other, 1)[0],
        "blank": "",
    }[which]
    response = exchange(client, survey, token)
    assert response.status_code in ((400,) if which == "blank" else (403,))
    assert "invite" in response.json()
    assert stored() == (0, 0, 0, 1, 0)


@pytest.mark.parametrize(
    "blinded",
    ["", "not base64!", invites.b64encode(b"\x01" * 255), invites.b64encode(b"\xff" * 256), 7],
    ids=["empty", "garbled", "short", "above-the-modulus", "number"],
)
def test_a_malformed_blinded_message_is_400_and_leaves_the_invite_unused(client, invited, blinded):
    survey, tokens = invited
    response = client.post(
        reverse("api-credential", args=[survey.slug]),
        {"invite": tokens[0], "blinded_message": blinded},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "blinded_message" in response.json()
    assert stored() == (0, 0, 0, 0, 0)
    assert use_invite(survey, tokens[0])


def test_the_exchange_answers_404_and_409_like_the_submit_endpoint(client, invited):
    survey, tokens = invited
    body = {"invite": tokens[0], "blinded_message": "AAAA"}
    missing = client.post("/api/public/surveys/nope/credentials/", body, "application/json")
    assert missing.status_code == 404
    survey.close()
    assert exchange(client, survey, tokens[0]).status_code == 409
    assert stored() == (0, 0, 0, 0, 0)


def test_the_exchange_is_rate_limited(client, invited, settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMITS = settings.RATELIMITS | {"credential": (2, 60)}
    survey, _ = invited
    codes = [exchange(client, survey, "guess-" + str(i)).status_code for i in range(3)]
    assert codes == [403, 403, 429]


def test_every_respondent_sees_the_same_key_made_with_the_invites(client, invited):
    survey, tokens = invited
    key = CredentialKey.objects.get(survey=survey)
    spki = key.private_key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    fingerprint = hashlib.sha256(spki).hexdigest()
    for token in tokens:
        html = client.get(f"{survey.get_absolute_url()}?invite={token}").content.decode()
        assert f'title="SHA-256 {fingerprint}"' in html
        assert f'data-key-n="{key.public["n"]}"' in html
    assert key.private_key.key_size == 2048
    assert CredentialKey.objects.count() == 1


# Submitting with a credential -----------------------------------------------------------


def test_a_spent_credential_is_403_and_nothing_more_is_stored(client, invited):
    survey, tokens = invited
    credential = credential_for(client, survey, tokens[0])
    assert submit(client, survey, credential=credential).status_code == 201
    before = stored()
    response = submit(client, survey, credential=credential)
    assert response.status_code == 403
    assert "credential" in response.json()
    assert stored() == before


def test_a_retry_with_the_same_submission_id_is_still_a_200(client, invited):
    survey, tokens = invited
    credential = credential_for(client, survey, tokens[0])
    answers = [{"question": q.id, "value": 0} for q in survey.questions.all()]
    body = {"submission_id": str(uuid.uuid4()), "answers": answers, "credential": credential}
    url = reverse("api-submit", args=[survey.slug])
    codes = [client.post(url, body, "application/json").status_code for _ in range(2)]
    assert codes == [201, 200]
    assert stored() == (1, 2, 2, 1, 1)


@pytest.mark.parametrize("again_with", ["its own invite", "another unused invite"])
def test_a_retry_of_a_stored_submission_answers_its_receipt_and_spends_nothing(
    client, invited, again_with
):
    """The first answer was lost on the way back: retrying with its invite must not say
    "Nothing was stored" (it was), and retrying with another, unused invite must not use
    that one up."""
    survey, tokens = invited
    answers = [{"question": q.id, "value": 0} for q in survey.questions.all()]
    body = {"submission_id": str(uuid.uuid4()), "answers": answers, "invite": tokens[0]}
    url = reverse("api-submit", args=[survey.slug])
    first = client.post(url, body, "application/json")
    assert first.status_code == 201
    before = stored()
    token = tokens[0] if again_with == "its own invite" else tokens[1]
    retry = client.post(url, body | {"invite": token}, "application/json")
    assert retry.status_code == 200 and retry.json() == first.json()
    assert stored() == before
    # The other invite still admits its own respondent.
    assert submit(client, survey, invite=tokens[1]).status_code == 201


def forged(other: Survey) -> dict[str, dict | None]:
    message = secrets.token_bytes(32)
    other_key = CredentialKey.of(other).private_key
    return {
        "random signature": {
            "message": invites.b64encode(message),
            "signature": invites.b64encode(secrets.token_bytes(256)),
        },
        "another survey's key": invites.sign(other_key).as_json(),
        "absent": None,
    }


@pytest.mark.parametrize("kind", ["random signature", "another survey's key", "absent"])
def test_a_forged_or_missing_credential_is_403_and_stores_nothing(
    client, invited, make_survey, kind
):
    survey, _ = invited
    credential = forged(make_survey(requires_invite=True))[kind]
    response = submit(client, survey, **({"credential": credential} if credential else {}))
    assert response.status_code == 403
    assert stored() == (0, 0, 0, 0, 0)


@pytest.mark.parametrize(
    "credential",
    [
        "text",
        {"message": "AAAA"},
        {"message": "%%%", "signature": "AAAA"},
        {"message": invites.b64encode(b"short"), "signature": "AAAA"},
        {"message": invites.b64encode(b"x" * 32), "signature": ["AAAA"]},
    ],
    ids=["string", "no-signature", "garbled", "short-message", "list-signature"],
)
def test_a_garbled_credential_is_400_and_stores_nothing(client, invited, credential):
    survey, _ = invited
    response = submit(client, survey, credential=credential)
    assert response.status_code == 400
    assert "credential" in response.json()
    assert stored() == (0, 0, 0, 0, 0)


def test_an_api_client_may_still_send_its_invite_which_the_server_exchanges(client, invited):
    survey, tokens = invited
    assert submit(client, survey, invite=tokens[0]).status_code == 201
    assert stored() == (1, 2, 2, 1, 1)
    response = submit(client, survey, invite=tokens[0])
    assert response.status_code == 403
    assert stored() == (1, 2, 2, 1, 1)


def test_an_api_invite_refused_with_its_submission_stays_usable(client, invited):
    survey, tokens = invited
    response = submit(client, survey, invite=tokens[0], design_version=99)
    assert response.status_code == 409
    assert stored() == (0, 0, 0, 0, 0)


# The respondent page: no oracle ---------------------------------------------------------


def page_without_noise(client, survey: Survey, token: str):
    response = client.get(f"{survey.get_absolute_url()}?invite={token}")
    html = response.content.decode().replace(token, "TOKEN")
    html = re.sub(r'nonce="[^"]+"', "", html)
    return response.status_code, re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "UUID", html)


def test_the_page_does_not_tell_a_used_invite_from_an_unused_or_unknown_one(client, invited):
    """Polling the page with an invite must neither learn whether it was used (and so
    when its respondent answered) nor use it up."""
    survey, tokens = invited
    use_invite(survey, tokens[0])
    pages = {page_without_noise(client, survey, t) for t in (tokens[0], tokens[1], "made-up")}
    assert len(pages) == 1
    ((status, html),) = pages
    assert status == 200
    # respond.js's sentences (the same on every page) include the refusal it may show.
    shown = re.sub(r'<script id="respond-strings".*?</script>', "", html, flags=re.S)
    assert "already been used" not in shown
    assert used_invites(survey) == 1
    assert use_invite(survey, tokens[1])


# Without JavaScript ---------------------------------------------------------------------


def start_paper(client, survey: Survey, invite: str):
    return client.post(
        reverse("survey:respond_paper_invite", args=[survey.slug]), {"invite": invite}
    )


def paper_fields(html: str) -> dict[str, str]:
    return dict(re.findall(r'name="(credential_\w+|submission_id)" value="([^"]+)"', html))


def paper_post(client, survey: Survey, fields: dict[str, str], value: str = "1"):
    data = fields | {f"reported_{q.id}": value for q in survey.questions.all()}
    return client.post(reverse("survey:respond_paper", args=[survey.slug]), data)


def test_without_javascript_the_page_first_asks_to_use_the_invite(client, invited):
    survey, tokens = invited
    html = client.get(f"{survey.get_absolute_url()}?invite={tokens[0]}").content.decode()
    assert "Use my invite and show the questions" in html
    assert f'<input type="hidden" name="invite" value="{tokens[0]}">' in html
    assert 'name="reported_' not in html
    assert stored() == (0, 0, 0, 0, 0)


def test_without_javascript_the_invite_becomes_a_credential_in_the_form(client, invited):
    survey, tokens = invited
    start = start_paper(client, survey, tokens[0])
    assert start.status_code == 200
    fields = paper_fields(start.content.decode())
    assert set(fields) == {"credential_message", "credential_signature", "submission_id"}
    assert stored() == (0, 0, 0, 1, 0)
    response = paper_post(client, survey, fields)
    assert response.status_code == 200
    assert "Thank you" in response.content.decode()
    assert stored() == (1, 2, 2, 1, 1)
    fields["submission_id"] = str(uuid.uuid4())
    replay = paper_post(client, survey, fields, value="0")
    assert replay.status_code == 403
    assert "already been used or is not valid" in replay.content.decode()
    assert stored() == (1, 2, 2, 1, 1)


def test_without_javascript_a_used_invite_is_refused_at_the_start(client, invited):
    survey, tokens = invited
    use_invite(survey, tokens[0])
    response = start_paper(client, survey, tokens[0])
    assert response.status_code == 403
    assert "already been used or is not valid" in response.content.decode()
    assert stored() == (0, 0, 0, 1, 0)


def test_without_javascript_a_missing_answer_keeps_the_credential_in_the_form(client, invited):
    survey, tokens = invited
    fields = paper_fields(start_paper(client, survey, tokens[0]).content.decode())
    response = client.post(reverse("survey:respond_paper", args=[survey.slug]), fields)
    assert response.status_code == 400
    assert paper_fields(response.content.decode()) == fields
    assert paper_post(client, survey, fields).status_code == 200


@pytest.mark.parametrize("tamper", ["signature", "message", "absent"])
def test_without_javascript_a_forged_credential_stores_nothing(client, invited, tamper):
    survey, tokens = invited
    fields = paper_fields(start_paper(client, survey, tokens[0]).content.decode())
    if tamper == "absent":
        fields = {"submission_id": fields["submission_id"]}
    else:
        fields[f"credential_{tamper}"] = invites.b64encode(secrets.token_bytes(32))
    response = paper_post(client, survey, fields)
    assert response.status_code == 403
    assert stored() == (0, 0, 0, 1, 0)


# Sealed ---------------------------------------------------------------------------------


def test_the_seal_marks_invites_used_and_keeps_refusing_spent_ones(client, invited, make_survey):
    survey, tokens = invited
    credential = credential_for(client, survey, tokens[0])
    assert submit(client, survey, credential=credential).status_code == 201
    assert submit(client, survey, invite=tokens[1]).status_code == 201
    untouched = make_survey(requires_invite=True)
    Invite.create_batch(untouched, 1)
    assert not Invite.objects.filter(used=True).exists()  # used this hour: not marked yet
    assert seal(everything=True).invites == 2
    assert set(Invite.objects.filter(used=True).values_list("survey_id", flat=True)) == {survey.pk}
    assert Invite.objects.filter(used=True).count() == 2
    assert submit(client, survey, credential=credential).status_code == 403
    assert exchange(client, survey, tokens[0]).status_code == 403
    assert submit(client, survey, invite=tokens[1]).status_code == 403
    assert stored() == (2, 4, 4, 2, 2)
    credential_for(client, survey, tokens[2])  # the unused invite was left as it was
