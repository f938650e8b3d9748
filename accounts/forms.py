"""Account forms: sign-up (with a verified email address) and invitations by staff."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm

User = get_user_model()


def unused_email(email: str) -> str:
    if User._default_manager.filter(email__iexact=email).exists():
        raise forms.ValidationError(
            "An account already uses this email address. Log in, or reset its password."
        )
    return email


class SignUpForm(UserCreationForm):
    """A new, inactive account: it becomes usable once its email address is confirmed."""

    email = forms.EmailField(help_text="We send a link to confirm it.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        return unused_email(self.cleaned_data["email"])

    def save(self, commit: bool = True):
        user = super().save(commit=False)
        user.is_active = False
        if commit:
            user.save()
        return user


class InviteForm(forms.ModelForm):
    """Staff invite someone by email; the invitee chooses a password from the link."""

    email = forms.EmailField()

    class Meta:
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        return unused_email(self.cleaned_data["email"])

    def save(self, commit: bool = True):
        user = super().save(commit=False)
        user.is_active = False
        user.set_unusable_password()
        if commit:
            user.save()
        return user
