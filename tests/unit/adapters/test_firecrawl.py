"""The Firecrawl page fetcher against a fake v2 API: request shape, guard, titles, links and error mapping."""

from __future__ import annotations

import socket

import pytest

from backend.adapters.net_guard import BlockedUrlError, UrlPolicy
from backend.adapters.web.firecrawl import FirecrawlPageFetcher
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from tests.fakes.firecrawl_server import FIRECRAWL_KEY, FirecrawlFake, ScrapedPage, public_resolver

DOCS_URL = "https://docs.example.com/guide"
MARKDOWN = "# Guide\n\nInstall with `pip install widgets`.\n\n```python\nimport widgets\n```"


def test_scrapes_markdown_and_links_with_the_api_key(firecrawl_fetcher: FirecrawlPageFetcher,
                                                     firecrawl_fake: FirecrawlFake) -> None:
    firecrawl_fake.pages[DOCS_URL] = ScrapedPage(
        markdown=MARKDOWN, title="Guide | Docs", og_title="Guide", final_url="https://docs.example.com/guide/",
        links=["https://docs.example.com/a#part", "https://docs.example.com/a", "mailto:x@y.z", "/relative",
               "http://[::1", "https://docs.example.com/b"],
    )
    page = firecrawl_fetcher.fetch(DOCS_URL)
    assert page.url == DOCS_URL and page.final_url == "https://docs.example.com/guide/"
    assert page.title == "Guide" and page.markdown == MARKDOWN
    assert page.links == ("https://docs.example.com/a", "https://docs.example.com/b")
    request = firecrawl_fake.requests[0]
    assert (request.method, request.path) == ("POST", "/v2/scrape")
    assert request.headers["authorization"] == f"Bearer {FIRECRAWL_KEY}"
    body = request.json()
    assert body["url"] == DOCS_URL
    assert body["formats"] == ["markdown", "links"] and body["onlyMainContent"] is True


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        (ScrapedPage(markdown="Some text.", title="Page title"), "Page title"),
        (ScrapedPage(markdown="Intro.\n\n## Second heading\n\nMore."), "Second heading"),
        (ScrapedPage(markdown="No heading at all."), DOCS_URL),
    ],
)
def test_title_falls_back_from_metadata_to_the_first_heading_to_the_url(
    firecrawl_fetcher: FirecrawlPageFetcher, firecrawl_fake: FirecrawlFake, page: ScrapedPage, expected: str
) -> None:
    firecrawl_fake.pages[DOCS_URL] = page
    assert firecrawl_fetcher.fetch(DOCS_URL).title == expected


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/admin", "http://wiki.internal/", "file:///etc/passwd",
                                 "http://169.254.169.254/latest/meta-data/"])
def test_internal_urls_never_reach_firecrawl(firecrawl_fetcher: FirecrawlPageFetcher, firecrawl_fake: FirecrawlFake,
                                             url: str) -> None:
    with pytest.raises(BlockedUrlError):
        firecrawl_fetcher.fetch(url)
    assert firecrawl_fake.requests == []


def test_allow_listed_internal_hosts_are_scraped(firecrawl_fake: FirecrawlFake) -> None:
    firecrawl_fake.pages["http://wiki.internal/"] = ScrapedPage(markdown="# Wiki\n\nInternal docs.")
    fetcher = FirecrawlPageFetcher(api_key=FIRECRAWL_KEY, api_url=firecrawl_fake.base_url, resolver=public_resolver,
                                   policy=UrlPolicy.from_setting(["10.0.0.0/8"]), max_retries=1)
    assert fetcher.fetch("http://wiki.internal/").title == "Wiki"


def test_content_that_firecrawl_fetched_from_an_internal_redirect_target_is_refused(
    firecrawl_fetcher: FirecrawlPageFetcher, firecrawl_fake: FirecrawlFake
) -> None:
    firecrawl_fake.pages[DOCS_URL] = ScrapedPage(markdown="# Admin\n\nsecret", final_url="http://10.1.2.3/admin")
    with pytest.raises(BlockedUrlError):
        firecrawl_fetcher.fetch(DOCS_URL)


def test_a_wrong_api_key_is_permanent(firecrawl_fake: FirecrawlFake) -> None:
    fetcher = FirecrawlPageFetcher(api_key="fc-wrong", api_url=firecrawl_fake.base_url, policy=UrlPolicy(),
                                   resolver=public_resolver, max_retries=1)
    with pytest.raises(PermanentServiceError) as caught:
        fetcher.fetch(DOCS_URL)
    assert str(caught.value) == "Firecrawl rejected the API key"


@pytest.mark.parametrize(
    ("status", "error", "message"),
    [
        (401, PermanentServiceError, "Firecrawl rejected the API key"),
        (402, PermanentServiceError, "out of Firecrawl credits"),
        (400, PermanentServiceError, "Firecrawl could not scrape the page"),
        (403, PermanentServiceError, "Firecrawl could not scrape the page"),
        (408, TransientServiceError, "timed out"),
        (429, TransientServiceError, "rate limiting"),
        (500, TransientServiceError, "HTTP 500"),
        (502, TransientServiceError, "HTTP 502"),
        (503, TransientServiceError, "HTTP 503"),
    ],
)
def test_api_errors_map_to_permanent_or_transient(firecrawl_fetcher: FirecrawlPageFetcher,
                                                  firecrawl_fake: FirecrawlFake, status: int,
                                                  error: type[Exception], message: str) -> None:
    firecrawl_fake.fail_next(status)
    with pytest.raises(error) as caught:
        firecrawl_fetcher.fetch(DOCS_URL)
    assert type(caught.value) is error
    assert message in str(caught.value)


def test_the_sites_own_status_is_reported(firecrawl_fetcher: FirecrawlPageFetcher,
                                          firecrawl_fake: FirecrawlFake) -> None:
    with pytest.raises(PermanentServiceError, match=r"page not found \(HTTP 404\)"):
        firecrawl_fetcher.fetch("https://docs.example.com/unknown")
    firecrawl_fake.pages[DOCS_URL] = ScrapedPage(markdown="Service Unavailable", status_code=503)
    with pytest.raises(TransientServiceError, match="HTTP 503"):
        firecrawl_fetcher.fetch(DOCS_URL)


def test_an_empty_scrape_is_permanent(firecrawl_fetcher: FirecrawlPageFetcher, firecrawl_fake: FirecrawlFake) -> None:
    firecrawl_fake.pages[DOCS_URL] = ScrapedPage(markdown="  \n")
    with pytest.raises(PermanentServiceError, match="no readable text"):
        firecrawl_fetcher.fetch(DOCS_URL)


def test_an_unreachable_firecrawl_is_transient() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fetcher = FirecrawlPageFetcher(api_key=FIRECRAWL_KEY, api_url=f"http://127.0.0.1:{port}", policy=UrlPolicy(),
                                   resolver=public_resolver, timeout=1.0, max_retries=1)
    with pytest.raises(TransientServiceError, match="could not reach Firecrawl"):
        fetcher.fetch(DOCS_URL)
