"""Builder forms: survey settings, and a question of any kind with its design.

A question form is built for one kind and one design: its parameter fields come from
that design's declaration (``Design.PARAMS``), never written out per design here. A
preset fixes some parameters (ε, or both coins); the others stay fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.conf import settings
from django.utils import timezone

from estimator.designs import KINDS, REGISTRY, Design, make_design
from estimator.params import CHOICE_MAX_OPTIONS, CHOICE_MIN_OPTIONS, Param
from estimator.split import with_direct_share
from survey.limits import MAX_DESCRIPTION, MAX_QUESTION_TEXT, MAX_RESPONSE_QUOTA
from survey.models import (
    CLASSROOM_SPLIT,
    MIN_CELL_FLOOR,
    Question,
    Survey,
    innocuous_text_for,
    texts_without_stale_innocuous,
)

# Parameters typed as a list of probabilities in one text field.
LIST_TYPES = ("probabilities", "probability_pair")
KIND_LABELS = {"binary": "Yes / no", "choice": "Multiple choice", "number": "Number"}
LN3 = math.log(3)


@dataclass(frozen=True)
class Preset:
    label: str
    design_name: str
    fixed: dict[str, Any] = field(default_factory=dict)


CUSTOM = "custom"
DIRECT = Preset("Asked directly: not sensitive, no privacy (ε = ∞)", "direct")
# Per kind, the first preset is the default for a new question of that kind.
PRESETS: dict[str, dict[str, Preset]] = {
    "binary": {
        "classic": Preset(
            "Classic two coins, ε = ln 3", "forced_response", {"p_truth": 0.5, "p_yes": 0.5}
        ),
        "stronger": Preset(
            "Stronger privacy, ε = ln(5/3) ≈ 0.51",
            "forced_response",
            {"p_truth": 0.25, "p_yes": 0.5},
        ),
        "crosswise": Preset("Crosswise (same or different?), ε = ln 3", "crosswise", {"p": 0.25}),
        "direct": DIRECT,
    },
    "choice": {
        "choice_ln3": Preset("Multiple choice, ε = ln 3", "k_rr", {"epsilon": LN3}),
        "choice_stronger": Preset(
            "Multiple choice, stronger privacy, ε = 0.5", "k_rr", {"epsilon": 0.5}
        ),
        "direct": DIRECT,
    },
    "number": {
        "number_1": Preset("Number, ε = 1", "laplace", {"epsilon": 1.0}),
        "number_stronger": Preset("Number, stronger privacy, ε = 0.5", "laplace", {"epsilon": 0.5}),
        "direct": DIRECT,
    },
}


def default_preset(kind: str) -> str:
    return next(iter(PRESETS[kind]))


def designs_of(kind: str) -> list[type[Design]]:
    return [cls for (k, _), cls in REGISTRY.items() if k == kind]


def param_field(param: Param) -> forms.Field:
    """A form field for one declared parameter: the declaration gives its label, help,
    type and bounds; the design's own check (run in ``clean``) has the last word."""
    declared = param.to_json()
    attrs = {"step": "any", "inputmode": "decimal"}
    attrs |= {key: declared[key] for key in ("min", "max") if declared[key] is not None}
    common = {"label": declared["label"], "help_text": declared["help"], "required": False}
    if param.type == "integer":
        attrs |= {"step": "1", "inputmode": "numeric"}
        return forms.IntegerField(widget=forms.NumberInput(attrs=attrs), **common)
    if param.type in LIST_TYPES:
        common["help_text"] += (
            " — e.g. 0.25, 0.75"
            if param.type == "probability_pair"
            else (" — e.g. 0.25, 0.25, 0.5")
        )
        return forms.CharField(widget=forms.TextInput(attrs={"inputmode": "decimal"}), **common)
    return forms.FloatField(widget=forms.NumberInput(attrs=attrs), **common)


def parse_probabilities(raw: str) -> tuple[float, ...] | None:
    """ "0.25, 0.25, 0.5" (or in brackets) → (0.25, 0.25, 0.5); blank → None (the
    design's default)."""
    raw = raw.strip().strip("[]()").strip()
    if not raw:
        return None
    try:
        return tuple(float(part) for part in raw.replace(";", ",").split(","))
    except ValueError:
        raise forms.ValidationError(
            "Enter one probability per option, separated by commas (e.g. 0.25, 0.25, 0.5)."
        ) from None


