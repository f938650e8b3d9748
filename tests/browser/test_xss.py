"""Titles and questions full of HTML and JavaScript stay text on every page, in Chromium.

The pages are the ones tests/test_security.py finds by walking the URL configuration;
each is loaded as its owner in a real browser, which would run any payload that reached
the DOM as markup (and report any that the Content-Security-Policy had to block).
"""

from __future__ import annotations

import pytest
from django.test import Client

from survey.models import Survey
from tests.test_security import XSS_DESCRIPTION, XSS_QUESTION, html_pages

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.rendering]

PAYLOAD = "<img src=x onerror=\"window.__xss='{where}'\"><script>window.__xss='{where}'</script>"


def hostile(make_survey, mode: str) -> Survey:
    survey = make_survey(n_questions=2, mode=mode, description=XSS_DESCRIPTION)
    Survey.objects.filter(pk=survey.pk).update(title=PAYLOAD.format(where="title"))
    survey.questions.update(text=PAYLOAD.format(where="question") + XSS_QUESTION)
    survey.refresh_from_db()
    return survey


def test_hostile_text_is_inert_on_every_page(live_server, context, owner, make_survey):
    surveys = [hostile(make_survey, mode) for mode in Survey.Mode.values]
    client = Client()
    client.force_login(owner)
    paths = sorted({path for s in surveys for path, _ in html_pages(client, s).values()})
    assert len(paths) >= 10
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    dialogs, violations = [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on(
        "console",
        lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    for path in paths:
        page.goto(live_server.url + path)
        page.wait_for_load_state("load")
        assert page.evaluate("window.__xss") is None, path
    assert dialogs == []
    assert violations == []
    page.goto(live_server.url + surveys[0].get_absolute_url())
    assert PAYLOAD.format(where="title") in page.inner_text("body")
