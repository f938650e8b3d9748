"""The classroom forms that other pages (the home page) embed."""

from __future__ import annotations

from django import template

from classroom import views
from classroom.views import DEFAULT_QUESTION, DemoForm

register = template.Library()


@register.inclusion_tag("classroom/_demo_form.html")
def demo_form() -> dict:
    return {"form": DemoForm(), "default_question": DEFAULT_QUESTION}


@register.inclusion_tag("classroom/_join_form.html")
def join_form() -> dict:
    return {}


@register.simple_tag
def student_poll_seconds() -> int:
    """How often a phone on a class question asks for the class status."""
    return views.STUDENT_STATUS_POLL_SECONDS
