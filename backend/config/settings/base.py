"""Complete settings for the embedded default; runs with zero environment variables.

Every deployment difference is a value read here (DATABASE_URL, MILVUS_URI, REDIS_URL, …);
app code never asks which profile it runs in.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import dj_database_url

from backend.config.env import env_bool, env_int, env_list, env_path, env_str

BASE_DIR = Path(__file__).resolve().parents[3]
DATA_DIR = env_path("OPENGURU_DATA_DIR", BASE_DIR / "var")
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _embedded_secret_key() -> str:
    """A random key generated once per data dir, so no two installs share a key."""
    path = DATA_DIR / "secret_key"
    if not path.exists():
        # Written aside, then linked into place: processes starting together (uvicorn --workers, web and
        # worker) never read a half-written file, and the first link wins for all of them.
        draft = path.with_name(f".secret_key.{os.getpid()}")
        draft.write_text(secrets.token_urlsafe(50))
        draft.chmod(0o600)
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()


SECRET_KEY = env_str("DJANGO_SECRET_KEY") or _embedded_secret_key()
# Old secret keys, newest first: sessions, signed values and password-reset links made with them stay valid
# while SECRET_KEY is rotated (docs/operations.md). Drop them once those have expired.
SECRET_KEY_FALLBACKS = env_list("DJANGO_SECRET_KEY_FALLBACKS", [])
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "backend.core",
    "backend.gurus",
    "backend.sources",
    "backend.retrieval",
    "backend.answering",
    "backend.evaluation",
    "backend.api",
    "backend.widget",
    "backend.integrations",
    "backend.dashboard",
    "backend.channels",
    "backend.portability",
]

MIDDLEWARE = [
    # Outermost, so it counts the status every other layer settled on (backend/core/middleware.py).
    "backend.core.middleware.request_metrics",
    # Database out of connections: 503 `busy` with Retry-After (backend/core/busy.py).
    "backend.core.busy.DatabaseBusyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "backend.config.urls"
WSGI_APPLICATION = "backend.config.wsgi.application"
ASGI_APPLICATION = "backend.config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "frontend" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "backend.dashboard.nav.dashboard_nav",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'openguru.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process read while the worker writes; the timeout absorbs short write locks.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
elif env_int("DATABASE_POOL_MAX_SIZE", 0) > 0:
    # A per-process pool (psycopg_pool): a stream gives its connection back between queries, so a web process
    # needs only as many connections as queries run at once. When all are busy a request waits up to the
    # timeout, then fails with a clear error instead of PostgreSQL's "too many clients". Web processes only:
    # prefork Celery workers would inherit a pool's threads across fork.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1, "max_size": env_int("DATABASE_POOL_MAX_SIZE", 0),
        "timeout": env_int("DATABASE_POOL_TIMEOUT", 10),
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns about a missing root on every request
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
MEDIA_URL = "/media/"
MEDIA_ROOT = DATA_DIR / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Both profiles collect static files at start (the launcher; compose's migrate service), so WhiteNoise serves
# the collected, pre-compressed copies. Finder lookups would shadow them with uncompressed originals.
WHITENOISE_USE_FINDERS = False

DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "backend.api.auth.APIKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_THROTTLE_CLASSES": ["backend.api.auth.KeyRateThrottle"],
    "DEFAULT_PARSER_CLASSES": [
        "backend.api.schema.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "backend.api.schema.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "backend.api.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "OpenGuru API",
    "DESCRIPTION": "Ask gurus, manage their data sources and read conversations. Authenticate with X-API-KEY.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "backend.api.schema.document_unsupported_media"],
}

LOG_LEVEL = env_str("OPENGURU_LOG_LEVEL", "INFO")
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {"backend": {"level": LOG_LEVEL}},
}

from backend.config.settings.components.cache import *  # noqa: E402,F403
from backend.config.settings.components.celery import *  # noqa: E402,F403
from backend.config.settings.components.chat import *  # noqa: E402,F403
from backend.config.settings.components.ingest import *  # noqa: E402,F403
from backend.config.settings.components.metrics import *  # noqa: E402,F403
from backend.config.settings.components.models import *  # noqa: E402,F403
from backend.config.settings.components.proxies import *  # noqa: E402,F403
from backend.config.settings.components.vectors import *  # noqa: E402,F403
