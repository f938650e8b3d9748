"""The admin is where accounts are made: researchers do not sign themselves up.

A site admin adds a user under Users (username and password) and hands the credentials
over; from then on the researcher sees only their own surveys, in the pages and the API.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Model
from django.forms import BaseInlineFormSet, CharField, ModelForm, Textarea
from django.http import HttpRequest

from survey.limits import MAX_DESCRIPTION, MAX_QUESTIONS
from survey.models import DesignFrozen, Question, Survey


class QuestionInline(admin.TabularInline):
    """Editable only until the survey's first answer, like everywhere else."""

    model = Question
    extra = 0
    fields = ["position", "text", "kind", "options", "design_name", "design_params"]

    max_num = MAX_QUESTIONS

    def get_formset(self, request: HttpRequest, obj: Model | None = None, **kwargs):
        """More forms than ``max_num`` are an error, not silently dropped."""
        return super().get_formset(request, obj, validate_max=True, **kwargs)

    def _frozen(self, obj: Model | None) -> bool:
        return isinstance(obj, Survey) and obj.is_frozen

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        return self.fields if self._frozen(obj) else []

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return not self._frozen(obj) and super().has_add_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return not self._frozen(obj) and super().has_delete_permission(request, obj)


class SurveyAdminForm(ModelForm):
    description = CharField(required=False, max_length=MAX_DESCRIPTION, widget=Textarea)

    class Meta:
        model = Survey
        fields = "__all__"  # noqa: DJ007 (the admin's fieldsets decide)


@admin.register(Survey)
class SurveyAdmin(admin.ModelAdmin):
    form = SurveyAdminForm
    list_display = ["title", "owner", "mode", "status", "join_code", "created"]
    list_filter = ["mode", "status"]
    search_fields = ["title", "owner__username", "join_code"]
    readonly_fields = ["slug"]
    inlines = [QuestionInline]

    def save_formset(
        self, request: HttpRequest, form: ModelForm, formset: BaseInlineFormSet, change: bool
    ) -> None:
        """Question edits count a new design version, as in the builder and the API."""
        if formset.model is Question and change and formset.has_changed():
            try:
                form.instance.check_design_editable()
            except DesignFrozen as error:  # the first answer arrived while editing
                messages.error(request, f"The questions were not saved. {error}")
                return
        super().save_formset(request, form, formset, change)
