"""Fake Firecrawl v2 API (`POST /v2/scrape` as firecrawl-py 4.x sends it) with scripted errors, and fixtures."""

from __future__ import annotations

import ipaddress
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from backend.adapters.net_guard import UrlPolicy
from backend.adapters.web.firecrawl import FirecrawlPageFetcher
from tests.fakes.http import FakeRequest, FakeResponder, serve

FIRECRAWL_KEY = "fc-test-key"

# Error bodies as the Firecrawl API words them; firecrawl-py reads `error` (and `details`, `code`).
_ERROR_TEXT = {
    401: "Unauthorized: Invalid token",
    402: "Payment required to access this resource. Insufficient credits.",
    403: "This website is no longer supported, please reach out to help@firecrawl.com",
    408: "Request timed out",
    429: "Rate limit exceeded. Consumed (req/min): 11, Remaining (req/min): 0.",
    500: "An unexpected error occurred. Please contact help@firecrawl.com for help.",
    502: "Bad gateway",
    503: "Service unavailable",
}


@dataclass
class ScrapedPage:
    """What the fake returns for one URL, in the API's camelCase shape."""

    markdown: str
    title: str = ""
    og_title: str = ""
    links: list[str] = field(default_factory=list)
    final_url: str = ""
    status_code: int = 200

    def document(self, url: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {"sourceURL": url, "url": self.final_url or url, "statusCode": self.status_code,
                                    "contentType": "text/html; charset=utf-8", "scrapeId": "fake-scrape",
                                    "creditsUsed": 1, "proxyUsed": "basic"}
        if self.title:
            metadata["title"] = self.title
        if self.og_title:
            metadata["ogTitle"] = self.og_title
        return {"markdown": self.markdown, "links": list(self.links), "metadata": metadata}


@dataclass
class FirecrawlFake:
    """The running API: pages it knows, requests it received, failures it will answer with next."""

    base_url: str = ""
    api_key: str = FIRECRAWL_KEY
    pages: dict[str, ScrapedPage] = field(default_factory=dict)
    requests: list[FakeRequest] = field(default_factory=list)
    _failures: deque[tuple[int, dict[str, Any] | None]] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self._lock:
            self.pages.clear()
            self.requests.clear()
            self._failures.clear()

    def fail_next(self, *statuses: int, body: dict[str, Any] | None = None) -> None:
        """The next requests get these HTTP statuses with Firecrawl's error body (or `body`), one each."""
        with self._lock:
            self._failures.extend((status, body) for status in statuses)

    def bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return [request.json() for request in self.requests]

    def route(self, request: FakeRequest, respond: FakeResponder) -> None:
        with self._lock:
            self.requests.append(request)
            failure = self._failures.popleft() if self._failures else None
        if request.method != "POST" or request.path != "/v2/scrape":
            respond.json({"success": False, "error": f"Cannot {request.method} {request.path}"}, 404)
        elif request.headers.get("authorization") != f"Bearer {self.api_key}":
            respond.json({"success": False, "error": _ERROR_TEXT[401]}, 401)
        elif failure is not None:
            status, body = failure
            respond.json(body or {"success": False, "error": _ERROR_TEXT.get(status, "scripted failure")}, status)
        else:
            respond.json(self._scrape(request.json()))

    def _scrape(self, body: dict[str, Any]) -> dict[str, Any]:
        url = str(body.get("url", ""))
        page = self.pages.get(url)
        if page is None:
            # Firecrawl answers 200 and reports the target site's own status in the metadata.
            page = ScrapedPage(markdown="", title="404 Not Found", status_code=404)
        document = page.document(url)
        formats = body.get("formats") or ["markdown"]
        if "links" not in formats:
            document.pop("links")
        if "markdown" not in formats:
            document.pop("markdown")
        return {"success": True, "data": document}


@pytest.fixture(scope="session")
def _firecrawl_server() -> Iterator[FirecrawlFake]:
    fake = FirecrawlFake()
    with serve(fake.route) as base_url:
        fake.base_url = base_url
        yield fake


@pytest.fixture
def firecrawl_fake(_firecrawl_server: FirecrawlFake) -> Iterator[FirecrawlFake]:
    """The shared fake API with no pages, requests or scripted failures."""
    _firecrawl_server.reset()
    yield _firecrawl_server
    _firecrawl_server.reset()


def public_resolver(host: str, port: int) -> list[str]:
    """IP literals stay themselves, *.internal is a private host, any other name "resolves" to a public address.

    The guard thus passes public-looking sites without DNS; nothing connects to them, the fake Firecrawl
    service does the "fetching".
    """
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        return ["10.0.0.5"] if host.endswith(".internal") else ["93.184.216.34"]


@pytest.fixture
def firecrawl_fetcher(firecrawl_fake: FirecrawlFake) -> FirecrawlPageFetcher:
    return FirecrawlPageFetcher(api_key=FIRECRAWL_KEY, api_url=firecrawl_fake.base_url, policy=UrlPolicy(),
                                timeout=2.0, resolver=public_resolver, max_retries=1, backoff_factor=0.01)
