"""Translating a survey into its further languages: one page per language with the
title, the description and every question's text and options beside the original.
Left blank, a text shows the original; a translated choice question needs every option."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from survey.builder import owned_survey
from survey.limits import MAX_DESCRIPTION
from survey.models import AuditEntry, Question, Survey

NAMES = dict(settings.LANGUAGES)


class TranslationForm(forms.Form):
    """The survey's wording in one language: fields ``title``, ``description`` and per
    question ``q<id>-text`` (and ``q<id>-options``, one per line, for a choice question;
    ``q<id>-innocuous`` for a question that asks an innocuous question beside it)."""

    title = forms.CharField(required=False, max_length=200, label="Title")
    description = forms.CharField(
        required=False,
        max_length=MAX_DESCRIPTION,
        label="Description",
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def __init__(self, survey: Survey, language: str, *args, **kwargs) -> None:
        self.survey, self.language = survey, language
        self.questions = list(survey.questions.all())
        texts = survey.texts.get(language, {})
        initial = {"title": texts.get("title", ""), "description": texts.get("description", "")}
        for q in self.questions:
            wording = q.texts.get(language, {})
            initial[f"q{q.id}-text"] = wording.get("text", "")
            initial[f"q{q.id}-options"] = "\n".join(wording.get("options", []))
            initial[f"q{q.id}-innocuous"] = wording.get("innocuous_text", "")
        super().__init__(*args, initial=initial, **kwargs)
        for number, q in enumerate(self.questions, start=1):
            self.fields[f"q{q.id}-text"] = forms.CharField(
                required=False, max_length=500, label=f"Question {number}", help_text=q.text
            )
            if q.kind == Question.Kind.CHOICE:
                self.fields[f"q{q.id}-options"] = forms.CharField(
                    required=False,
                    label=f"Question {number}: options, one per line",
                    help_text=" · ".join(q.options),
                    widget=forms.Textarea(attrs={"rows": len(q.options)}),
                )
            if q.innocuous_text:
                self.fields[f"q{q.id}-innocuous"] = forms.CharField(
                    required=False,
                    max_length=500,
                    label=f"Question {number}: the innocuous question",
                    help_text=q.innocuous_text,
                )

    def clean(self) -> dict:
        cleaned = super().clean()
        for q in self.questions:
            if cleaned.get(f"q{q.id}-innocuous") and not cleaned.get(f"q{q.id}-text"):
                self.add_error(
                    f"q{q.id}-text",
                    "Translate the question too: its innocuous question is shown beside it.",
                )
            if q.kind != Question.Kind.CHOICE or not cleaned.get(f"q{q.id}-text"):
                continue
            raw = cleaned.get(f"q{q.id}-options", "")
            options = [line.strip() for line in raw.splitlines() if line.strip()]
            if len(options) != len(q.options):
                self.add_error(
                    f"q{q.id}-options",
                    f"Give all {len(q.options)} options, one per line in the original's order "
                    f"(got {len(options)}).",
                )
            cleaned[f"q{q.id}-options"] = options
        return cleaned

    def save(self) -> None:
        data, language = self.cleaned_data, self.language
        texts = dict(self.survey.texts)
        texts.pop(language, None)
        if data["title"].strip():
            texts[language] = {"title": data["title"].strip()}
            if data["description"].strip():
                texts[language]["description"] = data["description"].strip()
        Survey.objects.filter(pk=self.survey.pk).update(texts=texts)
        for q in self.questions:
            wording = dict(q.texts)
            wording.pop(language, None)
            if text := data[f"q{q.id}-text"].strip():
                wording[language] = {"text": text}
                if q.kind == Question.Kind.CHOICE:
                    wording[language]["options"] = data[f"q{q.id}-options"]
                if innocuous := data.get(f"q{q.id}-innocuous", "").strip():
                    wording[language]["innocuous_text"] = innocuous
            Question.objects.filter(pk=q.pk).update(texts=wording)


@login_required
@require_http_methods(["GET", "POST"])
def translation(request: HttpRequest, survey_id: int, language: str) -> HttpResponse:
    survey = owned_survey(request, survey_id)
    if language not in survey.languages or language == survey.language:
        raise Http404("not one of the survey's further languages")
    form = TranslationForm(survey, language, request.POST or None)
    if request.method == "POST":
        with transaction.atomic():
            if form.is_valid():
                form.save()
                said = f"translation into {NAMES[language]} edited"
                AuditEntry.record(survey, request.user, AuditEntry.Action.WORDING, said)
                messages.success(request, f"{NAMES[language]} translation saved.")
                return redirect("survey:builder", survey.id)
    context = {"survey": survey, "form": form, "language": language, "name": NAMES[language]}
    return render(request, "survey/translation.html", context, status=400 if form.errors else 200)
