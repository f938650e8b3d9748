"""Example coins on the "how it works" and classroom explain pages: the reader flips the
classic two coins on a made-up answer, the page says it is only an example, nothing
leaves the browser, the page is axe-clean, and without JavaScript the table of what the
coins send still explains them."""

from __future__ import annotations

import pytest

from tests.browser.conftest import PHONE
from tests.browser.test_every_page import serious_findings

pytestmark = pytest.mark.django_db(transaction=True)
PAGES = ["/how-it-works/", "/classroom/explain/"]
SENTENCES = (
    "Example: coin 1 showed heads, so the made-up answer “no” would be sent.",
    "Example: coin 1 showed tails, so coin 2 decides: “yes” would be sent, whatever the answer.",
    "Example: coin 1 showed tails, so coin 2 decides: “no” would be sent, whatever the answer.",
)


@pytest.mark.parametrize("path", PAGES)
def test_example_coins_flip_on_a_made_up_answer_and_send_nothing(
    live_server, browser, path, screenshot
):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    requests = []
    page.goto(live_server.url + path)
    page.on("request", lambda request: requests.append((request.method, request.url)))
    box = page.locator("[data-example-coins]")
    assert "Only an example." in box.inner_text()
    box.get_by_label("No", exact=True).check()
    flip = box.get_by_role("button", name="Flip the example coins")
    seen = set()
    for _ in range(40):
        flip.click()
        seen.add(box.locator("[data-example-result]").inner_text())
    assert seen == set(SENTENCES)  # every way the coins fall, for 40 flips: 1 − 3·¾⁴⁰ ≈ 1
    tally = box.locator("[data-example-tally]").inner_text()
    assert tally.startswith("With the made-up answer “no”, 40 flips so far would have sent")
    sent = [r for r in requests if r[0] != "GET" or "/static/" not in r[1]]
    assert sent == [], "an example flip made a request"  # the favicon may load late
    assert serious_findings(page) == []
    screenshot(page, f"example-coins-{path.strip('/').replace('/', '-')}")
    context.close()


@pytest.mark.parametrize("path", PAGES)
def test_without_javascript_the_table_explains_the_coins(live_server, browser, path):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + path)
    box = page.locator("[data-example-coins]")
    assert box.get_by_role("table").is_visible()
    assert "Coin 1 tails, coin 2 heads" in box.get_by_role("table").inner_text()
    assert not box.get_by_role("button", name="Flip the example coins").is_visible()
    context.close()
