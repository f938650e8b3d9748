"""Runs the JavaScript unit tests (node's built-in runner) as part of pytest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def test_the_browser_sampler_passes_its_node_unit_tests():
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed for the JavaScript unit tests (apt-get install nodejs)")
    result = subprocess.run(
        [node, "--test", *sorted(str(p) for p in HERE.glob("*.test.mjs"))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
