"""A statement PostgreSQL prepares once per connection and then runs straight over libpq.

Respondents' submissions are the one statement hot enough for this: run through a
psycopg cursor inside Django's cursor wrapper, its Python side cost about as much CPU
as PostgreSQL spent executing it (``bench/submit.py`` measures the difference). Run this
way it still passes through what Django's own cursors do: the connection is opened if
needed, a broken transaction is refused, ``connection.execute_wrapper`` hooks run, the
query log is kept when it is on, and errors arrive as ``django.db`` exceptions.
"""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Callable, Sequence

import psycopg
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg import pq

# SQLSTATE invalid_sql_statement_name: the server no longer knows the statement (a new
# server connection behind a pooler, or DISCARD ALL).
STATEMENT_UNKNOWN = b"26000"


class PreparedStatement:
    """``sql`` (with positional $1, $2… parameters, typed by casts where PostgreSQL
    cannot infer the type), prepared on each connection the first time it runs there."""

    def __init__(self, name: str, build_sql: Callable[[], str]) -> None:
        self.name = name.encode()
        self._build_sql = build_sql
        self._prepared_on: weakref.WeakSet[psycopg.Connection] = weakref.WeakSet()

    @functools.cached_property
    def sql(self) -> str:
        """Built on first use, when the models it names are loaded."""
        return self._build_sql()

    def execute(self, db: BaseDatabaseWrapper, params: Sequence[str]) -> int:
        """Run with ``params`` (in PostgreSQL's text format) on Django connection ``db``;
        the number of rows the statement's last command touched."""
        db.ensure_connection()
        db.validate_no_broken_transaction()
        run: Callable = self._run
        for wrapper in reversed(db.execute_wrappers):
            run = functools.partial(wrapper, run)
        context = {"connection": db, "cursor": None}
        began = time.monotonic()
        try:
            with db.wrap_database_errors:
                return run(self.sql, params, False, context)
        finally:
            if db.queries_logged:
                db.queries_log.append({"sql": self.sql, "time": f"{time.monotonic() - began:.3f}"})

    def _run(self, sql: str, params: Sequence[str], many: bool, context: dict) -> int:
        """The executor at the end of ``execute_wrapper`` chains (same signature)."""
        connection = context["connection"].connection
        encoded = [param.encode() for param in params]
        if connection not in self._prepared_on:
            self._check(connection, connection.pgconn.prepare(self.name, sql.encode()))
            self._prepared_on.add(connection)
        result = connection.pgconn.exec_prepared(self.name, encoded)
        if (
            result.error_field(pq.DiagnosticField.SQLSTATE) == STATEMENT_UNKNOWN
            and connection.pgconn.transaction_status == pq.TransactionStatus.IDLE
        ):
            self._check(connection, connection.pgconn.prepare(self.name, sql.encode()))
            result = connection.pgconn.exec_prepared(self.name, encoded)
        self._check(connection, result)
        return result.command_tuples or 0

    @staticmethod
    def _check(connection: psycopg.Connection, result: pq.abc.PGresult) -> None:
        """Raise what psycopg would have raised for a failed ``result``."""
        if result.status in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
            return
        if connection.pgconn.status == pq.ConnStatus.BAD:
            message = connection.pgconn.get_error_message() or "the connection was lost"
            raise psycopg.OperationalError(message)
        raise psycopg.errors.error_from_result(result, encoding=connection.info.encoding)
