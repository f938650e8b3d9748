"""Builder forms: survey settings, and a question with its randomization design."""

from __future__ import annotations

import math

from django import forms

from estimator.randomized_response import BinaryDesign, ForcedResponse, design_from_params
from survey.models import Question, Survey

# (label, design); "custom" takes the parameters from the form.
PRESETS: dict[str, tuple[str, BinaryDesign | None]] = {
    "classic": ("Classic two coins, ε = ln 3", ForcedResponse(p_truth=0.5, p_yes=0.5)),
    "stronger": ("Stronger privacy, ε = ln(5/3) ≈ 0.51", ForcedResponse(p_truth=0.25, p_yes=0.5)),
    "custom": ("Custom", None),
}
DESIGN_LABELS = {
    "forced_response": "Forced response (coins decide some answers)",
    "mirrored": "Mirrored question (Warner: answer the question or its negation)",
    "unrelated_question": "Unrelated question with known prevalence",
}
PARAMETERS = {
    "forced_response": ("p_truth", "p_yes"),
    "mirrored": ("p",),
    "unrelated_question": ("p_truth", "pi"),
}


def probability_field(label: str, help_text: str) -> forms.FloatField:
    return forms.FloatField(
        label=label,
        help_text=help_text,
        required=False,
        widget=forms.NumberInput(attrs={"step": "any", "inputmode": "decimal"}),
    )


class SurveyForm(forms.ModelForm):
    class Meta:
        model = Survey
        fields = ["title", "description", "mode", "requires_invite"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}
        labels = {"requires_invite": "Require a one-time invite to answer"}


class QuestionForm(forms.Form):
    text = forms.CharField(max_length=500, label="Question")
    preset = forms.ChoiceField(
        choices=[(key, label) for key, (label, _) in PRESETS.items()], initial="classic"
    )
    design_name = forms.ChoiceField(
        label="Design",
        choices=list(DESIGN_LABELS.items()),
        initial="forced_response",
        required=False,
    )
    p_truth = probability_field("P(answer truthfully)", "the first coin: tell the truth")
    p_yes = probability_field("P(forced “yes”)", "otherwise the second coin says yes")
    p = probability_field("P(answer as asked)", "otherwise answer the negated question")
    pi = probability_field("Known prevalence π", "of the innocuous question")
    allow_no_privacy = forms.BooleanField(
        required=False,
        label="I understand: this design gives no privacy (ε = ∞) — save it anyway",
    )

    @classmethod
    def for_question(cls, question: Question, **kwargs) -> QuestionForm:
        design = question.design
        preset = next((k for k, (_, d) in PRESETS.items() if d == design), "custom")
        initial = {
            "text": question.text,
            "preset": preset,
            "design_name": question.design_name,
            "allow_no_privacy": math.isinf(design.epsilon),
            **design.params(),
        }
        return cls(initial=initial, prefix=f"q{question.id}", **kwargs)

    def clean(self) -> dict:
        cleaned = super().clean()
        design = self._design(cleaned)
        if design is not None:
            if math.isinf(design.epsilon) and not cleaned.get("allow_no_privacy"):
                self.add_error(
                    "allow_no_privacy",
                    "This design gives no privacy (ε = ∞): some answers reveal the truth. "
                    "Change the parameters, or tick this box to save it anyway.",
                )
            cleaned["design"] = design
        return cleaned

    def _design(self, cleaned: dict) -> BinaryDesign | None:
        preset = cleaned.get("preset")
        if preset is None:
            return None
        if PRESETS[preset][1] is not None:
            return PRESETS[preset][1]
        name = cleaned.get("design_name")
        if not name:
            if "design_name" not in self.errors:
                self.add_error("design_name", "Choose a design.")
            return None
        params = {}
        for field in PARAMETERS[name]:
            value = cleaned.get(field)
            if value is None:
                if field not in self.errors:
                    self.add_error(field, "Enter a probability between 0 and 1.")
            elif not 0 <= value <= 1:
                self.add_error(field, f"Must be between 0 and 1 (a probability), not {value}.")
            else:
                params[field] = value
        if len(params) < len(PARAMETERS[name]):
            return None
        try:
            return design_from_params(name, params)
        except ValueError as error:
            self.add_error(None, str(error))
            return None

    def save_to(self, question: Question) -> Question:
        design = self.cleaned_data["design"]
        question.text = self.cleaned_data["text"]
        question.design_name = design.name
        question.design_params = design.params()
        question.save()
        return question
