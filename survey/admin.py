"""The admin is where accounts are made: researchers do not sign themselves up.

A site admin adds a user under Users (username and password) and hands the credentials
over; from then on the researcher sees only their own surveys, in the pages and the API.
"""

from __future__ import annotations

from django.contrib import admin

from survey.models import Question, Survey


class QuestionInline(admin.TabularInline):
    model = Question
    extra = 0
    fields = ["position", "text", "kind", "design_name", "design_params"]


@admin.register(Survey)
class SurveyAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "mode", "status", "join_code", "created"]
    list_filter = ["mode", "status"]
    search_fields = ["title", "owner__username", "join_code"]
    readonly_fields = ["slug"]
    inlines = [QuestionInline]
