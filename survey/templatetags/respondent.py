"""Template helpers for respondent pages: chance devices, privacy in words, and the
served browser code."""

from __future__ import annotations

import json
import math
from collections import Counter

from django import template
from django.urls import reverse
from django.utils import translation
from django.utils.html import format_html, json_script
from django.utils.safestring import mark_safe
from django.utils.translation import gettext, gettext_noop

from survey import served_code
from survey.devices import (
    Draw,
    Step,
    arm_steps_for,
    device_for,
    innocuous_statement,
    is_two_fair_coins,
    needs_javascript,
    steps_for,
)
from survey.templatetags.privacy import epsilon as epsilon_text
from survey.templatetags.privacy import local_number, odds_bound, percent, whole

register = template.Library()


@register.filter
def lang(code: str | None) -> str:
    """` lang="de"` for a text in a language other than the page's (see
    :func:`survey.languages.mark_originals`), else nothing."""
    return format_html(' lang="{}"', code) if code else ""


# A step's name when it is the only one of its kind, and when there are several.
NAMES = {
    "coin": (gettext_noop("the coin"), gettext_noop("coin %(n)s")),
    "die": (gettext_noop("the die"), gettext_noop("die %(n)s")),
    "slips": (gettext_noop("the slip"), gettext_noop("slip %(n)s")),
    "number": (gettext_noop("the number"), gettext_noop("number %(n)s")),
    "certain": (gettext_noop("the rule"), gettext_noop("rule %(n)s")),
}


@register.filter
def chance_steps(question) -> list[dict]:
    """The question's randomizing steps, each with a short name ("coin 1", "the die")."""
    return _named(steps_for(question.design, question.options))


# The arms of a design with arms, as the page names them.
ARM_NAMES = ("A", "B")


@register.filter
def arm_steps(question) -> list[dict]:
    """A design with arms: per arm its name ("A", "B"), the chance it is drawn and its
    named steps; empty for other designs."""
    return [
        {"name": ARM_NAMES[j], "percent": percent(weight, 0), "steps": _named(steps)}
        for j, (weight, steps) in enumerate(arm_steps_for(question.design))
    ]


@register.filter
def ballot_device(question):
    """A split ballot: the everyday device that decides by hand, before answering,
    whether the question is asked directly (it comes up with the direct share)."""
    return device_for(question.design.direct_share)


@register.filter
def arm_device(question):
    """The everyday device that picks a design's arm by hand: set A with its weight."""
    return device_for(question.design.arm_weights[0])


def _named(steps: list[Step | Draw]) -> list[dict]:
    kinds = Counter(_kind(step) for step in steps)
    named = []
    for i, step in enumerate(steps, start=1):
        alone, numbered = NAMES[_kind(step)]
        name = gettext(numbered) % {"n": i} if kinds[_kind(step)] > 1 else gettext(alone)
        entry = {"step": step, "name": name, "number": i, "draw": isinstance(step, Draw)}
        named.append(entry | ({} if entry["draw"] else {"device": step.device}))
    return named


def _kind(step: Step | Draw) -> str:
    return step.kind if isinstance(step, Draw) else step.device.kind


@register.filter
def two_fair_coins(design) -> bool:
    return is_two_fair_coins(design)


@register.filter
def all_two_fair_coins(questions) -> bool:
    return all(is_two_fair_coins(q.design) for q in questions)


# JSON for a single-quoted attribute: compact, and no character that could end the
# attribute or start markup (as Django's json_script does for <script>), so it needs no
# &quot; entities, which would make up half of it.
ATTRIBUTE_SAFE = str.maketrans({"'": "\\u0027", "&": "\\u0026", "<": "\\u003c", ">": "\\u003e"})


def attribute_json(value) -> str:
    return mark_safe(json.dumps(value, separators=(",", ":")).translate(ATTRIBUTE_SAFE))


@register.filter
def sampler_params(question) -> str:
    """The parameters rr.js's ``sample(kind, name, params, …)`` takes: the stored ones,
    with a choice question's number of options as ``k``."""
    params = question.design.params()
    if question.kind == "choice":
        params["k"] = len(question.options)
    return attribute_json(params)


@register.filter
def declaration_json(question) -> str:
    """The design's parameter rules (not its labels and help, which only weigh the page
    down), for rr.js's ``checkParams`` before any draw."""
    rules = ("name", "type", "default", "min", "max", "exclusive_min", "exclusive_max")
    parameters = question.design.declaration()["parameters"]
    return attribute_json({"parameters": [{k: p[k] for k in rules} for p in parameters]})


