"""Site discovery: URL normalisation, sitemaps, robots.txt and the bounded crawl (against the fake site)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from protego import Protego

from backend.adapters.web.fetcher import HttpPageFetcher
from backend.pipeline.discovery import (
    Crawl,
    CrawledPage,
    CrawlLimits,
    RobotsRules,
    crawl,
    crawl_failures,
    discover_from_sitemap,
    is_page_url,
    normalize_url,
    parse_sitemap,
    robots_for,
)
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.ingest_types import FetchedPage
from tests.fakes.site_server import SITE_USER_AGENT, Reply, SiteFake

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTPS://Docs.Example.COM:443/Guide/?b=2&a=1#intro", "https://docs.example.com/Guide/?b=2&a=1"),
        ("http://example.com:80", "http://example.com/"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com/a/b/../c/./d", "https://example.com/a/c/d"),
        ("https://example.com/a/..", "https://example.com/"),
        ("https://example.com/../../x", "https://example.com/x"),
        ("https://example.com/a/./", "https://example.com/a/"),
        ("https://example.com//double//slash", "https://example.com//double//slash"),
        ("https://example.com.:443/x", "https://example.com/x"),
        ("http://[::1]:80/x", "http://[::1]/x"),
        ("https://example.com/search?q=a#frag", "https://example.com/search?q=a"),
    ],
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize("url", ["http://example.com:99999/", "http://example.com:port/", "http://[::1/"])
def test_normalize_url_rejects_unsplittable_urls(url: str) -> None:
    with pytest.raises(ValueError):
        normalize_url(url)


def test_parse_urlset_ignores_non_http_entries() -> None:
    xml = (f'<?xml version="1.0" encoding="UTF-8"?><urlset {NS}><url><loc> https://a.example/1 </loc></url>'
           "<url><loc>https://a.example/2</loc><lastmod>2024-01-01</lastmod></url><url><loc>ftp://a.example/f</loc>"
           "</url><url><loc>mailto:x@a.example</loc></url><url><loc>https://a.example:bad/</loc></url>"
           "<url><loc>https://a.example/1</loc></url></urlset>")
    result = parse_sitemap(xml)
    assert result.urls == ("https://a.example/1", "https://a.example/2")
    assert result.child_sitemaps == ()


def test_parse_sitemap_index_and_plain_text_sitemaps() -> None:
    index = (f"<sitemapindex {NS}><sitemap><loc>https://a.example/s1.xml</loc></sitemap>"
             "<sitemap><loc>https://a.example/s2.xml.gz</loc></sitemap></sitemapindex>")
    assert parse_sitemap(index).child_sitemaps == ("https://a.example/s1.xml", "https://a.example/s2.xml.gz")
    assert parse_sitemap(index).urls == ()
    assert parse_sitemap("\ufeffhttps://a.example/x\n\nnot a url\nhttps://a.example/y\n").urls == (
        "https://a.example/x", "https://a.example/y")


@pytest.mark.parametrize(
    "xml",
    [
        "<urlset><url><loc>unclosed",
        "<html><body>Not found</body></html>",
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><urlset><url><loc>&b;</loc>'
        "</url></urlset>",
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><urlset><url><loc>&x;</loc>'
        "</url></urlset>",
    ],
)
def test_broken_foreign_or_entity_laden_sitemaps_are_permanent(xml: str) -> None:
    with pytest.raises(PermanentServiceError):
        parse_sitemap(xml)


def test_discovers_pages_through_a_sitemap_index(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    base = fake_site.base_url
    urls = discover_from_sitemap(f"{base}/sitemap_index.xml", site_fetcher.fetch_raw, max_pages=100)
    # install#top folds into install; the missing child is skipped; the index listing itself is read once.
    assert urls == [f"{base}/docs/", f"{base}/docs/install", f"{base}/docs/config", f"{base}/docs/quickstart",
                    f"{base}/blog/scheduler"]
    assert fake_site.paths().count("/sitemap_index.xml") == 1
    assert "/sitemap-missing.xml" in fake_site.paths()


def test_sitemap_discovery_is_bounded(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    base = fake_site.base_url
    assert discover_from_sitemap(f"{base}/sitemap_index.xml", site_fetcher.fetch_raw, max_pages=2) == [
        f"{base}/docs/", f"{base}/docs/install"]
    assert discover_from_sitemap(f"{base}/sitemap_index.xml", site_fetcher.fetch_raw, max_pages=100,
                                 max_sitemaps=1) == []


def test_a_missing_root_sitemap_raises(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    with pytest.raises(PermanentServiceError, match="HTTP 404"):
        discover_from_sitemap(f"{fake_site.base_url}/sitemap.xml", site_fetcher.fetch_raw, max_pages=10)


def test_robots_txt_rules_and_sitemaps(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    base = fake_site.base_url
    rules = robots_for(f"{base}/docs/install", site_fetcher.fetch_raw, SITE_USER_AGENT)
    assert not rules.allowed(f"{base}/docs/private/secret")
    assert rules.allowed(f"{base}/docs/install")
    assert rules.sitemaps == (f"{base}/sitemap_index.xml",)
    assert fake_site.paths() == ["/robots.txt"]


def test_robots_groups_for_our_user_agent_win() -> None:
    rules = RobotsRules("OpenGuruBot/0.1 (+https://example.invalid)", parser=Protego.parse(
        "User-agent: *\nDisallow: /\n\nUser-agent: OpenGuruBot\nDisallow: /drafts/\nCrawl-delay: 3\n"))
    assert rules.allowed("https://a.example/docs/") and not rules.allowed("https://a.example/drafts/x")
    assert rules.crawl_delay == 3.0


@pytest.mark.parametrize(("status", "allowed"), [(404, True), (410, True), (403, True), (503, False), (500, False)])
def test_missing_robots_allows_all_and_an_erroring_one_disallows_all(
    site_fetcher: HttpPageFetcher, fake_site: SiteFake, status: int, allowed: bool
) -> None:
    fake_site.overrides["/robots.txt"] = Reply(status, b"error", {"Content-Type": "text/plain"})
    rules = robots_for(fake_site.base_url, site_fetcher.fetch_raw, SITE_USER_AGENT)
    assert rules.allowed(f"{fake_site.base_url}/docs/private/secret") is allowed
    assert rules.reason


def crawled_paths(pages: list[CrawledPage], base: str) -> list[str]:
    return [page.url.removeprefix(base) for page in pages if page.ok]


def test_crawl_stays_under_the_start_directory_and_honours_robots(site_fetcher: HttpPageFetcher,
                                                                   fake_site: SiteFake) -> None:
    base = fake_site.base_url
    robots = robots_for(base, site_fetcher.fetch_raw, SITE_USER_AGENT)
    fake_site.reset()
    pages = crawl(f"{base}/docs/", site_fetcher.fetch, robots, max_depth=2, max_pages=50)
    assert crawled_paths(pages, base) == ["/docs/", "/docs/install", "/docs/config", "/docs/quickstart",
                                          "/docs/deep/one"]
    assert crawl_failures(pages) == [(f"{base}/docs/broken", "page not found (HTTP 404)")]
    assert pages[1].depth == 1 and pages[-1].depth == 2
    # Each page fetched once (install#options and ./config were the same pages); nothing disallowed, no PDF.
    assert sorted(fake_site.paths()) == sorted(["/docs/", "/docs/install", "/docs/config", "/docs/quickstart",
                                                "/docs/broken", "/docs/deep/one"])
    install = next(page.page for page in pages if page.url.endswith("/docs/install"))
    assert install is not None and install.title == "Installing Widgets" and "```python" in install.markdown


def test_crawl_depth_and_page_limits(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    base = fake_site.base_url
    deep = crawl(f"{base}/docs/deep/one", site_fetcher.fetch, None, max_depth=10, max_pages=50)
    assert crawled_paths(deep, base) == ["/docs/deep/one", "/docs/deep/two", "/docs/deep/three", "/docs/deep/four"]
    shallow = crawl(f"{base}/docs/deep/one", site_fetcher.fetch, None, max_depth=1, max_pages=50)
    assert crawled_paths(shallow, base) == ["/docs/deep/one", "/docs/deep/two"]
    only_start = crawl(f"{base}/docs/", site_fetcher.fetch, None, max_depth=0, max_pages=50)
    assert crawled_paths(only_start, base) == ["/docs/"]
    limited = crawl(f"{base}/docs/", site_fetcher.fetch, None, max_depth=5, max_pages=3)
    assert len(limited) == 3


def test_crawl_whole_host_when_not_limited_to_the_prefix(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    base = fake_site.base_url
    pages = crawl(f"{base}/docs/", site_fetcher.fetch, None, max_depth=1, max_pages=50, same_prefix=False)
    paths = crawled_paths(pages, base)
    assert "/blog/scheduler" in paths and "/docs/private/secret" in paths and "/pricing" not in paths
    assert not any("elsewhere.example" in page.url for page in pages)


def test_crawl_scopes_by_where_the_start_url_redirected(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    base = fake_site.base_url
    pages = crawl(f"{base}/docs", site_fetcher.fetch, None, max_depth=1, max_pages=50)
    assert pages[0].page is not None and pages[0].page.final_url == f"{base}/docs/"
    assert "/blog/scheduler" not in crawled_paths(pages, base)
    assert "/docs/install" in crawled_paths(pages, base)


def scripted_fetch(site: dict[str, tuple[str, list[str]]]) -> Callable[[str], FetchedPage]:
    """A site in memory: url -> (final url after redirects, links); unknown URLs fail like a 404."""

    def fetch(url: str) -> FetchedPage:
        if url not in site:
            raise PermanentServiceError("page not found (HTTP 404)")
        final, links = site[url]
        return FetchedPage(url=url, final_url=final, title=url, markdown="text", links=tuple(links))

    return fetch


def test_crawl_skips_redirect_duplicates_off_site_redirects_and_transient_failures() -> None:
    fetch = scripted_fetch({
        "https://a.example/docs/": ("https://a.example/docs/", [
            "https://a.example/docs/x", "https://a.example/docs/y", "https://A.example:443/docs/z/../x",
            "https://a.example/docs/out"]),
        "https://a.example/docs/x": ("https://a.example/docs/x", []),
        "https://a.example/docs/y": ("https://a.example/docs/x", []),
        "https://a.example/docs/out": ("https://b.example/", ["https://a.example/docs/never"]),
    })
    pages = crawl("https://a.example/docs/", fetch, None, max_depth=3, max_pages=10)
    assert [page.url for page in pages if page.ok] == ["https://a.example/docs/", "https://a.example/docs/x"]


def test_crawl_keeps_the_crawl_delay_and_refuses_a_disallowed_start() -> None:
    fetch = scripted_fetch({
        "https://a.example/": ("https://a.example/", ["https://a.example/1", "https://a.example/2"]),
        "https://a.example/1": ("https://a.example/1", []),
        "https://a.example/2": ("https://a.example/2", []),
    })
    slept: list[float] = []
    rules = RobotsRules("bot", parser=Protego.parse("User-agent: *\nCrawl-delay: 30\nDisallow: /private\n"))
    pages = crawl("https://a.example/", fetch, rules, max_depth=1, max_pages=10, max_delay=2.0, sleep=slept.append)
    assert len(pages) == 3 and slept == [2.0, 2.0]
    refused = crawl("https://a.example/private", fetch, rules, max_depth=1, max_pages=10)
    assert refused == [CrawledPage("https://a.example/private", 0, error="robots.txt disallows this page")]
    disallow_all = RobotsRules("bot", disallow_all=True)
    assert crawl("https://a.example/", fetch, disallow_all, max_depth=1, max_pages=10)[0].error


def test_transient_failures_are_reported_not_raised() -> None:
    def fetch(url: str) -> FetchedPage:
        raise TransientServiceError("the site had a server error (HTTP 503)")

    pages = crawl("https://a.example/", fetch, None, max_depth=1, max_pages=10)
    assert crawl_failures(pages) == [("https://a.example/", "the site had a server error (HTTP 503)")]


def test_the_lazy_crawl_yields_each_page_as_it_is_fetched_and_counts_what_it_has_found() -> None:
    fetched: list[str] = []
    scripted = scripted_fetch({
        "https://a.example/docs/": ("https://a.example/docs/", [
            "https://a.example/docs/a", "https://a.example/docs/b", "https://a.example/docs/c"]),
        "https://a.example/docs/a": ("https://a.example/docs/a", ["https://a.example/docs/d", "https://a.example/docs/e"]),
        "https://a.example/docs/c": ("https://a.example/docs/a", []),
        "https://a.example/docs/d": ("https://a.example/docs/d", []),
        "https://a.example/docs/e": ("https://a.example/docs/e", []),
    })

    def fetch(url: str) -> FetchedPage:
        fetched.append(url)
        return scripted(url)

    pages = Crawl("https://a.example/docs/", fetch, None, CrawlLimits(max_depth=3, max_pages=10))
    assert pages.known == 1 and fetched == []
    seen: list[tuple[str, int, int]] = []  # (page, fetches so far, pages known) as each page arrives
    for page in pages:
        seen.append((page.url.removeprefix("https://a.example/docs/"), len(fetched), pages.known))
    # b fails (404) but still counts; c redirects to a, already crawled, so it leaves the count unreported.
    assert seen == [("", 1, 4), ("a", 2, 6), ("b", 3, 6), ("d", 5, 5), ("e", 6, 5)]
    assert (pages.fetched, pages.failed) == (5, 1)


def test_the_lazy_crawl_counts_at_most_max_pages() -> None:
    links = [f"https://a.example/{n}" for n in range(20)]
    fetch = scripted_fetch({"https://a.example/": ("https://a.example/", links)}
                           | {link: (link, []) for link in links})
    pages = Crawl("https://a.example/", fetch, None, CrawlLimits(max_depth=1, max_pages=3))
    assert [pages.known for _ in pages] == [3, 3, 3]
    assert pages.fetched == 3


@pytest.mark.parametrize("start", ["http://[::1/", "https://a.example/private"])
def test_a_refused_start_is_one_failure_and_nothing_known(start: str) -> None:
    rules = RobotsRules("bot", parser=Protego.parse("User-agent: *\nDisallow: /private\n"))
    pages = Crawl(start, scripted_fetch({}), rules, CrawlLimits(max_depth=1, max_pages=10))
    assert pages.known == 0
    assert [page.ok for page in pages] == [False]
    assert (pages.known, pages.fetched, pages.failed) == (1, 1, 1)


def test_the_lazy_crawl_of_a_real_site_indexes_before_the_site_is_fetched(
    site_fetcher: HttpPageFetcher, fake_site: SiteFake
) -> None:
    base = fake_site.base_url
    robots = robots_for(base, site_fetcher.fetch_raw, SITE_USER_AGENT)
    fake_site.reset()
    pages = Crawl(f"{base}/docs/", site_fetcher.fetch, robots, CrawlLimits(max_depth=2, max_pages=50))
    lazily = iter(pages)
    first = next(lazily)
    assert first.ok and fake_site.paths() == ["/docs/"]
    # install, config, quickstart and broken are queued; private is disallowed, the PDF and blog out of scope.
    assert pages.known == 5
    rest = list(lazily)
    assert pages.known == pages.fetched == 6 and pages.failed == 1
    assert [first, *rest] == crawl(f"{base}/docs/", site_fetcher.fetch, robots, max_depth=2, max_pages=50)


@pytest.mark.parametrize(
    ("url", "page"),
    [("https://a.example/docs/", True), ("https://a.example/guide.html", True),
     ("https://a.example/v1.2/intro", True), ("https://a.example/notes.txt", True),
     ("https://a.example/file.PDF", False), ("https://a.example/a.tar.gz", False),
     ("https://a.example/logo.png", False)],
)
def test_non_page_extensions_are_not_crawled(url: str, page: bool) -> None:
    assert is_page_url(url) is page
