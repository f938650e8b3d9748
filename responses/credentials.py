"""Using an invite: exchanged for a one-time credential, recorded in the current hour's
tables (:class:`responses.models.InviteUse`) and marked on the invite only when the hour
is sealed, in random order among the hour's others.

So the invite table is never written while respondents answer: its rows carry no trace
of when anyone used an invite, and after the seal nothing sits next to a submission.
"""

from __future__ import annotations

import hashlib

from django.db import IntegrityError, connection, transaction

from responses.models import INVITE_USES, hour_tables
from survey import invites
from survey.models import CredentialKey, Invite, InviteRejected, Survey, current_hour, hash_token


def _hold_token(token_hash: str) -> None:
    """Two uses of one invite at the same moment, in the two hours' tables, wait for
    each other (PostgreSQL; SQLite's write transactions are exclusive anyway). An
    advisory lock lives in memory only: it writes nothing anywhere."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [token_hash])


def _use(survey: Survey, token: str | None, blinded_hash: str = "") -> None:
    """Record this hour's use of the invite, or raise :class:`InviteRejected` for a
    missing, unknown or used one. A use with the same ``blinded_hash`` as the invite's
    recorded one is a retry of the same exchange, and is allowed."""
    if not token:
        raise InviteRejected
    token_hash = hash_token(token)
    _hold_token(token_hash)
    invite = Invite.objects.filter(survey=survey, token_hash=token_hash).first()
    if invite is None:
        raise InviteRejected
    used = [u.objects.filter(token_hash=token_hash).first() for u in INVITE_USES]
    earlier = [u.blinded_hash for u in used if u is not None]
    if invite.used:
        earlier.append(invite.blinded_hash)
    if earlier:
        if blinded_hash and earlier[0] == blinded_hash:
            return
        raise InviteRejected
    hour = current_hour()
    try:
        with transaction.atomic():
            hour_tables(hour).invite_use.objects.create(
                token_hash=token_hash, survey=survey, blinded_hash=blinded_hash, hour=hour
            )
    except IntegrityError:
        raise InviteRejected from None


def exchange(survey: Survey, token: str | None, blinded_message: bytes) -> bytes:
    """Use up the invite and blind-sign ``blinded_message`` (RFC 9474): the credential it
    becomes is the browser's secret. The same blinded message may be signed again (a
    retry whose answer was lost); another one may not. Raises :class:`InviteRejected` or
    :class:`~survey.invites.BadCredential`; then nothing changed."""
    key = CredentialKey.of(survey).private_key
    with transaction.atomic():
        _use(survey, token, hashlib.sha256(blinded_message).hexdigest())
        return invites.blind_sign(key, blinded_message)


def issue(survey: Survey, token: str | None) -> invites.Credential:
    """Use up the invite for a credential the server signs itself (no JavaScript, or an
    API client sending its invite): the server's code sees both for a moment, but stores
    nothing that joins them. Raises :class:`InviteRejected`."""
    key = CredentialKey.of(survey).private_key
    with transaction.atomic():
        _use(survey, token)
        return invites.sign(key)


def give_back(survey: Survey, token: str) -> None:
    """Undo :func:`issue` when the submission it was for was refused as a whole."""
    for use in INVITE_USES:
        use.objects.filter(survey=survey, token_hash=hash_token(token)).delete()


def used_invites(survey: Survey) -> int:
    """How many of the survey's invites are used, sealed or this hour."""
    sealed = Invite.objects.filter(survey=survey, used=True).count()
    return sealed + sum(u.objects.filter(survey=survey).count() for u in INVITE_USES)


def unused_invites(survey: Survey):
    """The survey's invites neither marked used by a seal nor used in this hour."""
    pending = [u.objects.filter(survey=survey).values("token_hash") for u in INVITE_USES]
    unused = Invite.objects.filter(survey=survey, used=False)
    for hashes in pending:
        unused = unused.exclude(token_hash__in=hashes)
    return unused
