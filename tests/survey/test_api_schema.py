"""The OpenAPI schema validates, with no warnings (drf-spectacular's own validation)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command


def test_the_schema_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(out), stderr=io.StringIO()
    )
    text = out.read_text()
    assert "/api/surveys/{id}/export.csv/" in text
    assert "/api/surveys/{id}/import/" in text


@pytest.mark.django_db
def test_the_docs_page_works_offline(client, owner):
    client.force_login(owner)
    page = client.get("/api/docs/").content.decode()
    assert "drf_spectacular_sidecar/swagger-ui-dist/" in page
    assert "cdn" not in page.lower()
