"""What the respondent's device keeps (SPEC §2, invariant 4), read as someone borrowing
the phone afterwards would: every kind of browser storage, after answering many times
with each true answer, in fresh browsers and in the same one."""

from __future__ import annotations

import json
import re

import pytest

from tests.storage import stored_count

pytestmark = pytest.mark.django_db(transaction=True)

SENT = "left this device"
SEND = re.compile("^(Flip and send|Send again)$")
# Replace the Web Crypto source with a fixed cycle of 32-bit words: an odd word is a
# "lose" for a fair coin. The classic design flips "truthful?" then "forced yes?".
FIXED_COINS = """
(() => {
  const words = %s;
  let i = 0;
  Object.defineProperty(crypto, "getRandomValues", { value: (array) => {
    for (let j = 0; j < array.length; j++) array[j] = words[i++ %% words.length];
    return array;
  } });
})();
"""
COINS = {
    "forced no": [1, 1],  # not truthful, coin 2 says no
    "forced yes": [1, 0],  # not truthful, coin 2 says yes
    "truthful": [0, 0],
}
EVERYTHING_STORED = """async () => {
  const dump = (storage) =>
    Object.fromEntries(Object.keys(storage).map((k) => [k, storage.getItem(k)]));
  const databases = await indexedDB.databases();
  return {
    local: dump(localStorage),
    session: dump(sessionStorage),
    indexedDB: databases.map((d) => d.name),
    caches: await caches.keys(),
  };
}"""


def expected_storage(survey, report: int, rounds=(1,)) -> dict:
    """All the device may keep: the report per (question, design version) and which
    rounds were answered. Nothing else, whatever the true answer was."""
    prefix = f"deniable:v1:{survey.slug}:"
    question = survey.questions.get()
    local = {
        f"{prefix}report:q{question.id}:d{survey.design_version}": json.dumps(
            {"report": report}, separators=(",", ":")
        )
    }
    local |= {f"{prefix}sent:r{r}": "true" for r in rounds}
    return {"local": local, "session": {}, "indexedDB": [], "caches": [], "cookies": []}


def stored_on(context, page) -> dict:
    return page.evaluate(EVERYTHING_STORED) | {"cookies": context.cookies()}


def answer(page, truth: int, requests) -> int:
    """Answer one question; the report that left the device."""
    page.get_by_role("button", name="Yes" if truth else "No").click()
    page.get_by_role("button", name=SEND).click()
    page.get_by_text(SENT).wait_for()
    body = json.loads([r for r in requests if r.method == "POST"][-1].post_data)
    (sent,) = body["answers"]
    return sent["value"]


def answer_in_a_fresh_browser(browser, url: str, truth: int, coins: list[int] | None):
    context = browser.new_context()
    if coins is not None:
        context.add_init_script(FIXED_COINS % json.dumps(coins))
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.goto(url)
    report = answer(page, truth, requests)
    return context, page, report


@pytest.mark.parametrize("coins", COINS)
def test_the_device_keeps_the_same_thing_for_either_true_answer_when_the_coins_agree(
    live_server, browser, survey, coins
):
    """Same coins, two true answers: the storage differs only if the report does."""
    url = live_server.url + survey.get_absolute_url()
    seen = {}
    for truth in (0, 1):
        context, page, report = answer_in_a_fresh_browser(browser, url, truth, COINS[coins])
        seen[truth] = (report, stored_on(context, page))
        context.close()
    for report, storage in seen.values():
        assert storage == expected_storage(survey, report)
    if coins != "truthful":
        assert seen[0] == seen[1]


def test_in_fresh_browsers_the_storage_is_a_function_of_the_report_alone(
    live_server, browser, survey
):
    """Real coins, each true answer several times: whatever was stored is exactly what
    the sent report predicts (no key, value, database or cookie reflects the truth)."""
    url = live_server.url + survey.get_absolute_url()
    for truth in (0, 1, 0, 1, 0, 1, 0, 1):
        context, page, report = answer_in_a_fresh_browser(browser, url, truth, None)
        storage = stored_on(context, page)
        context.close()
        assert storage == expected_storage(survey, report)
        assert "coin" not in json.dumps(storage) and "truth" not in json.dumps(storage)
    assert stored_count() == 8


def test_answering_again_on_the_same_device_sends_the_memoized_report_without_coins(
    live_server, browser, survey
):
    """Round after round, with either true answer, the first report is sent again, and
    the page says so instead of flipping coins."""
    context, page, first = answer_in_a_fresh_browser(
        browser, live_server.url + survey.get_absolute_url(), 1, None
    )
    requests = []
    page.on("request", lambda request: requests.append(request))
    for round_, truth in enumerate([0, 1, 0, 1, 0], start=2):
        survey.current_round = round_  # a classroom's new round: answering is open again
        survey.save(update_fields=["current_round"])
        page.reload()
        assert page.get_by_text("That same report will be sent again").is_visible()
        assert page.locator("[data-question] .steps").is_hidden()
        assert answer(page, truth, requests) == first
        assert page.get_by_text("sent again: no coins were flipped now").is_visible()
        assert page.get_by_text("Flipping and sending").count() == 0
        storage = stored_on(context, page)
        assert storage == expected_storage(survey, first, rounds=range(1, round_ + 1))
    context.close()
    assert stored_count() == 6


def test_memos_of_the_earlier_format_are_rewritten_to_their_report_alone(
    live_server, browser, survey
):
    """Earlier versions kept the true answer in the key and the coins in the value."""
    question = survey.questions.get()
    context = browser.new_context()
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request))
    url = live_server.url + survey.get_absolute_url()
    page.goto(url)
    old = {
        f"deniable:v1:{survey.slug}:q{question.id}:d1:1": {"report": 1, "coins": [False, True]},
        # Another survey answered both ways: the two reports disagree, neither is kept.
        "deniable:v1:other-survey:q7:d2:0": {"report": 0, "coins": [True, False]},
        "deniable:v1:other-survey:q7:d2:1": {"report": 1, "coins": [True, False]},
        "deniable:v1:third:q9:d1:0": {"report": 0, "coins": [False, False]},
    }
    page.evaluate(
        "(old) => Object.entries(old).forEach(([k, v]) => localStorage.setItem(k, v))",
        {key: json.dumps(value) for key, value in old.items()},
    )
    page.reload()
    assert page.evaluate("() => ({...localStorage})") == {
        f"deniable:v1:{survey.slug}:report:q{question.id}:d1": '{"report":1}',
        "deniable:v1:third:report:q9:d1": '{"report":0}',
    }
    assert answer(page, 0, requests) == 1
    assert stored_on(context, page)["local"] == expected_storage(survey, 1)["local"] | {
        "deniable:v1:third:report:q9:d1": '{"report":0}'
    }
    context.close()
