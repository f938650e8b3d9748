from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from accounts import api as accounts_api
from analysis import api as estimates_api
from analysis import api_grouped
from config.api_docs import api_docs
from responses import submit
from survey import api as survey_api
from survey import api_planning, ratelimit
from survey import views as survey_views

api_patterns = [
    path("public/surveys/<str:slug>/responses/", submit.submit_endpoint, name="api-submit"),
    path(
        "public/surveys/<str:slug>/credentials/",
        submit.credential_endpoint,
        name="api-credential",
    ),
    path("auth/token/", accounts_api.token_view, name="api-token"),
    path(
        "surveys/<int:survey_id>/estimates/",
        estimates_api.survey_estimates,
        name="api-estimates",
    ),
    path(
        "surveys/<int:survey_id>/estimates.csv",
        estimates_api.estimates_csv_endpoint,
        name="api-survey-estimates-csv",
    ),
    path("planning/", api_planning.plan_endpoint, name="api-planning"),
    path(
        "surveys/<int:survey_id>/estimates/breakdown/",
        api_grouped.breakdown_endpoint,
        name="api-breakdown",
    ),
    path(
        "surveys/<int:survey_id>/estimates/breakdowns.csv",
        api_grouped.breakdowns_csv_endpoint,
        name="api-breakdowns-csv",
    ),
    path("surveys/<int:survey_id>/crosstab/", api_grouped.crosstab_endpoint, name="api-crosstab"),
    path("surveys/<int:survey_id>/compare/", api_grouped.compare_endpoint, name="api-compare"),
    path(
        "surveys/<int:survey_id>/regression/",
        api_grouped.regression_endpoint,
        name="api-regression",
    ),
    path("", include(survey_api.router.urls)),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", api_docs, name="api-docs"),
]

handler404 = "config.errors.not_found"

urlpatterns = [
    path("", survey_views.home, name="home"),
    path("healthz", survey_views.healthz, name="healthz"),
    # Early: respondents' submissions are the busiest route; resolving it walks no others.
    path("api/", include(api_patterns)),
    path("", include("survey.urls")),
    path("", include("analysis.urls")),
    path("", include("classroom.urls")),
    path("accounts/", include("accounts.urls")),
    # The admin's own log-in checks passwords too: same limit as the site's.
    path("admin/login/", ratelimit.limit("login")(admin.site.login)),
    path("admin/", admin.site.urls),
]
