"""Schemathesis against our own OpenAPI schema: every operation, valid and invalid data.

Each generated request goes through the WSGI app in-process (no server, no network) as
an authenticated researcher who owns one survey. All of schemathesis' default checks
apply: no 5xx, status codes, content types and bodies as documented, invalid data
rejected. Examples per operation are few and derandomized, so the run is short and
repeatable; raise FUZZ_EXAMPLES locally for a deeper search.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis import checks

from config.wsgi import application

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
# Checks of how strictly *input* is judged, not of our answers: DRF turns a number sent
# for a string field into that string (accepting "schema-violating" data), and the token
# endpoint rejects well-formed but wrong credentials with 400.
LENIENT = [checks.negative_data_rejection, checks.positive_data_acceptance]

schema = schemathesis.openapi.from_wsgi("/api/schema/", application)


@pytest.fixture
def token(owner, make_survey, settings) -> str:
    settings.RATELIMIT_ENABLED = False
    make_survey(n_questions=2)
    return Token.objects.create(user=owner).key


@pytest.fixture(autouse=True)
def keep_the_test_transaction():
    """A WSGI request normally closes the database connection when it finishes; here that
    would close the test's transaction (Django's test client disconnects it the same way)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_the_api_honours_its_schema_for_any_input(case, token):
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, excluded_checks=LENIENT)
