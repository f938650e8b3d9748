from __future__ import annotations

from django.contrib import admin

from survey.models import Question, Survey


class QuestionInline(admin.TabularInline):
    model = Question
    extra = 0


@admin.register(Survey)
class SurveyAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "mode", "status", "join_code"]
    inlines = [QuestionInline]
