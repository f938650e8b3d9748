"""Settings, all driven by environment variables (12-factor).

The helpers fail loudly on values they cannot parse: a typo in production should stop the
app at start-up, not quietly fall back to a default.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    """An environment variable; set but empty counts as unset (``DATABASE_URL= make run``)."""
    return os.environ.get(name) or default


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, got {value!r}")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


RATE_PERIODS = {"s": 1, "m": 60, "h": 3600}


def env_rate(name: str, default: str) -> tuple[int, int]:
    """A rate such as ``30/m``, ``10/300s`` or ``1000/h`` as (requests, seconds)."""
    value = env(name, default).strip()
    count, _, period = value.partition("/")
    multiple, unit = period[:-1] or "1", period[-1:]
    if not (count.isdigit() and multiple.isdigit() and unit in RATE_PERIODS):
        raise ImproperlyConfigured(f"{name} must look like 30/m, 10/300s or 1000/h, got {value!r}")
    if int(count) < 1 or int(multiple) < 1:
        raise ImproperlyConfigured(f"{name} must allow at least one request, got {value!r}")
    return int(count), int(multiple) * RATE_PERIODS[unit]


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        # The key signs sessions, password-reset links and the rate limiter's hashes: a
        # public development key would let anyone forge them.
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY to a long random string, e.g. the output "
            "of: python -c 'import secrets; print(secrets.token_urlsafe(50))' "
            "(or DEBUG=true for local development only)."
        )
    SECRET_KEY = "insecure-development-key-" + "x" * 40
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "csp",
    "survey",
    "responses",
    "classroom",
    "analysis",
    "accounts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.errors.ApiErrorsAsJson",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "config.middleware.PrivateNoStoreMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "csp.context_processors.nonce",
                "accounts.context_processors.accounts",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=60,
        # A connection PostgreSQL dropped while idle is replaced before the next request
        # uses it, instead of failing that request with a 503.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL + busy timeout + immediate write transactions: concurrent writers wait for the
    # lock instead of failing with "database is locked". secure_delete: deleted rows are
    # overwritten with zeros, not left in free pages (what sealing an hour relies on).
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
        "PRAGMA secure_delete=ON;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Tests use a file too: shared-cache in-memory SQLite has table locks that ignore the
    # busy timeout, so concurrency tests would test a database nobody deploys.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"deniable-test-{os.getpid()}.sqlite3")
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
# Anyone may create an account (confirmed by email) only where this is on: the local demo
# by default. In production staff invite researchers by email (/accounts/invite/).
SIGNUP_ENABLED = env_bool("SIGNUP_ENABLED", DEBUG)
# Lifetime of email links (verification, invitation, password reset), in seconds.
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 24 * 3600)
# Lifetime of an API token, in seconds; a password change or DELETE /api/auth/token/
# revokes it sooner.
API_TOKEN_TTL = env_int("API_TOKEN_TTL", 30 * 24 * 3600)
LOGIN_REDIRECT_URL = "survey:list"
# A deleted survey waits this many days in the trash before purge_trash deletes it.
TRASH_RETENTION_DAYS = env_int("TRASH_RETENTION_DAYS", 30)
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en"
# Respondent and student pages speak these; researcher pages stay in English (no
# LocaleMiddleware: each respondent view picks its language, see survey.languages).
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("es", "Español"), ("fr", "Français")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# No uploads; set so the test live server does not serve the working directory at "/".
MEDIA_URL = "/media/"
STATIC_ROOT = Path(env("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.tokens.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PARSER_CLASSES": ["config.parsers.JSONParser"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Deniable API",
    "DESCRIPTION": "Randomized-response surveys with local differential privacy.",
    "VERSION": "1.0.0",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_INCLUDE_SCHEMA": False,
    # Your role on a survey (owner, editor, viewer) vs. the roles it can be shared with.
    "ENUM_NAME_OVERRIDES": {
        "RoleEnum": "survey.models.Role",
        "SharedRoleEnum": "survey.models.SHARED_ROLE_CHOICES",
        "QuestionKindEnum": "survey.models.Question.Kind",
        "CategoricalKindEnum": [("binary", "binary"), ("choice", "choice")],
        "ChoiceKindEnum": [("choice", "choice")],
        "NumberKindEnum": [("number", "number")],
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.openapi.document_errors",
    ],
}

EMAIL_SCHEMES = {
    "smtp": ("django.core.mail.backends.smtp.EmailBackend", False, False),
    "smtp+tls": ("django.core.mail.backends.smtp.EmailBackend", True, False),
    "smtps": ("django.core.mail.backends.smtp.EmailBackend", False, True),
    "console": ("django.core.mail.backends.console.EmailBackend", False, False),
}


def parse_email_url(url: str) -> dict[str, object]:
    """Email settings from one URL: ``smtp+tls://user:password@host:587`` (STARTTLS),
    ``smtps://…@host:465`` (TLS), ``smtp://host:25`` or ``console://`` (print mail).
    User and password are percent-decoded."""
    parts = urlsplit(url)
    if parts.scheme not in EMAIL_SCHEMES:
        raise ImproperlyConfigured(
            f"EMAIL_URL must start with one of {', '.join(s + '://' for s in EMAIL_SCHEMES)}, "
            f"got {parts.scheme or url!r}"
        )
    backend, tls, ssl = EMAIL_SCHEMES[parts.scheme]
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured("EMAIL_URL has a port that is not a number") from None
    return {
        "EMAIL_BACKEND": backend,
        "EMAIL_HOST": parts.hostname or "localhost",
        "EMAIL_PORT": port or (465 if ssl else 587 if tls else 25),
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_TLS": tls,
        "EMAIL_USE_SSL": ssl,
    }


# Mail (sign-up, invitations, password reset): EMAIL_URL, else printed to the console
# under DEBUG; with neither, the pages that send mail are absent.
EMAIL_URL = env("EMAIL_URL", "console://" if DEBUG else "")
EMAIL_ENABLED = bool(EMAIL_URL)
globals().update(parse_email_url(EMAIL_URL) if EMAIL_URL else {})
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "Deniable <noreply@localhost>")

# The submit endpoint's body limit (SPEC §3.1: 413 above 64 KiB).
MAX_SUBMISSION_BYTES = 64 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024 * 1024)
# CSV imports of offline answers (413 above either limit). They are read from a temporary
# file, never whole into memory, and stored in short batches; the limit on answers (rows
# x questions) keeps one import well inside the worker timeout (docs/readme/hostile.md).
MAX_IMPORT_BYTES = env_int("MAX_IMPORT_BYTES", 8 * 1024 * 1024)
MAX_IMPORT_ANSWERS = env_int("MAX_IMPORT_ANSWERS", 100_000)

# Security headers. HTTPS-only settings follow DEBUG so the local run works over http.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"  # respondent pages send no-referrer
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_SSL_REDIRECT = env_bool(
    "SECURE_SSL_REDIRECT", not DEBUG and env("DENIABLE_ENV") == "production"
)
SECURE_HSTS_SECONDS = env_int(
    "SECURE_HSTS_SECONDS", 31536000 if env("DENIABLE_ENV") == "production" else 0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
# Reverse proxies in front of the app (each appends to X-Forwarded-For and sets
# X-Forwarded-Proto). With none, both headers come from the client and are ignored: a
# client must not turn invite links into https or pick the address it is counted under.
PROXY_COUNT = env_int("PROXY_COUNT", env_int("RATELIMIT_PROXY_COUNT", 0))
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if PROXY_COUNT else None
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", env("DENIABLE_ENV") == "production")
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Strict"

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# The cache holds rate-limit counters (never stored in the database). One process: local
# memory. Several processes or hosts: one Redis shared by all (REDIS_URL).
REDIS_URL = env("REDIS_URL")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Per-client-address limits (429 + Retry-After). A classroom behind one NAT shares one
# address: raise RATELIMIT_SUBMIT and RATELIMIT_JOIN for very large lectures.
RATELIMIT_ENABLED = env_bool("RATELIMIT_ENABLED", True)
RATELIMIT_PROXY_COUNT = PROXY_COUNT
RATELIMITS = {
    "submit": env_rate("RATELIMIT_SUBMIT", "300/m"),
    "join": env_rate("RATELIMIT_JOIN", "300/m"),
    # Every password check: site and admin log-in, API token, sign-up and reset requests.
    "login": env_rate("RATELIMIT_LOGIN", "10/5m"),
    # Exchanging an invite for a credential (and the no-JavaScript page's start step).
    "credential": env_rate("RATELIMIT_CREDENTIAL", "60/m"),
}
# Without Redis, the counters of all worker processes of this host live in one SQLite
# file in RAM (tmpfs), keyed by a keyed hash of the address (see survey/ratelimit.py).
SHARED_MEMORY_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
RATELIMIT_STORE = env(
    "RATELIMIT_STORE",
    str(
        Path(SHARED_MEMORY_DIR)
        / "deniable-ratelimit-{}.sqlite3".format(
            hashlib.sha256(f"{BASE_DIR}:{SECRET_KEY}".encode()).hexdigest()[:16]
        )
    ),
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"no_client_details": {"()": "config.logging.DropClientDetails"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["no_client_details"]},
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "WARNING")},
}
