"""Account routes. Names are global (``login``, ``password_reset``…) as Django's auth
views and templates expect."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

reset_done = auth_views.PasswordResetDoneView.as_view()
urlpatterns = [
    path("login/", views.throttled(auth_views.LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path(
        "password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path(
        "password/reset/",
        views.needs_email(
            views.throttled(
                auth_views.PasswordResetView.as_view(
                    extra_context={"heading": "Reset your password", "button": "Send link"}
                )
            )
        ),
        name="password_reset",
    ),
    path("password/reset/sent/", views.needs_email(reset_done), name="password_reset_done"),
    path(
        "password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "password/reset/complete/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("signup/", views.signup, name="signup"),
    path("verify/<uidb64>/<token>/", views.verify_email, name="verify_email"),
    path("invite/", views.invite, name="invite"),
    path(
        "invitation/<uidb64>/<token>/",
        views.AcceptInvitationView.as_view(),
        name="accept_invitation",
    ),
    path("api-token/", views.api_token, name="api_token"),
]
