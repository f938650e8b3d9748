"""The classroom forms that other pages (the home page) embed."""

from __future__ import annotations

from django import template

from classroom.views import DEFAULT_QUESTION, DemoForm

register = template.Library()


@register.inclusion_tag("classroom/_demo_form.html")
def demo_form() -> dict:
    return {"form": DemoForm(), "default_question": DEFAULT_QUESTION}


@register.inclusion_tag("classroom/_join_form.html")
def join_form() -> dict:
    return {}
