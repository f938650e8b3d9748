"""The maths sits below everything: no module of ``estimator/`` imports Django or any of
the app's own packages, so it can be read, tested and reused on its own."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p for p in (ROOT / "estimator").rglob("*.py"))
ABOVE = ("django", "rest_framework", "survey", "responses", "analysis", "classroom", "accounts")


def imported_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_scan_finds_the_maths():
    names = {p.name for p in MODULES}
    assert {"designs.py", "estimates.py", "intervals.py", "lessons.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_maths_module_names_a_package_above_it(path):
    above = sorted(n for n in imported_names(path) if n.split(".")[0] in ABOVE)
    assert above == []


def test_importing_every_maths_module_loads_nothing_above_it():
    modules = [
        "estimator." + str(p.relative_to(ROOT / "estimator").with_suffix("")).replace("/", ".")
        for p in MODULES
        if p.name != "__init__.py"
    ]
    code = (
        f"import sys; import {', '.join(modules)}; "
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {ABOVE!r}); "
        "print(loaded); sys.exit(1 if loaded else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
