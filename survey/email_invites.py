"""Invites sent by email, and reminders to those whose invite is unused.

Every address gets its own new invite. What is kept beside an address is its invite, and
an invite says only whether it was used: the researcher learns *that* someone answered,
never what (the invite is exchanged for a blind credential before anything is sent).
Addresses go when the owner deletes them, with the invites, or with the responses.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage, get_connection
from django.core.validators import validate_email
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import translation

from responses.credentials import unused_invites
from survey.models import AuditEntry, EmailedInvite, Invite, Survey

MAX_ADDRESSES = 500  # per sending: each is one mail, sent while the researcher waits
MAX_ADDRESS_FILE_BYTES = 1024 * 1024
MAX_ADDRESS_LENGTH = 254  # RFC 5321's limit for a path, and the column's
# A header cell naming the column of addresses in an uploaded CSV.
ADDRESS_HEADERS = {"email", "e-mail", "email address", "e-mail address", "address", "mail"}


class AddressesRejected(Exception):
    """The addresses cannot be used as given; nothing was sent or stored."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Sent:
    sent: int
    already_invited: int


def refusal(survey: Survey) -> str | None:
    """Why invites cannot be mailed (or reminded) for this survey now, or None."""
    if survey.status != Survey.Status.OPEN:
        return (
            f"This survey is {survey.get_status_display().lower()}: open it before mailing "
            "invites or reminders, so that the links work when they arrive."
        )
    if not survey.requires_invite:
        return (
            "Turn on “Require a one-time invite” in Build first: without it answers do not "
            "use the invite, and reminders would go to people who have answered."
        )
    return None


def checked_addresses(lines: list[tuple[int, str]], where: str = "Line") -> list[str]:
    """The distinct addresses of ``(line number, text)`` pairs, lower-cased; raises
    :class:`AddressesRejected` naming every line (or API list item) that holds no valid
    address."""
    addresses, errors = [], []
    for number, text in lines:
        address = text.strip().strip(",;").strip().lower()
        if not address:
            continue
        try:
            validate_email(address)
            if len(address) > MAX_ADDRESS_LENGTH:
                raise ValidationError("too long")
        except ValidationError:
            errors.append(f"{where} {number}: “{text.strip()[:100]}” is not an email address.")
            continue
        if address not in addresses:
            addresses.append(address)
    if errors:
        raise AddressesRejected(errors)
    if not addresses:
        raise AddressesRejected(["Paste at least one email address, one per line."])
    if len(addresses) > MAX_ADDRESSES:
        raise AddressesRejected(
            [f"{len(addresses):,} addresses: send at most {MAX_ADDRESSES} at a time."]
        )
    return addresses


def pasted_lines(text: str) -> list[tuple[int, str]]:
    return list(enumerate(text.splitlines(), start=1))


def csv_lines(upload) -> list[tuple[int, str]]:
    """The address cells of an uploaded CSV by line: the column headed "email" (or
    "address"), or the only column of a file without such a header."""
    if upload.size > MAX_ADDRESS_FILE_BYTES:
        raise AddressesRejected(["The file is over 1 MiB: that is far more than 500 addresses."])
    try:
        text = upload.read().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AddressesRejected(["The file is not UTF-8 text: save it as CSV (UTF-8)."]) from None
    rows = list(enumerate(csv.reader(io.StringIO(text)), start=1))
    if not rows:
        return []
    header = [cell.strip().lower() for cell in rows[0][1]]
    column = next((i for i, cell in enumerate(header) if cell in ADDRESS_HEADERS), None)
    if column is not None:
        return [(n, row[column] if column < len(row) else "") for n, row in rows[1:]]
    if any(len(row) > 1 for _, row in rows):
        raise AddressesRejected(
            ["The file has several columns: head the one with the addresses “email”."]
        )
    return [(n, row[0] if row else "") for n, row in rows]


def _message(request: HttpRequest, survey: Survey, emailed: EmailedInvite, reminder: bool):
    link = request.build_absolute_uri(f"{survey.get_absolute_url()}?invite={emailed.token}")
    context = {"survey": survey, "link": link, "reminder": reminder}
    with translation.override(survey.language):
        subject = render_to_string("survey/invite_subject.txt", context).strip()
        body = render_to_string("survey/invite_email.txt", context)
    return EmailMessage(subject, body, settings.DEFAULT_FROM_EMAIL, [emailed.address])


def _send(request: HttpRequest, survey: Survey, emailed: list[EmailedInvite], reminder: bool):
    messages = [_message(request, survey, e, reminder) for e in emailed]
    with get_connection() as connection:
        connection.send_messages(messages)


def send_invites(request: HttpRequest, survey: Survey, addresses: list[str]) -> Sent:
    """A new invite to each address not yet invited to this survey, mailed; if the mail
    server refuses, the new invites are deleted again. Stored before the mail goes out,
    so that no write transaction waits on the mail server (SQLite would hold every
    respondent's write meanwhile)."""
    invited = survey.emailed_invites.filter(address__in=addresses)
    known = set(invited.values_list("address", flat=True))
    new = [address for address in addresses if address not in known]
    emailed = EmailedInvite.create_batch(survey, new)
    try:
        _send(request, survey, emailed, reminder=False)
    except OSError:
        Invite.objects.filter(pk__in=[e.invite_id for e in emailed]).delete()  # addresses too
        raise
    said = f"invites mailed to {_count(len(new), 'address', 'addresses')}"
    AuditEntry.record(survey, request.user, AuditEntry.Action.INVITES, said)
    return Sent(sent=len(new), already_invited=len(known))


def unused(survey: Survey):
    return survey.emailed_invites.filter(invite__in=unused_invites(survey))


def remind(request: HttpRequest, survey: Survey) -> int:
    """Mail the link again to every address whose invite is unused; how many."""
    emailed = list(unused(survey))
    _send(request, survey, emailed, reminder=True)
    said = f"reminder mailed to {_count(len(emailed), 'unused invite', 'unused invites')}"
    AuditEntry.record(survey, request.user, AuditEntry.Action.INVITES, said)
    return len(emailed)


def forget(request: HttpRequest, survey: Survey) -> int:
    """Delete the mailed addresses (their invites keep working); how many."""
    deleted, _ = survey.emailed_invites.all().delete()
    said = f"{_count(deleted, 'mailed address', 'mailed addresses')} deleted"
    AuditEntry.record(survey, request.user, AuditEntry.Action.INVITES, said)
    return deleted


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"