@register.filter
def asks_same_or_different(question) -> bool:
    """Crosswise: the respondent compares two statements; that answer is the report."""
    return question.design.compares_statements


@register.filter
def innocuous(question) -> str:
    return innocuous_statement(question.design)


@register.filter
def needs_js(question) -> bool:
    return needs_javascript(question.design)


@register.filter
def any_options_shuffled(questions) -> bool:
    return any(q.shuffle_options for q in questions)


@register.filter
def any_needs_js(questions) -> bool:
    return any(needs_javascript(q.design) for q in questions)


@register.filter
def all_need_js(questions) -> bool:
    return all(needs_javascript(q.design) for q in questions)


@register.filter
def typical_noise(question) -> str:
    return local_number(f"{question.design.typical_noise:,.0f}")


def revealing_answers(design) -> set[int]:
    """The answers (0/1) of the reports that some true answer can never produce."""
    return {
        r % 2 for r, row in enumerate(design.response_matrix) if row.max() > 0 and row.min() == 0
    }


@register.filter
def privacy_words(question) -> str:
    """The question's ε in words, from its design."""
    design = question.design
    eps = design.epsilon
    if not design.randomized:
        return gettext("Asked directly: your answer is stored as you give it (ε = ∞, no privacy).")
    if not math.isfinite(eps) and design.has_arms and revealing_answers(design) == {0}:
        return gettext(
            "No privacy for a “no”: only someone whose true answer is no can send “no”. "
            "A “yes” is sent by people of either answer."
        )
    if not math.isfinite(eps) and design.asks_innocuous:
        return gettext(
            "No privacy against someone who knows your answer to the second question: from "
            "some reports they learn your answer to the first. To anyone else, a “yes” or a "
            "“no” can come from either true answer."
        )
    if not math.isfinite(eps):
        return gettext("No privacy for this question: its design can reveal your true answer.")
    numbers = {"epsilon": epsilon_text(eps), "odds": odds_bound(eps)}
    if design.sends_one_bit:
        numbers |= {"lower": whole(design.lower), "upper": whole(design.upper)}
        return (
            gettext(
                "ε = %(epsilon)s: only one bit (0 or 1) is sent, never your number; each bit is "
                "at most %(odds)s more likely for one true number than for any other "
                "between %(lower)s and %(upper)s."
            )
            % numbers
        )
    if design.kind == "number":
        numbers |= {
            "noise": typical_noise(question),
            "lower": whole(design.lower),
            "upper": whole(design.upper),
        }
        return (
            gettext(
                "ε = %(epsilon)s: what is sent is your number plus random noise of typical size "
                "±%(noise)s; a report is at most %(odds)s more likely for one true number "
                "than for any other between %(lower)s and %(upper)s."
            )
            % numbers
        )
    if design.kind == "choice":
        return (
            gettext(
                "ε = %(epsilon)s: whichever option is sent is at most %(odds)s more likely for one "
                "true answer than for any other."
            )
            % numbers
        )
    believed = 1 / (1 + math.exp(-eps))  # e^ε/(1 + e^ε), finite for every ε a design has
    numbers |= {"prior": percent(0.5, 0), "posterior": percent(believed, 0)}
    return (
        gettext(
            "ε = %(epsilon)s: what is sent is at most %(odds)s more likely if your true answer is "
            "yes than if it is no, or the other way round. Someone who thought it a %(prior)s "
            "chance that your true answer is yes would, seeing it, think it at most %(posterior)s."
        )
        % numbers
    )


@register.filter
def direct_count(survey) -> int:
    return len(survey.privacy.direct)


@register.filter
def randomized_count(survey) -> int:
    return len(survey.privacy.randomized)


@register.filter
def split_count(survey) -> int:
    """Questions on a split ballot: a respondent's device may ask them directly."""
    return sum(d.direct_share is not None for d in survey.privacy.randomized)


@register.simple_tag
def integrity(path: str, hashed: bool = True) -> str:
    return served_code.integrity(path, hashed=hashed)


@register.simple_tag
def unhashed_static(path: str) -> str:
    return served_code.unhashed_url(path)


@register.simple_tag
def how_it_works_url() -> str:
    """The "how it works" page in the language of the page linking to it."""
    url = reverse("survey:how_it_works")
    language = translation.get_language()
    return url if language == "en" else f"{url}?lang={language}"


