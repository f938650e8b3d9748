"""The QR codes a researcher shows (Distribute, the classroom join screen) scan as drawn on
screen, on a phone and on a laptop: decoded from a screenshot, not from the markup."""

from __future__ import annotations

import io

import pytest
import zxingcpp
from django.test import Client
from PIL import Image

from survey.models import Survey

pytestmark = pytest.mark.django_db(transaction=True)

SCREENS = ({"width": 390, "height": 844}, {"width": 1280, "height": 800})


def scanned(page, selector: str) -> list[str]:
    """What a QR reader finds in the screenshot of ``selector`` as the page draws it."""
    element = page.locator(selector)
    element.scroll_into_view_if_needed()
    image = Image.open(io.BytesIO(element.screenshot()))
    return [result.text for result in zxingcpp.read_barcodes(image)]


def test_the_distribute_and_join_screen_codes_scan_on_a_phone_and_a_laptop(
    live_server, browser, owner, make_survey
):
    survey = make_survey(mode=Survey.Mode.CLASSROOM)
    client = Client()
    client.force_login(owner)
    context = browser.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    link = live_server.url + survey.get_absolute_url()
    pages = {
        f"/surveys/{survey.id}/distribute/": (".qr", link),
        f"/classroom/{survey.id}/join/": (".qr-large", None),
    }
    for screen in SCREENS:
        page.set_viewport_size(screen)
        for path, (selector, expected) in pages.items():
            page.goto(live_server.url + path)
            box = page.locator(f"{selector} svg").bounding_box()
            where = f"{path} at {screen['width']} px"
            assert box["width"] >= 160, f"{where}: the code is drawn {box['width']:.0f} px wide"
            assert box["x"] >= 0 and box["x"] + box["width"] <= screen["width"], where
            # The join screen's code carries the link it prints (scheme added).
            expected = expected or "http://" + page.locator("[data-join-url]").inner_text()
            assert scanned(page, selector) == [expected], where
    context.close()
