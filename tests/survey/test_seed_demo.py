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


def test_every_analysis_page_shows_results_under_the_demo_login(client):
    """The README advertises breakdowns, cross-tabs and models: the demo has a directly
    asked faculty, and enough answers per faculty for none to be hidden."""
    call_command("seed_demo", stdout=io.StringIO())
    survey = Survey.objects.get(mode=Survey.Mode.RESEARCH)
    client.force_login(survey.owner)
    base = f"/surveys/{survey.id}/results"
    breakdown = client.get(f"{base}/breakdown/").content.decode()
    assert "<svg" in breakdown and "Law" in breakdown and 'role="alert"' not in breakdown
    crosstab = client.get(f"{base}/crosstab/").content.decode()
    assert "<svg" in crosstab and 'role="alert"' not in crosstab
    model = client.get(f"{base}/model/").content.decode()
    assert "<svg" in model and "[Law]" in model and 'role="alert"' not in model
