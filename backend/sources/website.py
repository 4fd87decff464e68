"""Website sources: one page, the pages of a sitemap, or a same-site crawl (robots.txt respected)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

from django.conf import settings

from backend.adapters import registry
from backend.pipeline.discovery import Crawl, CrawlLimits, RobotsRules, discover_from_sitemap, robots_for
from backend.pipeline.errors import PermanentServiceError
from backend.pipeline.ingest_types import Document
from backend.sources.models import DataSource
from backend.sources.plans import Plan, page_document


def _limits(source: DataSource) -> tuple[int, int]:
    options = source.options or {}
    pages = min(int(options.get("max_pages") or settings.OPENGURU_CRAWL_MAX_PAGES), settings.OPENGURU_CRAWL_MAX_PAGES)
    depth = min(int(options.get("depth") or settings.OPENGURU_CRAWL_MAX_DEPTH), settings.OPENGURU_CRAWL_MAX_DEPTH)
    return pages, depth


def _fetch_each(urls: list[str], failures: list[tuple[str, str]]) -> Iterator[Document]:
    fetcher = registry.page_fetcher()
    for url in urls:
        try:
            yield page_document(fetcher.fetch(url))
        except PermanentServiceError as exc:
            # One broken page of a sitemap must not fail the other pages.
            failures.append((url, str(exc)))


def website_plan(source: DataSource) -> Plan:
    """Discover the source's pages (a crawl discovers them as it goes); pages are fetched as the plan is consumed."""
    mode = (source.options or {}).get("mode", "page")
    if mode == "page":
        page = registry.page_fetcher().fetch(source.url)
        return Plan(total=1, documents=iter([page_document(page)]), title=page.title)
    raw = registry.web_fetcher().fetch_raw
    robots = robots_for(source.url, raw, settings.OPENGURU_FETCH_USER_AGENT)
    max_pages, max_depth = _limits(source)
    if mode == "sitemap":
        urls = [u for u in discover_from_sitemap(source.url, raw, max_pages=max_pages) if robots.allowed(u)]
        if not urls:
            raise PermanentServiceError("The sitemap lists no pages that robots.txt allows.")
        failures: list[tuple[str, str]] = []
        return Plan(total=len(urls), documents=_fetch_each(urls, failures), failures=failures,
                    title=site_name(source.url, mode), multi_page=True)
    return _crawl_plan(source, robots, CrawlLimits(max_depth=max_depth, max_pages=max_pages))


def _crawl_plan(source: DataSource, robots: RobotsRules, limits: CrawlLimits) -> Plan:
    """Pages are crawled as the plan is consumed; the total grows with the links the crawl finds."""
    crawl = Crawl(source.url, registry.page_fetcher().fetch, robots, limits)
    failures: list[tuple[str, str]] = []

    def documents() -> Iterator[Document]:
        for crawled in crawl:
            if crawled.page is None:
                failures.append((crawled.url, crawled.error))
            else:
                yield page_document(crawled.page)

    def pages_found() -> int:
        # Failed fetches leave the count, so once the crawl ends the total is the pages indexed.
        return crawl.known - crawl.failed

    return Plan(total=pages_found(), documents=documents(), failures=failures, total_now=pages_found,
                title=site_name(source.url, "crawl"), multi_page=True)


def site_name(url: str, mode: str) -> str:
    """What a sitemap or crawl source is called: its site, not its first page ("docs.example.com sitemap")."""
    parts = urlsplit(url)
    where = parts.netloc or url
    if mode == "crawl" and parts.path.strip("/"):
        where += "/" + parts.path.strip("/")  # a crawl of /docs/ is not the whole site
    return f"{where} {mode}"
