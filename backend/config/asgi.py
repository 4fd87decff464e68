"""ASGI entry point (uvicorn); streaming views use async generators under it."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.config.settings.base")

application = get_asgi_application()
