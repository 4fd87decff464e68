"""PageFetcher backed by Firecrawl's v2 scrape API (hosted or self-hosted) through firecrawl-py."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urldefrag, urlsplit

import requests
from firecrawl import (
    Firecrawl,
    FirecrawlError,
    PaymentRequiredError,
    RateLimitError,
    RequestTimeoutError,
    UnauthorizedError,
)

from backend.adapters.net_guard import Resolver, UrlPolicy, check_url
from backend.adapters.web.fetcher import raise_for_http_status
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.ingest_types import FetchedPage

_WORD = re.compile(r"\w")


class FirecrawlPageFetcher:
    """Scrapes one page with formats markdown + links and onlyMainContent; Firecrawl renders JavaScript."""

    def __init__(self, *, api_key: str, api_url: str | None = None, policy: UrlPolicy, timeout: float = 60,
                 resolver: Resolver | None = None, max_retries: int = 2, backoff_factor: float = 0.5) -> None:
        self._policy = policy
        self._resolver = resolver
        # firecrawl-py retries 502s and dropped connections itself; the pipeline retries the rest.
        self._client = Firecrawl(api_key=api_key or None, api_url=api_url, timeout=timeout,
                                 max_retries=max_retries, backoff_factor=backoff_factor)

    def _check(self, url: str) -> None:
        if self._resolver is None:
            check_url(url, self._policy)
        else:
            check_url(url, self._policy, resolver=self._resolver)

    def fetch(self, url: str) -> FetchedPage:
        # A self-hosted Firecrawl sits inside our network and would fetch internal addresses for anyone.
        self._check(url)
        try:
            document = self._client.scrape(url, formats=["markdown", "links"], only_main_content=True,
                                           auto_resume=False)
        except (FirecrawlError, requests.RequestException, ValueError) as exc:
            raise _service_error(exc) from exc
        metadata: Any = document.metadata
        status = getattr(metadata, "status_code", None)
        if isinstance(status, int) and status >= 400:  # Firecrawl reports the site's own 404/5xx in a 200
            raise_for_http_status(status)
        final_url = str(getattr(metadata, "url", None) or getattr(metadata, "source_url", None) or url)
        if final_url != url:
            # Firecrawl followed redirects we never saw; refuse content that came from an internal address.
            self._check(final_url)
        markdown = (document.markdown or "").strip()
        if not _WORD.search(markdown):
            raise PermanentServiceError("no readable text on the page")
        title = str(getattr(metadata, "og_title", None) or getattr(metadata, "title", None) or "").strip()
        return FetchedPage(url=url, final_url=final_url, title=title or _first_heading(markdown) or final_url,
                           markdown=markdown, links=_page_links(document.links or []))


def _service_error(exc: Exception) -> PermanentServiceError | TransientServiceError:
    if isinstance(exc, UnauthorizedError):
        return PermanentServiceError("Firecrawl rejected the API key")
    if isinstance(exc, PaymentRequiredError):
        return PermanentServiceError("out of Firecrawl credits")
    if isinstance(exc, RateLimitError):
        return TransientServiceError("Firecrawl is rate limiting requests (HTTP 429)")
    if isinstance(exc, RequestTimeoutError):
        return TransientServiceError(f"Firecrawl timed out scraping the page: {exc}")
    if isinstance(exc, requests.Timeout):
        return TransientServiceError("Firecrawl did not answer in time")
    if isinstance(exc, requests.ConnectionError):
        return TransientServiceError(f"could not reach Firecrawl: {exc}")
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and (status >= 500 or status == 408):
        return TransientServiceError(f"Firecrawl had a server error (HTTP {status}): {exc}")
    if isinstance(exc, FirecrawlError):
        return PermanentServiceError(f"Firecrawl could not scrape the page: {exc}")
    if isinstance(exc, requests.RequestException):
        return TransientServiceError(f"Firecrawl request failed: {exc}")
    return PermanentServiceError(f"Firecrawl sent an unusable reply: {exc}")


def _first_heading(markdown: str) -> str:
    match = re.search(r"^#{1,6}\s+(.+?)\s*#*\s*$", markdown, re.M)
    return match.group(1) if match else ""


def _page_links(links: list[str]) -> tuple[str, ...]:
    kept: dict[str, None] = {}
    for link in links:
        try:
            target = urldefrag(str(link).strip()).url
            if urlsplit(target).scheme in ("http", "https") and urlsplit(target).hostname:
                kept.setdefault(target, None)
        except ValueError:  # a malformed link ("http://[::1") is dropped, not fatal
            continue
    return tuple(kept)
