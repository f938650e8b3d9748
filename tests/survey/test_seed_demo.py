from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from survey.models import Survey

pytestmark = pytest.mark.django_db


def test_it_prints_links_that_open_as_they_are():
    out = io.StringIO()
    call_command(
        "seed_demo", "--responses", "24", "--base-url", "http://127.0.0.1:8123/", stdout=out
    )
    survey = Survey.objects.get(mode=Survey.Mode.RESEARCH)
    text = out.getvalue()
    assert "http://127.0.0.1:8123/accounts/login/" in text
    assert f"http://127.0.0.1:8123/s/{survey.slug}/" in text
    assert "http://127.0.0.1:8123/classroom/new/" in text


def test_the_research_dashboard_speaks_of_responses_not_rounds(client):
    call_command("seed_demo", "--responses", "24", stdout=io.StringIO())
    survey = Survey.objects.get(mode=Survey.Mode.RESEARCH)
    client.force_login(survey.owner)
    page = client.get(f"/surveys/{survey.id}/results/").content.decode()
    assert "<strong data-n-responses>24</strong> responses" in page
    assert "this round" not in page
