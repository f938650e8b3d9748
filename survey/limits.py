"""How big a survey may be: one place for the sizes every entry point enforces.

The API (create and PATCH), the builder, the admin and the respondent's submit endpoint
all read these, so a survey that one of them accepts is never one another refuses, and
no survey grows large enough to make its public page slow for everyone.
"""

from __future__ import annotations

# Questions per survey. A submission holds one answer per question, so this is also the
# most answers the submit endpoint takes.
MAX_QUESTIONS = 200
MAX_QUESTION_TEXT = 500  # Question.text's max_length
MAX_TITLE = 200  # Survey.title's max_length
MAX_DESCRIPTION = 5000
# A response quota: far above any survey, and still a small number for every count.
MAX_RESPONSE_QUOTA = 10**9


def too_many_questions(count: int) -> str | None:
    """The error for a survey of ``count`` questions, or None if that many is allowed."""
    if count > MAX_QUESTIONS:
        return f"A survey has at most {MAX_QUESTIONS} questions; this one would have {count}."
    return None
