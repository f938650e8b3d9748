"""An analysis run, as the survey's audit log says it: which questions, by whom (the
entry), to the hour; pages and API alike."""

from __future__ import annotations

from survey.models import AuditEntry, Survey


def analysis_said(result: dict) -> str:
    """``breakdown of “…” by “…”``, ``comparison of “…” between two groups of “…”``,
    ``cross-tab of “…” and “…”`` or ``model of “…” on “…”``."""
    if "difference" in result:
        return f"comparison of “{result['text']}” between two groups of “{result['by_text']}”"
    if "by_text" in result:
        return f"breakdown of “{result['text']}” by “{result['by_text']}”"
    if "a_text" in result:
        return f"cross-tab of “{result['a_text']}” and “{result['b_text']}”"
    covariates = ", ".join(f"“{c['text']}”" for c in result["covariates"])
    return f"model of {result['outcome_column']} on {covariates}"


def record_analysis(survey: Survey, user, result: dict) -> None:
    AuditEntry.record(survey, user, AuditEntry.Action.ANALYSIS, analysis_said(result))