class SurveyForm(forms.ModelForm):
    description = forms.CharField(
        required=False, max_length=MAX_DESCRIPTION, widget=forms.Textarea(attrs={"rows": 2})
    )

    language = forms.ChoiceField(
        choices=settings.LANGUAGES,
        required=False,
        label="Language of the respondent pages",
        help_text="The language respondents read the pages and the privacy explanation in "
        "(write the title and questions in it too). Classroom phones follow each "
        "student's browser language instead.",
    )

    min_cell_count = forms.IntegerField(
        required=False,
        min_value=MIN_CELL_FLOOR,
        max_value=1000,
        label="Smallest group shown (k)",
        help_text="Breakdowns hide every group with fewer respondents than this, and viewers "
        "see results change only after this many new respondents. At least 5; it cannot be "
        "lowered once answers exist.",
    )

    languages = forms.MultipleChoiceField(
        choices=settings.LANGUAGES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Further languages respondents can pick",
        help_text="Respondents get a language choice on the page (their browser's language "
        "first); translate the title and questions into each on its own page. Answers are "
        "the same whatever language was shown.",
    )

    consent_text = forms.CharField(
        required=False,
        max_length=MAX_DESCRIPTION,
        label="Consent text",
        help_text="Shown before the questions; nothing is sent until the respondent agrees. "
        "Leave empty for no consent step.",
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    class Meta:
        model = Survey
        fields = [
            "title",
            "description",
            "mode",
            "language",
            "languages",
            "requires_invite",
            "allow_skip",
            "shuffle_questions",
            "consent_text",
            "completion_url",
            "min_cell_count",
            "population_size",
        ]
        labels = {
            "requires_invite": "Require a one-time invite to answer",
            "allow_skip": "Offer “Prefer not to answer” on every question",
            "shuffle_questions": "Shuffle the question order on each respondent's device",
            "population_size": "Population size (N)",
            "completion_url": "Completion link (panels)",
        }
        help_texts = {
            "completion_url": "After sending, respondents get a button to this address. "
            "{NAME} is replaced, in their browser only, by the parameter NAME of the link "
            "they came with, e.g. ?pid={PROLIFIC_PID}. The server never sees those values.",
            "allow_skip": "A skip is sent as a skip (never randomized, and the researcher "
            "sees that the question was skipped) and counted apart; estimates are for those "
            "who answered. Fixed once the first answer arrives.",
            "shuffle_questions": "Each device shows the questions in its own random order; "
            "a conditional question stays right after the one it depends on. The server never "
            "learns the order shown. Pages without JavaScript show the survey's own order.",
            "population_size": "How many people your respondents are drawn from, if known "
            "(e.g. the 240 students of a course): intervals then shrink by the "
            "finite-population correction. Empty: a large population.",
        }
        widgets = {"population_size": forms.NumberInput(attrs={"min": 2})}

    def clean_language(self) -> str:
        """Left out of a post (older pages, scripts): the language stays as it was."""
        return self.cleaned_data["language"] or self.instance.language

    def clean_mode(self) -> str:
        """A survey with a split ballot stays a research survey (see CLASSROOM_SPLIT)."""
        mode = self.cleaned_data["mode"]
        survey = self.instance
        if (
            mode == Survey.Mode.CLASSROOM
            and survey.pk
            and survey.questions.filter(direct_share__isnull=False).exists()
        ):
            raise forms.ValidationError(CLASSROOM_SPLIT)
        return mode

    def clean_min_cell_count(self) -> int:
        """Left out of a post: it stays as it was."""
        k = self.cleaned_data["min_cell_count"]
        if k is None:
            return self.instance.min_cell_count
        if refusal := self.instance.threshold_refusal(k):
            raise forms.ValidationError(refusal)
        return k


class NewSurveyForm(SurveyForm):
    """The survey list's "new survey": a title first; the rest keeps the model's defaults
    (skips allowed) until the builder's settings change them."""

    class Meta(SurveyForm.Meta):
        fields = ["title", "description", "mode", "language", "requires_invite"]


class ClosingForm(forms.ModelForm):
    """When the survey closes itself: a date and time, a number of responses, or both."""

    class Meta:
        model = Survey
        fields = ["closes_at", "response_quota", "retention_days"]
        labels = {
            "closes_at": "Close automatically at",
            "response_quota": "Response quota",
            "retention_days": "Delete responses this many days after closing",
        }
        help_texts = {
            "closes_at": "Server time (UTC). Leave empty to close by hand.",
            "response_quota": "Close once this many people have answered (empty: no limit).",
            "retention_days": "Respondents are told. Empty: kept until you delete the "
            "survey. Once answers exist it can only get shorter.",
        }
        widgets = {
            "closes_at": forms.DateTimeInput(
                attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"
            ),
            "response_quota": forms.NumberInput(attrs={"min": 1, "max": MAX_RESPONSE_QUOTA}),
            "retention_days": forms.NumberInput(attrs={"min": 1}),
        }

    def clean_closes_at(self):
        closes_at = self.cleaned_data.get("closes_at")
        if closes_at is not None and closes_at <= timezone.now():
            raise forms.ValidationError("Choose a time in the future (or leave it empty).")
        return closes_at

    def clean_retention_days(self) -> int | None:
        days = self.cleaned_data.get("retention_days")
        if error := self.instance.retention_error(days):
            raise forms.ValidationError(error)
        return days

    def clean_response_quota(self) -> int | None:
        quota = self.cleaned_data.get("response_quota")
        if quota is not None and quota < 1:
            raise forms.ValidationError("A quota is at least one response.")
        if quota is not None and quota > MAX_RESPONSE_QUOTA:
            raise forms.ValidationError(f"A quota is at most {MAX_RESPONSE_QUOTA:,} responses.")
        return quota


class RewordForm(forms.Form):
    """The only change a question takes once answers exist: its wording."""

    text = forms.CharField(max_length=500, label="Question wording")


class QuestionForm(forms.Form):
    """One question: text, kind, preset or custom design, its parameters, options.

    The form's fields depend on the kind, preset and design it is built for, read from
    ``data`` (a bound form) or ``initial``: see :meth:`for_state`.
    """

    text = forms.CharField(max_length=MAX_QUESTION_TEXT, label="Question")
    # Missing means yes/no (forms and scripts written before other kinds existed).
    kind = forms.ChoiceField(
        label="Kind of answer", choices=list(KIND_LABELS.items()), required=False
    )
    preset = forms.ChoiceField(
        label="Preset",
        error_messages={"invalid_choice": "Choose one of the presets listed for this kind."},
    )
    design_name = forms.ChoiceField(
        label="Design",
        error_messages={"invalid_choice": "Choose one of the designs listed for this kind."},
    )
    options = forms.CharField(
        label="Options",
        required=False,
        help_text=f"One per line, {CHOICE_MIN_OPTIONS} to {CHOICE_MAX_OPTIONS}, in order.",
        widget=forms.Textarea(attrs={"rows": 4}),
    )
    shuffle_options = forms.BooleanField(
        required=False,
        label="Shuffle the options on each respondent's device",
        help_text="Each device shows the options in its own random order; a report is still "
        "the option's place in your list, so the server never learns the order shown.",
    )
    direct_share = forms.FloatField(
        required=False,
        label="Split ballot: share asked directly (optional)",
        help_text="Between 0 and 1, e.g. 0.2. This share of respondents, drawn by their own "
        "device, answers this question directly, without privacy for this question, and is "
        "told so before answering; the results compare their answers with the randomized "
        "estimate. Leave empty to randomize for everyone.",
        error_messages={"invalid": "Enter a number between 0 and 1, such as 0.2."},
        widget=forms.NumberInput(attrs={"step": "any", "min": "0", "max": "1"}),
    )
    innocuous_text = forms.CharField(
        max_length=MAX_QUESTION_TEXT,
        required=False,
        label="Innocuous question",
        help_text="A yes/no question that is not sensitive and whose answer nobody else "
        "knows, e.g. “Were you born in the first half of the year?”. Respondents answer "
        "both; their device sends one of the two answers.",
    )
    confirm_no_privacy = forms.BooleanField(required=False)

    def __init__(self, *args, split_allowed: bool = True, **kwargs) -> None:
        """``split_allowed`` is False in a classroom, whose projector shows one result per
        question (no split ballot there)."""
        super().__init__(*args, **kwargs)
        self.kind_value = self._chosen("kind", KINDS, "binary")
        presets = PRESETS[self.kind_value]
        self.preset_value = self._chosen(
            "preset", [*presets, CUSTOM], default_preset(self.kind_value)
        )
        self.fields["preset"].choices = [
            *((key, p.label) for key, p in presets.items()),
            (CUSTOM, "Custom: choose the design and its parameters"),
        ]
        classes = designs_of(self.kind_value)
        self.fields["design_name"].choices = [(cls.name, cls.label) for cls in classes]
        if self.preset_value == CUSTOM:
            name = self._chosen("design_name", [c.name for c in classes], classes[0].name)
            self.fixed: dict[str, Any] = {}
        else:
            preset = presets[self.preset_value]
            name, self.fixed = preset.design_name, preset.fixed
            # The preset decides; the hidden value only seeds a switch to "Custom".
            self.fields["design_name"] = forms.CharField(required=False, widget=forms.HiddenInput())
            self.initial["design_name"] = name
        self.design_class = REGISTRY[(self.kind_value, name)]
        self.design_name_value = name
        self.param_names = [p.name for p in self.design_class.PARAMS if p.name not in self.fixed]
        for param in self.design_class.PARAMS:
            if param.name in self.fixed:
                continue
            self.fields[param.name] = param_field(param)
            if param.default is not None and param.name not in self.initial:
                self.initial[param.name] = (
                    ", ".join(f"{v:g}" for v in param.default)
                    if isinstance(param.default, tuple)
                    else param.default
                )
        if self.kind_value != "choice":
            del self.fields["options"], self.fields["shuffle_options"]
        offered = self.design_class.offers_split_ballot and self.design_class.randomized
        if not (split_allowed and offered):
            del self.fields["direct_share"]
        if not self.design_class.asks_innocuous:
            del self.fields["innocuous_text"]
        self.direct = not self.design_class.randomized
        self.fields["confirm_no_privacy"].label = (
            "This question is not sensitive: ask it directly. Its answers are stored as "
            "given, with no privacy at all (ε = ∞)."
            if self.direct
            else "I understand: this design gives no privacy (ε = ∞) — save it anyway"
        )

    def _chosen(self, name: str, allowed, default: str) -> str:
        """The kind, preset or design the form is for; a value that does not fit (a kind
        just changed) falls back to the default, and ``clean`` reports it if submitted."""
        raw = self.data.get(self.add_prefix(name)) if self.is_bound else self.initial.get(name)
        return raw if raw in allowed else default

    @classmethod
    def for_question(cls, question: Question, **kwargs) -> QuestionForm:
        design = question.design
        stored = design.params()
        preset = next(
            (
                key
                for key, p in PRESETS[question.kind].items()
                if REGISTRY.get((question.kind, p.design_name)) is type(design)
                and all(stored.get(n) == v for n, v in p.fixed.items())
            ),
            CUSTOM,
        )
        initial = {
            "text": question.text,
            "kind": question.kind,
            "preset": preset,
            "design_name": question.design_name,
            "options": "\n".join(question.options),
            "shuffle_options": question.shuffle_options,
            "direct_share": question.direct_share,
            "innocuous_text": question.innocuous_text,
            "confirm_no_privacy": not design.is_private,
            **{
                name: ", ".join(f"{v:g}" for v in value) if isinstance(value, list) else value
                for name, value in stored.items()
            },
        }
        return cls(initial=initial, prefix=f"q{question.id}", **kwargs)

    @classmethod
    def redrawn(cls, data, prefix: str, **kwargs) -> QuestionForm:
        """An unbound form showing what was typed, redrawn for a newly chosen kind,
        preset or design (no errors yet: nothing was submitted)."""
        initial = {
            name[len(prefix) + 1 :]: value
            for name, value in data.items()
            if name.startswith(f"{prefix}-")
        }
        for box in ("confirm_no_privacy", "shuffle_options"):
            initial[box] = bool(initial.get(box))
        return cls(initial=initial, prefix=prefix, **kwargs)

    def param_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.param_names]

    def fixed_fields(self) -> list[tuple[str, Any]]:
        """Hidden inputs for the preset's parameters, so that switching to "Custom"
        starts from the preset's design."""
        return [(self.add_prefix(name), value) for name, value in self.fixed.items()]

    @property
    def shows_confirmation(self) -> bool:
        if self.direct:
            return True
        return bool(self.is_bound and "confirm_no_privacy" in self.errors) or bool(
            self["confirm_no_privacy"].value()
        )

    def clean_options(self) -> list[str]:
        raw = self.cleaned_data.get("options") or ""
        options = [line.strip() for line in raw.strip().splitlines()]
        if len(options) < CHOICE_MIN_OPTIONS or (len(options) == 1 and not options[0]):
            raise forms.ValidationError(
                f"A multiple-choice question needs at least {CHOICE_MIN_OPTIONS} options, "
                "one per line."
            )
        if len(options) > CHOICE_MAX_OPTIONS:
            raise forms.ValidationError(
                f"At most {CHOICE_MAX_OPTIONS} options, got {len(options)}: merge some."
            )
        if empty := [i + 1 for i, o in enumerate(options) if not o]:
            raise forms.ValidationError(
                f"Option {empty[0]} is empty: give it a text or remove the line."
            )
        seen: set[str] = set()
        for option in options:
            if option.casefold() in seen:
                raise forms.ValidationError(
                    f"“{option}” appears twice: each option must be different."
                )
            seen.add(option.casefold())
        if any(len(o) > 200 for o in options):
            raise forms.ValidationError("Keep each option under 200 characters.")
        return options

    def clean(self) -> dict:
        cleaned = super().clean()
        if self.errors:
            return cleaned
        params = dict(self.fixed)
        for name in self.param_names:
            value = cleaned.get(name)
            param = next(p for p in self.design_class.PARAMS if p.name == name)
            if param.type in LIST_TYPES:
                try:
                    value = parse_probabilities(value or "")
                except forms.ValidationError as error:
                    self.add_error(name, error)
                    continue
                if value is None:
                    continue
            elif value is None:
                self.add_error(name, "Enter a number.")
                continue
            try:
                params[name] = param.check(value)
            except ValueError as error:
                self.add_error(name, str(error))
        if self.errors:
            return cleaned
        k = len(cleaned["options"]) if self.kind_value == "choice" else None
        try:
            design = make_design(self.kind_value, self.design_name_value, params, k=k)
        except ValueError as error:
            self.add_error(self._field_named_in(str(error)), str(error))
            return cleaned
        if not design.is_private and not cleaned.get("confirm_no_privacy"):
            self.add_error(
                "confirm_no_privacy",
                "A directly asked question gives no privacy (ε = ∞): "
                "confirm that it is not sensitive."
                if self.direct
                else "This design gives no privacy (ε = ∞): some answers reveal the truth. "
                "Change the parameters, or tick this box to save it anyway.",
            )
        try:
            cleaned["direct_share"] = with_direct_share(
                design, cleaned.get("direct_share")
            ).direct_share
        except ValueError as error:
            self.add_error("direct_share", str(error))
        try:
            cleaned["innocuous_text"] = innocuous_text_for(design, cleaned.get("innocuous_text"))
        except ValueError as error:
            self.add_error("innocuous_text", str(error))
        cleaned["design"] = design
        return cleaned

    def _field_named_in(self, message: str) -> str:
        """The parameter field a design's error speaks of (the first one otherwise)."""
        for name in sorted(self.param_names, key=len, reverse=True):
            if name in message:
                return name
        if "option" in message and "options" in self.fields:
            return "options"
        return self.param_names[0] if self.param_names else "preset"

    def save_to(self, question: Question) -> Question:
        design = self.cleaned_data["design"]
        question.text = self.cleaned_data["text"]
        question.kind = design.kind
        question.options = self.cleaned_data.get("options", []) if design.kind == "choice" else []
        question.design_name = design.name
        question.design_params = design.params()
        question.shuffle_options = bool(self.cleaned_data.get("shuffle_options"))
        question.direct_share = self.cleaned_data.get("direct_share")
        question.innocuous_text = self.cleaned_data.get("innocuous_text", "")
        question.texts = texts_without_stale_innocuous(question.texts, question.innocuous_text)
        question.save()
        return question
