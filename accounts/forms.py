"""Account forms: sign-up (with a verified email address) and invitations by staff."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm

User = get_user_model()


class NewInactiveAccount:
    """What sign-up and invitations share: an email address no account uses yet, and an
    account saved inactive until the link sent to that address is followed."""

    def clean_email(self) -> str:
        email = self.cleaned_data["email"]
        if User._default_manager.filter(email__iexact=email).exists():
            raise forms.ValidationError(
                "An account already uses this email address. Log in, or reset its password."
            )
        return email

    def save(self, commit: bool = True):
        user = super().save(commit=False)
        user.is_active = False
        self.prepare(user)
        if commit:
            user.save()
        return user

    def prepare(self, user) -> None:
        """Anything else the account needs before it is saved."""


class SignUpForm(NewInactiveAccount, UserCreationForm):
    """A new, inactive account: it becomes usable once its email address is confirmed.

    The form never says whether an email address or a username is taken (anyone could
    use that to learn who has an account): :meth:`taken` tells the view, which mails the
    address instead and answers as for a new account."""

    email = forms.EmailField(help_text="We send a link to confirm it.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        return self.cleaned_data["email"]

    def clean_username(self) -> str:
        return self.cleaned_data["username"]

    def validate_unique(self) -> None:
        """Taken names are the view's business (:meth:`taken`), never an error here."""

    def taken(self) -> str | None:
        """ "email" or "username" when an account already uses it, else None."""
        users = User._default_manager
        if users.filter(email__iexact=self.cleaned_data["email"]).exists():
            return "email"
        if users.filter(username__iexact=self.cleaned_data["username"]).exists():
            return "username"
        return None


class InviteForm(NewInactiveAccount, forms.ModelForm):
    """Staff invite someone by email; the invitee chooses a password from the link."""

    email = forms.EmailField()

    class Meta:
        model = User
        fields = ("username", "email")

    def prepare(self, user) -> None:
        user.set_unusable_password()
