from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView
from rest_framework.authtoken.views import obtain_auth_token

from estimator import api as estimator_api
from survey import api as survey_api
from survey import api_public, ratelimit
from survey import views as survey_views

api_patterns = [
    path("public/surveys/<str:slug>/responses/", api_public.submit_endpoint, name="api-submit"),
    path("auth/token/", obtain_auth_token, name="api-token"),
    path(
        "surveys/<int:survey_id>/estimates/",
        estimator_api.survey_estimates,
        name="api-estimates",
    ),
    path("", include(survey_api.router.urls)),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-docs"),
]

handler404 = "config.errors.not_found"

urlpatterns = [
    path("", survey_views.home, name="home"),
    path("healthz", survey_views.healthz, name="healthz"),
    # Early: respondents' submissions are the busiest route; resolving it walks no others.
    path("api/", include(api_patterns)),
    path("", include("survey.urls")),
    path("", include("estimator.urls")),
    path("", include("survey.classroom_urls")),
    path("accounts/login/", ratelimit.limit("login")(auth_views.LoginView.as_view()), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password/",
        auth_views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("admin/", admin.site.urls),
]
