"""Account pages: sign-up with email verification, invitations, password reset, API tokens.

The password pages are Django's own views; this module adds what Django lacks and puts
every password check and every email-sending form behind the "login" rate limit.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required, user_passes_test
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.mail import send_mail
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse, reverse_lazy
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token

from accounts.forms import InviteForm, SignUpForm
from accounts.tokens import fresh_token, invitation_tokens, token_expiry, verification_tokens
from survey import ratelimit

User = get_user_model()
throttled = ratelimit.limit("login")


def needs_email(view: Callable) -> Callable:
    """Pages that send mail exist only where mail can be sent (EMAIL_URL, or DEBUG)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not settings.EMAIL_ENABLED:
            raise Http404("Email is not configured on this site.")
        return view(request, *args, **kwargs)

    return wrapped


def send_link(
    request: HttpRequest,
    user,
    tokens: PasswordResetTokenGenerator,
    url_name: str,
    template: str,
) -> None:
    """Email ``user`` a one-time link to ``url_name`` (templates ``<template>_subject.txt``
    and ``<template>_email.txt``)."""
    path = reverse(
        url_name, args=[urlsafe_base64_encode(force_bytes(user.pk)), tokens.make_token(user)]
    )
    context = {
        "user": user,
        "link": request.build_absolute_uri(path),
        "site": request.get_host(),
        "hours": settings.PASSWORD_RESET_TIMEOUT // 3600,
    }
    subject = render_to_string(f"accounts/{template}_subject.txt", context).strip()
    body = render_to_string(f"accounts/{template}_email.txt", context)
    send_mail(subject, body, None, [user.email])


def tell_taken(request: HttpRequest, email: str, taken: str, username: str) -> None:
    """Mail ``email`` that its sign-up could not make an account (the address, or the
    username, is in use) and what to do, as the reset form does for unknown addresses."""
    context = {
        "taken": taken,
        "username": username,
        "site": request.get_host(),
        "login": request.build_absolute_uri(reverse("login")),
        "reset": request.build_absolute_uri(reverse("password_reset")),
        "signup": request.build_absolute_uri(reverse("signup")),
    }
    subject = render_to_string("accounts/taken_subject.txt", context).strip()
    send_mail(subject, render_to_string("accounts/taken_email.txt", context), None, [email])


def user_from_link(uidb64: str):
    try:
        return User._default_manager.get(pk=urlsafe_base64_decode(uidb64).decode())
    except (ValueError, TypeError, OverflowError, User.DoesNotExist):
        return None


@needs_email
@throttled
@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an inactive account and email a link that activates it."""
    if not settings.SIGNUP_ENABLED:
        raise Http404("Sign-up is closed on this site; ask its administrator for an invitation.")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        email = form.cleaned_data["email"]
        if taken := form.taken():
            # The same answer as for a new account; only the address's owner learns more.
            tell_taken(request, email, taken, form.cleaned_data["username"])
        else:
            user = form.save()
            send_link(request, user, verification_tokens, "verify_email", "verify")
        return render(request, "accounts/signup_done.html", {"email": email})
    context = {"form": form, "heading": "Create a researcher account", "button": "Sign up"}
    return render(request, "accounts/signup.html", context)


@require_http_methods(["GET", "POST"])
def verify_email(request: HttpRequest, uidb64: str, token: str) -> HttpResponse:
    """GET shows a button, POST activates: mail scanners that fetch links activate nothing."""
    user = user_from_link(uidb64)
    if user is None or not verification_tokens.check_token(user, token):
        return render(request, "accounts/link_invalid.html", status=400)
    if request.method == "POST":
        user.is_active = True
        user.save(update_fields=["is_active"])
        messages.success(request, "Your email address is confirmed. You can log in now.")
        return redirect("login")
    return render(request, "accounts/verify.html", {"account": user})


@needs_email
@user_passes_test(lambda user: user.is_staff)
@require_http_methods(["GET", "POST"])
def invite(request: HttpRequest) -> HttpResponse:
    """Staff invite a researcher by email (the way in when sign-up is off)."""
    form = InviteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        send_link(request, user, invitation_tokens, "accept_invitation", "invitation")
        messages.success(request, f"Invitation sent to {user.email}.")
        return redirect("invite")
    context = {"form": form, "heading": "Invite a researcher", "button": "Send invitation"}
    return render(request, "accounts/invite.html", context)


class AcceptInvitationView(auth_views.PasswordResetConfirmView):
    """The invitee chooses a password; that activates the account."""

    token_generator = invitation_tokens
    template_name = "accounts/accept_invitation.html"
    success_url = reverse_lazy("login")

    def form_valid(self, form):
        form.user.is_active = True
        messages.success(self.request, "Your account is ready. You can log in now.")
        return super().form_valid(form)


@login_required
@require_http_methods(["GET", "POST"])
def api_token(request: HttpRequest) -> HttpResponse:
    """See, create or revoke one's API token. A new key is shown once, on creation."""
    new_key = None
    if request.method == "POST":
        Token.objects.filter(user=request.user).delete()
        if request.POST.get("action") == "create":
            new_key = fresh_token(request.user).key
        else:
            messages.success(request, "Your API token is revoked.")
            return redirect("api_token")
    token = Token.objects.filter(user=request.user).first()
    context = {
        "token": token,
        "expires": token and token_expiry(token),
        "new_key": new_key,
        "ttl_days": settings.API_TOKEN_TTL // 86400,
    }
    return render(request, "accounts/api_token.html", context)
