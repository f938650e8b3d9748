"""Builder display helpers: fields marked invalid for assistive technology, labels."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def invalid(field, auto_id: str) -> str:
    """The field's widget marked invalid and described by its error message."""
    return field.as_widget(attrs={"aria-invalid": "true", "aria-describedby": f"{auto_id}-error"})


@register.filter
def field_label(form, name: str) -> str:
    return form.fields[name].label if name in form.fields else name
