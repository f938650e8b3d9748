"""Template helpers for respondent pages: chance devices and the served browser code."""

from __future__ import annotations

from collections import Counter

from django import template

from survey import served_code
from survey.devices import Step, is_two_fair_coins, steps_for

register = template.Library()

NOUNS = {"coin": "coin", "die": "die", "slips": "slip", "number": "number", "certain": "rule"}


@register.filter
def chance_steps(question) -> list[dict]:
    """The question's randomizing steps, each with a short name ("coin 1", "the die")."""
    steps: list[Step] = steps_for(question.design)
    kinds = Counter(step.device.kind for step in steps)
    named = []
    for i, step in enumerate(steps, start=1):
        noun = NOUNS[step.device.kind]
        name = f"{noun} {i}" if kinds[step.device.kind] > 1 else f"the {noun}"
        named.append({"step": step, "device": step.device, "name": name, "number": i})
    return named


@register.filter
def all_two_fair_coins(questions) -> bool:
    return all(is_two_fair_coins(q.design) for q in questions)


@register.simple_tag
def integrity(path: str, hashed: bool = True) -> str:
    return served_code.integrity(path, hashed=hashed)


@register.simple_tag
def unhashed_static(path: str) -> str:
    return served_code.unhashed_url(path)
