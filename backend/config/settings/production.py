"""Production: base settings plus mandatory secrets and hardened HTTP security."""

from backend.config.env import env_bool, env_int, env_mandatory
from backend.config.settings.base import *  # noqa: F403

SECRET_KEY = env_mandatory("DJANGO_SECRET_KEY")
DEBUG = False
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0)
X_FRAME_OPTIONS = "DENY"
