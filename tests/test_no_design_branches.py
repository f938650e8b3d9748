"""The app asks the design; it never branches on a design's name or class.

Greps the app's code (everything but the design core itself) for a design name compared
or switched on, e.g. ``== "forced_response"``, ``design_name ==``, ``design.name in``,
``case "k_rr":`` or ``isinstance(design, Crosswise)``. Branching on a question's ``kind``
stays allowed where the UI differs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from estimator.designs import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
NAMES = "|".join(sorted({re.escape(name) for _, name in REGISTRY}))
CLASSES = "|".join(sorted(cls.__name__ for cls in REGISTRY.values()))
LITERAL = rf"""["'](?:{NAMES})["']"""
BRANCH = re.compile(
    rf"(?:===?|!==?)\s*{LITERAL}"  # x == "forced_response"
    rf"|{LITERAL}\s*(?:===?|!==?|\bin\b)"  # "k_rr" == x, "k_rr" in names
    rf"|\bin\s*[\(\[\{{]\s*{LITERAL}"  # x in ("mirrored", …)
    rf"|\bcase\s+{LITERAL}"  # switch (name) { case "laplace": … }
    r"|design_name\s*(?:===?|!==?|\bin\b)"  # question.design_name == …
    r"|design\.name\s*(?:===?|!==?|\bin\b)"  # design.name in …
    rf"|isinstance\([^)]*\b(?:{CLASSES})\b"  # isinstance(design, Crosswise)
)
# Files of the app that ask about designs; the design core (estimator/designs.py and
# the modules beside it that only re-export it) and migrations are left out.
SCANNED = [
    *ROOT.glob("survey/**/*.py"),
    *ROOT.glob("classroom/**/*.py"),
    *ROOT.glob("analysis/**/*.py"),
    *ROOT.glob("responses/**/*.py"),
    *(p for p in ROOT.glob("estimator/**/*.py") if p.name not in {"designs.py", "params.py"}),
    *ROOT.glob("templates/**/*.html"),
    ROOT / "static/survey/respond.js",
]


def branches(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for n, line in enumerate(text.splitlines(), start=1)
        if BRANCH.search(line)
    ]


def scanned() -> list[Path]:
    return sorted(p for p in SCANNED if p.exists() and "migrations" not in p.parts)


def test_the_scan_covers_the_app():
    paths = {str(p.relative_to(ROOT)) for p in scanned()}
    assert {"survey/models.py", "analysis/results.py", "static/survey/respond.js"} <= paths
    assert "templates/analysis/dashboard.html" in paths


@pytest.mark.parametrize(
    "line",
    [
        'if design.name == "mirrored":',
        "if q.design_name in ALLOWED:",
        "{% if question.design_name == 'laplace' %}",
        'if (name === "k_rr") {',
        'case "forced_response":',
        'kind = "x" if name in ("crosswise", "direct") else "y"',
        "return isinstance(question.design, Crosswise)",
        "if not design.randomized or isinstance(design, (Laplace, DirectNumber)):",
    ],
)
def test_the_pattern_finds_a_branch_on_a_design_name(line):
    assert BRANCH.search(line)


@pytest.mark.parametrize(
    "line",
    [
        'if question.kind == "choice":',
        'design = make_design("binary", "forced_response")',
        'if f.name != "design_version"',
        "if isinstance(design, ChoiceDesign):",
    ],  # fmt: skip
)
def test_the_pattern_leaves_kinds_and_plain_use_of_names_alone(line):
    assert not BRANCH.search(line)


def test_no_app_code_branches_on_a_design_name():
    found = [hit for path in scanned() for hit in branches(path)]
    assert not found, "ask the design instead of branching on its name:\n" + "\n".join(found)
