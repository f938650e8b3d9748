"""Fixtures the breakdown, cross-tab and regression tests share: a viewer the survey is
shared with, the personas of the isolation tests, and the seeded study survey."""

from __future__ import annotations

import pytest

from survey.models import Survey
from tests.analysis.analysis_data import analysis_survey, share


@pytest.fixture
def viewer(django_user_model):
    return django_user_model.objects.create_user("viewer", password="viewer-password-1")


@pytest.fixture
def personas(owner, viewer, outsider):
    return {"owner": owner, "viewer": viewer, "outsider": outsider}


@pytest.fixture
def study(owner, viewer) -> Survey:
    """The analysis survey (no answers yet), shared with ``viewer``."""
    survey = analysis_survey(owner)
    share(survey, viewer)
    return survey
