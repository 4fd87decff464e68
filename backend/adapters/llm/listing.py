"""Bounds shared by the adapters' `available_models`: a settings page waits for the list, so it must come quickly."""

from __future__ import annotations

from backend.adapters.retry import RetryPolicy

# Providers list hundreds of models at most; these caps keep a misbehaving server from paging forever.
MAX_MODEL_IDS = 1000
MAX_PAGES = 10
# A person waits on the form: give up sooner, and retry less, than an answer would.
LIST_TIMEOUT = 10.0
LIST_MAX_RETRIES = 1
LIST_BACKOFF_MAX = 2.0


def listing_policy(policy: RetryPolicy) -> RetryPolicy:
    """The adapter's retry policy, shortened for a request someone is waiting on."""
    return RetryPolicy(max_retries=min(policy.max_retries, LIST_MAX_RETRIES), backoff_base=policy.backoff_base,
                       backoff_max=min(policy.backoff_max, LIST_BACKOFF_MAX))


def listing_timeout(timeout: float) -> float:
    """Seconds to wait for one page of the model list."""
    return min(timeout, LIST_TIMEOUT)


def bounded(ids: list[str]) -> list[str]:
    """Unique ids in the provider's order, at most MAX_MODEL_IDS."""
    return list(dict.fromkeys(ids))[:MAX_MODEL_IDS]
