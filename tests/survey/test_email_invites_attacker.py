"""The researcher as adversary once invites go out by email: they hold the addresses, each
address's invite, the whole database with its system columns and the logs, and try to
tell which invited person sent which answers. They may learn *that* an address's invite
was used; nothing may say *what* was answered with it. Every request commits on its own,
as in production."""

from __future__ import annotations

import hashlib
import logging
import re

import pytest
from django.test import Client
from django.urls import reverse

from responses.sealing import seal
from survey.models import EmailedInvite, Invite
from tests.storage import spent_credential_count, stored_count
from tests.survey.test_invites_attacker import POSTGRES, answer_with_every_path, whole_database

pytestmark = pytest.mark.django_db(transaction=True)

ADDRESSES = [f"person{i}@example.org" for i in range(6)]
SYSTEM = {"sys_xmin", "sys_ctid", "sys_rowid"}


def mailed_tokens(mailoutbox) -> list[str]:
    """Each address's token, in the order of ``ADDRESSES``, as the mails carry them."""
    by_address = {m.to[0]: re.search(r"\?invite=([0-9a-f]+)", m.body)[1] for m in mailoutbox}
    return [by_address[address] for address in ADDRESSES]


def test_nothing_stored_or_logged_links_a_mailed_address_to_its_answers(
    client, owner, make_survey, settings, mailoutbox, caplog
):
    settings.EMAIL_ENABLED = True
    survey = make_survey(n_questions=2, requires_invite=True)
    researcher = Client()
    researcher.force_login(owner)
    with caplog.at_level(logging.DEBUG):
        sent = researcher.post(
            reverse("survey:email_send", args=[survey.id]), {"addresses": "\n".join(ADDRESSES)}
        )
        assert sent.status_code == 302
        tokens = mailed_tokens(mailoutbox)
        answer_with_every_path(client, survey, tokens)  # the first five answer
        seal(everything=True)
        mailoutbox.clear()
        researcher.post(reverse("survey:email_remind", args=[survey.id]))
    assert stored_count(survey) == 5 and spent_credential_count() == 5
    assert [m.to for m in mailoutbox] == [[ADDRESSES[5]]]  # what the researcher may learn

    db = whole_database()
    email_table, invite_table = EmailedInvite._meta.db_table, Invite._meta.db_table
    rows = db[email_table]
    # An address row holds the address, its invite and the key its link is made from.
    assert set(rows[0]) - SYSTEM == {"id", "survey_id", "invite_id", "address", "link_key"}
    # Nothing about an address, its link or its token anywhere else; nothing in the logs.
    elsewhere = repr({t: r for t, r in db.items() if t not in (email_table, invite_table)})
    secrets = ADDRESSES + tokens + [row["link_key"] for row in rows]
    secrets += [hashlib.sha256(token.encode()).hexdigest() for token in tokens]
    assert not any(secret in elsewhere for secret in secrets)
    assert not any(secret in record.getMessage() for record in caplog.records for secret in secrets)
    assert not any(address in repr(db[invite_table]) for address in ADDRESSES)

    answer_tables = {t: r for t, r in db.items() if t not in (email_table, invite_table)}
    if POSTGRES:
        # The address rows were written with their invites, before anyone answered; the
        # seal marked the invites used in a transaction of its own.
        address_xmins = {row["sys_xmin"] for row in rows}
        used_xmins = {row["sys_xmin"] for row in db[invite_table] if row["used"]}
        others = {row["sys_xmin"] for r in answer_tables.values() for row in r}
        assert len(used_xmins) == 1 and used_xmins.isdisjoint(address_xmins | others)
        assert address_xmins.isdisjoint(others)
    else:
        # SQLite's rowid of an address row is its place in the pasted list, nothing newer.
        order = [row["address"] for row in sorted(rows, key=lambda r: r["sys_rowid"])]
        assert order == ADDRESSES
