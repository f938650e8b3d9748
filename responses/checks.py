"""Is the database set up so that sealing leaves nothing behind? Checked by ``migrate``
and by ``manage.py check --database default``."""

from __future__ import annotations

from django.core.checks import Tags, Warning, register
from django.db import DatabaseError, connections


@register(Tags.database)
def wal_is_scrubbed(app_configs=None, databases=None, **kwargs) -> list[Warning]:
    """On PostgreSQL the seal removes the hour's write-ahead log by switching segments and
    checkpointing: that needs ``wal_recycle = off`` (a recycled segment keeps its old
    bytes until written over) and a role allowed to do both."""
    found = []
    for alias in databases or ():
        connection = connections[alias]
        if connection.vendor != "postgresql":
            continue
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT current_setting('wal_recycle'), "
                    "has_function_privilege('pg_switch_wal()', 'EXECUTE'), "
                    "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user) "
                    "OR pg_has_role(current_user, 'pg_checkpoint', 'MEMBER')"
                )
                recycle, can_switch, can_checkpoint = cursor.fetchone()
        except DatabaseError:
            continue  # an unreachable database is reported by Django's own checks
        if recycle == "on":
            found.append(
                Warning(
                    "PostgreSQL recycles WAL segments: a sealed hour stays readable in them.",
                    hint="ALTER SYSTEM SET wal_recycle = off; SELECT pg_reload_conf(); "
                    "(docs/operations.md)",
                    id="responses.W001",
                )
            )
        if not (can_switch and can_checkpoint):
            found.append(
                Warning(
                    "The app's database role cannot switch WAL segments and checkpoint, so "
                    "the seal cannot remove a sealed hour from the write-ahead log.",
                    hint="GRANT pg_checkpoint TO <role>; GRANT EXECUTE ON FUNCTION "
                    "pg_switch_wal() TO <role>; (docs/operations.md)",
                    id="responses.W002",
                )
            )
    return found
