"""The test suite's settings: production's, with a test-only secret key and a counter
store of its own per test run (parallel runs on one host must not share counts)."""

from __future__ import annotations

import atexit
import os
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "test-only-key-never-deployed-" + "t" * 40)

from config.settings import *  # noqa: E402, F403
from config.settings import SHARED_MEMORY_DIR  # noqa: E402

TEST_RUN = os.getpid()
RATELIMIT_STORE = str(Path(SHARED_MEMORY_DIR) / f"deniable-test-ratelimit-{TEST_RUN}.sqlite3")


@atexit.register
def remove_counter_store() -> None:
    """The run's counters go with it (forked children leave them to the run)."""
    if os.getpid() == TEST_RUN:
        for suffix in ("", "-wal", "-shm"):
            Path(RATELIMIT_STORE + suffix).unlink(missing_ok=True)
