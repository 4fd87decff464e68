"""Cache and the counter store (rate limits, login lock-out, locks): Redis when REDIS_URL is set, else the database.

The database cache (not locmem) is shared by the web and worker processes. Counters and locks do not
live in it: its incr() and add() are not atomic under concurrency, so they use the counter store's
atomic upserts (backend/core/counters.py) on the same database, or Redis.
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
    OPENGURU_COUNTER_STORE = "backend.core.counters.RedisCounterStore"
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "openguru_cache",
            "KEY_PREFIX": "openguru",
        }
    }
    OPENGURU_COUNTER_STORE = "backend.core.counters.DatabaseCounterStore"
