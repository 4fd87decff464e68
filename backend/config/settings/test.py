"""Test settings: eager tasks, fast hashing, in-memory fakes unless a test asks for real Milvus."""

from backend.config.settings.base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
OPENGURU_VECTOR_STORE = {"BACKEND": "memory", "URI": "", "TOKEN": ""}
OPENGURU_EMBEDDER = {"BACKEND": "hashing", "DIMENSION": "384"}
OPENGURU_LLM = {"PROVIDER": "offline", "MODEL": "offline-extractive"}
OPENGURU_RERANKER = {"BACKEND": "local"}
LOGGING["loggers"]["backend"]["level"] = "WARNING"  # noqa: F405
# Every test client shares 127.0.0.1 and cache counters outlive tests: tests that check limits set them.
OPENGURU_WEB_RATE_LIMIT = 0
