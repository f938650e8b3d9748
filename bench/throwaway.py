"""What the benchmarks that load a throw-away database share: creating and dropping it,
and the child process that measures in it (Django is configured once per process, so
each database gets a fresh one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_SERVER = "postgres://postgres@127.0.0.1:5432"


@contextmanager
def postgres_database(name: str) -> Iterator[str]:
    """A fresh PostgreSQL database ``name`` (never the dev database), dropped afterwards;
    yields its URL."""
    import psycopg

    def drop(conn) -> None:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")

    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        drop(conn)
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield f"{PG_SERVER}/{name}"
    finally:
        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
            drop(conn)


def child_env(database_url: str) -> dict[str, str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.setdefault("SECRET_KEY", "bench-" + "k" * 50)  # production settings refuse none
    return env | {"DATABASE_URL": database_url}


def run_child(script: str, args: list[str], database_url: str, what: str = "run") -> dict:
    """Run ``script --child args`` against ``database_url``; the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, script, "--child", *args],
        env=child_env(database_url),
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"{what} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])
