"""The database check says when sealing cannot remove an hour from PostgreSQL's log."""

from __future__ import annotations

import pytest
from django.db import connection

from responses.checks import wal_is_scrubbed

pytestmark = pytest.mark.django_db(transaction=True)


def set_wal_recycle(value: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER SYSTEM SET wal_recycle = {value}")
        cursor.execute("SELECT pg_reload_conf()")
        cursor.execute("SELECT pg_sleep(0.2)")  # the reload reaches this backend


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's WAL")
def test_recycled_wal_segments_are_reported_and_a_superuser_may_scrub():
    with connection.cursor() as cursor:
        cursor.execute("SHOW wal_recycle")
        before = cursor.fetchone()[0]
    try:
        set_wal_recycle("on")
        assert [w.id for w in wal_is_scrubbed(databases=["default"])] == ["responses.W001"]
        set_wal_recycle("off")
        assert wal_is_scrubbed(databases=["default"]) == []
    finally:
        set_wal_recycle(before)


def test_nothing_is_checked_without_a_database_or_on_sqlite():
    assert wal_is_scrubbed(databases=None) == []
    if connection.vendor == "sqlite":
        assert wal_is_scrubbed(databases=["default"]) == []
