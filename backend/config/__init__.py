"""Django wiring: settings, URLs, ASGI/WSGI entry points and the Celery app."""

from backend.config.celery_app import app as celery_app

__all__ = ["celery_app"]
