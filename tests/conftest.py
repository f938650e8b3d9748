from __future__ import annotations

import os

import pytest
from django.core.management import call_command
from hypothesis import settings
from rest_framework.test import APIClient

from responses.answer_sheet import forget_cached_sheets
from survey.models import Survey

CLASSIC = {"p_truth": 0.5, "p_yes": 0.5}

# In CI every property test draws the same examples each run: a red run is reproducible,
# never a roll of the dice. Locally the examples vary and keep exploring.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_sessionstart(session) -> None:
    """Tests run with the production static storage (hashed, compressed files)."""
    import django

    django.setup()
    call_command("collectstatic", interactive=False, verbosity=0)


@pytest.fixture(autouse=True)
def empty_cache():
    """Rate-limit counters live in the cache or the host-wide store: each test starts
    with none."""
    from django.core.cache import cache

    from survey.ratelimit import forget_counters

    cache.clear()
    forget_counters()


@pytest.fixture(autouse=True)
def no_cached_answer_sheets() -> None:
    """Answer sheets are cached per process: each test starts with none, as a fresh
    process would, so no test sees a sheet cached by another."""
    forget_cached_sheets()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """PBKDF2's deliberate slowness costs about a second per user on a busy CI machine."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("owner", password="owner-password-1")


@pytest.fixture
def outsider(django_user_model):
    return django_user_model.objects.create_user("outsider", password="outsider-password-1")


@pytest.fixture
def api(owner) -> APIClient:
    """The REST API as the owner."""
    client = APIClient()
    client.force_authenticate(owner)
    return client


@pytest.fixture
def logged_in(client, owner):
    """The site as the owner, logged in."""
    client.force_login(owner)
    return client


@pytest.fixture
def make_survey(owner):
    def make(n_questions: int = 1, status: str = Survey.Status.OPEN, **fields) -> Survey:
        survey = Survey.objects.create(
            owner=fields.pop("owner", owner), title="Exam honesty", status=status, **fields
        )
        for i in range(n_questions):
            survey.questions.create(position=i, text=f"Question {i + 1}?", design_params=CLASSIC)
        return survey

    return make


@pytest.fixture
def survey(make_survey) -> Survey:
    return make_survey()
