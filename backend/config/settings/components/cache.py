"""Cache, locks and rate-limit storage: Redis when REDIS_URL is set, else the database cache.

The database cache (not locmem) is shared by the web and worker processes, so cache.add()-based
locks work across processes in the embedded default too.
"""

from backend.config.env import env_str

REDIS_URL = env_str("REDIS_URL")

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "openguru",
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "openguru_cache",
            "KEY_PREFIX": "openguru",
        }
    }