def respond_sentences() -> dict[str, str]:
    """The sentences respond.js writes, in the page's language; ``{name}`` marks where
    the script puts a value."""
    return {
        "memo": gettext(
            "This device already made a randomized report for this question. That same "
            "report will be sent again, whatever you choose now: no coins are flipped, so "
            "answering again reveals nothing new."
        ),
        "numberRange": gettext("Please give a whole number from {min} to {max}."),
        "skipped": gettext("skipped (prefer not to answer)"),
        "progress": gettext("{done} of {total} questions answered or skipped"),
        "skipWhy": gettext(
            "A skip is sent as it is: nothing was randomized, and the researcher sees only "
            "that this question was skipped."
        ),
        "retrying": gettext(
            "Not sent yet ({reason}). Trying again in {seconds} s with the same answers…"
        ),
        "serverSaid": gettext("the server said {status}"),
        "noConnection": gettext("no connection"),
        "refusedInvite": gettext(
            "this invite link has already been used or is not valid. Nothing was stored."
        ),
        "refusedChanged": gettext(
            "the questions were changed after this page was opened. Reload the page to "
            "answer them as they are now. Nothing was stored."
        ),
        "refusedClosed": gettext(
            "this survey is not accepting answers any more. Nothing was stored."
        ),
        "refusedGone": gettext("this survey no longer exists. Nothing was stored."),
        "refusedOther": gettext("the survey refused these answers. Nothing was stored."),
        "sent": gettext("Sent — {reports}. Only these randomized answers left this device."),
        "sentAsGiven": gettext(
            "Sent — {reports}. Only these answers left this device: randomized, except those "
            "asked directly, which are as you gave them."
        ),
        "numbered": gettext("question {n}: {report}"),
        "offline": gettext(
            "Your answers could not be sent. They are kept on this device, already "
            "randomized: try again when you are online."
        ),
        "notSent": gettext("Not sent: {reason}"),
        "coins": gettext(
            "The coins could have chosen this answer whatever your true answer is, and "
            "nothing on this screen says whether they did."
        ),
        "again": gettext(
            "This is the randomized report this device made the first time, sent again: no "
            "coins were flipped now."
        ),
        "crosswise": gettext(
            "This is your answer, sent as you gave it: nobody knows your answer to statement "
            "B, so it does not reveal your answer to A."
        ),
        "direct": gettext("This question is asked directly: your answer is stored as you gave it."),
        "noise": gettext(
            "Your device added random noise before sending it: any true number could have "
            "given this report."
        ),
        "drawn": gettext(
            "Your device drew it: any option can be sent whatever your true answer, so "
            "nobody can tell whether this one is yours."
        ),
        "badSettings": gettext(
            "This survey's settings are not valid ({problems}). Nothing was sent."
        ),
        "flipping": gettext("Flipping and sending…"),
        "sending": gettext("Sending…"),
        "sendingAgain": gettext("Sending again with the same answers…"),
        "sendAgain": gettext("Send again"),
        "starting": gettext("Exchanging your invite for your one-time pass…"),
        "startFailed": gettext(
            "Your invite could not be exchanged yet (no connection or a server error). "
            "Press “Start” again in a moment."
        ),
        "inviteSpent": gettext(
            "This invite link has already been used or is not valid, so it cannot admit you "
            "again. If you have not answered yet, ask whoever sent it for a new link."
        ),
    }


@register.simple_tag
def respond_strings() -> str:
    """respond.js's sentences as a JSON data block (data, not code: the CSP allows it)."""
    return json_script(respond_sentences(), "respond-strings")


@register.simple_tag
def example_coin_strings() -> str:
    """example_coins.js's sentences as a JSON data block, in the page's language."""
    sentences = {
        "heads": gettext("heads"),
        "tails": gettext("tails"),
        "unused": gettext("not needed"),
        "yes": gettext("“yes”"),
        "no": gettext("“no”"),
        "truth": gettext(
            "Example: coin 1 showed heads, so the made-up answer {answer} would be sent."
        ),
        "forced": gettext(
            "Example: coin 1 showed tails, so coin 2 decides: {report} would be sent, "
            "whatever the answer."
        ),
        "tally": gettext(
            "With the made-up answer {answer}, {flips} flips so far would have sent "
            "{yes} times “yes” and {no} times “no”."
        ),
    }
    return json_script(sentences, "example-strings")
