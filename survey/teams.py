"""Sharing a survey with other accounts: the owner adds viewers (results released in
batches, no rows), analysts (also live results and row-level exports) and editors (also
build and distribute), changes or removes them, and may hand the
survey over to another account. Everyone else gets a 404 here."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from survey.models import (
    NO_SUCH_ACCOUNT,
    SHARED_ROLE_CHOICES,
    AuditEntry,
    Role,
    SharingRefused,
    Survey,
    find_account,
)
from survey.permissions import survey_for


class AccountField(forms.CharField):
    """An active account, named by its username or email address."""

    def clean(self, value):
        user = find_account(super().clean(value))
        if user is None:
            raise forms.ValidationError(NO_SUCH_ACCOUNT)
        return user


class ShareForm(forms.Form):
    user = AccountField(max_length=254, label="Username or email")
    role = forms.ChoiceField(choices=SHARED_ROLE_CHOICES, initial=Role.VIEWER)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=SHARED_ROLE_CHOICES)


class TransferForm(forms.Form):
    user = AccountField(max_length=254, label="New owner (username or email)")
    confirm = forms.BooleanField(
        label="I understand that I will no longer own this survey and will stay on as an editor."
    )


def owners_survey(request: HttpRequest, survey_id: int) -> Survey:
    return survey_for(request, survey_id, Role.OWNER)


def render_share(request: HttpRequest, survey: Survey, status: int = 200, **forms_) -> HttpResponse:
    context = {
        "survey": survey,
        "collaborators": survey.collaborators.select_related("user"),
        "roles": SHARED_ROLE_CHOICES,
        "share_form": forms_.get("share_form") or ShareForm(),
        "transfer_form": forms_.get("transfer_form") or TransferForm(),
        "active": "share",
    }
    return render(request, "survey/share.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def share(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = owners_survey(request, survey_id)
    if request.method == "GET":
        return render_share(request, survey)
    form = ShareForm(request.POST)
    if form.is_valid():
        try:
            survey.share_with(form.cleaned_data["user"], form.cleaned_data["role"])
        except SharingRefused as refused:
            form.add_error("user", str(refused))
    if not form.is_valid():
        return render_share(request, survey, status=400, share_form=form)
    user, role = form.cleaned_data["user"], form.cleaned_data["role"]
    said = f"shared with {user.get_username()} as {role}"
    AuditEntry.record(survey, request.user, AuditEntry.Action.SHARING, said)
    messages.success(request, f"Shared with {user.get_username()} as {role}.")
    return redirect("survey:share", survey.id)


@login_required
@require_POST
def collaborator(request: HttpRequest, survey_id: int, user_id: int) -> HttpResponse:
    """Change a collaborator's role, or remove their access (``action=remove``)."""
    survey = owners_survey(request, survey_id)
    shared = get_object_or_404(survey.collaborators.select_related("user"), user_id=user_id)
    name = shared.user.get_username()
    if request.POST.get("action") == "remove":
        shared.delete()
        said = f"access removed from {name}"
        AuditEntry.record(survey, request.user, AuditEntry.Action.SHARING, said)
        messages.success(request, f"{name} no longer has access to this survey.")
        return redirect("survey:share", survey.id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose viewer, analyst or editor.")
        return render_share(request, survey, status=400)
    shared.role = form.cleaned_data["role"]
    shared.save(update_fields=["role"])
    AuditEntry.record(
        survey, request.user, AuditEntry.Action.SHARING, f"{name} is now {shared.role}"
    )
    messages.success(request, f"{name} is now {shared.role}.")
    return redirect("survey:share", survey.id)


@login_required
@require_POST
def transfer(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = owners_survey(request, survey_id)
    form = TransferForm(request.POST)
    if form.is_valid():
        try:
            survey.transfer_to(form.cleaned_data["user"])
        except SharingRefused as refused:
            form.add_error("user", str(refused))
    if not form.is_valid():
        return render_share(request, survey, status=400, transfer_form=form)
    name = form.cleaned_data["user"].get_username()
    said = f"ownership transferred to {name}"
    AuditEntry.record(survey, request.user, AuditEntry.Action.SHARING, said)
    messages.success(request, f"{name} now owns “{survey.title}”; you are an editor.")
    return redirect("survey:builder", survey.id)
