"""Finding a website's pages: URL normalisation, sitemaps, robots.txt rules and a bounded, lazy same-site crawl."""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit
from xml.etree.ElementTree import ParseError

import defusedxml.ElementTree as SafeElementTree
from defusedxml import DefusedXmlException
from protego import Protego

from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError
from backend.pipeline.ingest_types import FetchedPage

logger = logging.getLogger(__name__)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_ROBOTS_MAX_CHARS = 512 * 1024  # RFC 9309: parse at least the first 500 KiB
_SITEMAP_ACCEPT = "application/xml,text/xml;q=0.9,text/plain;q=0.5,*/*;q=0.1"
SKIPPED_EXTENSIONS = frozenset(
    ".pdf .zip .gz .tgz .bz2 .xz .7z .rar .tar .png .jpg .jpeg .gif .webp .svg .ico .bmp .tif .tiff .avif .mp3 "
    ".mp4 .m4a .wav .ogg .webm .mov .avi .mkv .css .js .mjs .map .json .xml .rss .atom .woff .woff2 .ttf .otf .eot "
    ".exe .dmg .pkg .deb .rpm .msi .apk .iso .bin .doc .docx .xls .xlsx .ppt .pptx .odt .ods .csv .epub".split()
)


class RawText(Protocol):
    """What a fetch_raw callable returns (the HTTP fetcher's RawResponse); read-only, so frozen dataclasses fit."""

    @property
    def final_url(self) -> str: ...

    @property
    def content_type(self) -> str: ...

    @property
    def text(self) -> str: ...


FetchRaw = Callable[..., RawText]
"""Called as fetch_raw(url, accept=...); raises Transient/PermanentServiceError."""
Fetch = Callable[[str], FetchedPage]


def normalize_url(url: str) -> str:
    """Lowercase scheme and host, drop default ports, fragments and dot segments; keep the query.

    Raises ValueError for URLs urllib cannot split (a non-numeric port, an unclosed IPv6 bracket).
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = _remove_dot_segments(parts.path) or "/"
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 on a path's segments (posixpath.normpath would also merge "//" and drop a final "/")."""
    output: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if len(output) > 1:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/".join(output)


@dataclass(frozen=True)
class SitemapResult:
    """Page URLs of a <urlset> and child sitemap URLs of a <sitemapindex>."""

    urls: tuple[str, ...] = ()
    child_sitemaps: tuple[str, ...] = ()


def _http_only(candidates: Iterable[str]) -> tuple[str, ...]:
    kept: dict[str, None] = {}
    for candidate in candidates:
        value = candidate.strip()
        try:
            parts = urlsplit(normalize_url(value))
        except ValueError:  # a bad port or bracket; one broken entry must not void the rest
            continue
        if parts.scheme in _DEFAULT_PORTS and parts.netloc:
            kept.setdefault(value, None)
    return tuple(kept)


def parse_sitemap(xml_text: str) -> SitemapResult:
    """Read a sitemap (urlset), a sitemap index, or a plain-text sitemap (one URL per line)."""
    text = xml_text.lstrip("\ufeff \t\r\n")
    if not text.startswith("<"):
        return SitemapResult(urls=_http_only(text.splitlines()))
    try:
        root = SafeElementTree.fromstring(text)
    except (ParseError, DefusedXmlException, ValueError) as exc:
        raise PermanentServiceError(f"the sitemap is not valid XML ({exc})") from exc

    def local(tag: object) -> str:
        return str(tag).rsplit("}", 1)[-1].lower()

    kind, entry = local(root.tag), "url"
    if kind == "sitemapindex":
        entry = "sitemap"
    elif kind != "urlset":
        raise PermanentServiceError(f"not a sitemap: the document's root element is <{local(root.tag)}>")
    locations = [
        (child.text or "")
        for item in root if local(item.tag) == entry
        for child in item if local(child.tag) == "loc"
    ]
    if entry == "sitemap":
        return SitemapResult(child_sitemaps=_http_only(locations))
    return SitemapResult(urls=_http_only(locations))


def discover_from_sitemap(url: str, fetch_raw: FetchRaw, *, max_pages: int, max_sitemaps: int = 50) -> list[str]:
    """Page URLs of a sitemap, following sitemap indexes; at most max_pages URLs and max_sitemaps documents.

    A failure of the first sitemap is raised; a broken child sitemap is logged and skipped.
    """
    queue: deque[str] = deque([url])
    visited: set[str] = set()
    found: dict[str, None] = {}
    while queue and len(visited) < max_sitemaps and len(found) < max_pages:
        sitemap_url = queue.popleft()
        if normalize_url(sitemap_url) in visited:
            continue
        first = not visited
        visited.add(normalize_url(sitemap_url))
        try:
            result = parse_sitemap(fetch_raw(sitemap_url, accept=_SITEMAP_ACCEPT).text)
        except ServiceError as exc:
            if first:
                raise
            logger.warning("Skipping sitemap %s: %s", sitemap_url, exc)
            continue
        queue.extend(result.child_sitemaps)
        for page_url in result.urls:
            if len(found) >= max_pages:
                break
            found.setdefault(normalize_url(page_url), None)
    return list(found)


@dataclass(frozen=True)
class RobotsRules:
    """robots.txt of one site for one user agent; `allow_all` / `disallow_all` when there was none to read."""

    user_agent: str
    parser: Protego | None = None
    disallow_all: bool = False
    reason: str = ""

    def allowed(self, url: str) -> bool:
        if self.disallow_all:
            return False
        return self.parser is None or bool(self.parser.can_fetch(url, self.user_agent))

    @property
    def crawl_delay(self) -> float:
        delay = self.parser.crawl_delay(self.user_agent) if self.parser else None
        return float(delay or 0.0)

    @property
    def sitemaps(self) -> tuple[str, ...]:
        return _http_only(self.parser.sitemaps) if self.parser else ()


def robots_for(base_url: str, fetch_raw: FetchRaw, user_agent: str) -> RobotsRules:
    """The site's robots.txt rules (RFC 9309): 4xx allows everything, 5xx or unreachable disallows this run."""
    parts = urlsplit(base_url)
    robots_url = urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))
    try:
        text = fetch_raw(robots_url, accept="text/plain").text
    except TransientServiceError as exc:
        return RobotsRules(user_agent, disallow_all=True, reason=f"robots.txt is unavailable: {exc}")
    except PermanentServiceError as exc:
        return RobotsRules(user_agent, reason=f"no robots.txt: {exc}")
    return RobotsRules(user_agent, parser=Protego.parse(text[:_ROBOTS_MAX_CHARS]))


@dataclass(frozen=True)
class CrawledPage:
    """One URL the crawl fetched: the page, or the error message when the fetch failed."""

    url: str
    depth: int
    page: FetchedPage | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.page is not None


@dataclass
class _Scope:
    netloc: str
    prefix: str

    @classmethod
    def of(cls, url: str, *, same_prefix: bool) -> _Scope:
        parts = urlsplit(normalize_url(url))
        # The start page's directory, like wget --no-parent: /docs/intro keeps to /docs/, /docs/ to /docs/.
        prefix = parts.path[: parts.path.rfind("/") + 1] if same_prefix else "/"
        return cls(parts.netloc, prefix or "/")

    def contains(self, normalized: str) -> bool:
        parts = urlsplit(normalized)
        return parts.scheme in _DEFAULT_PORTS and parts.netloc == self.netloc and parts.path.startswith(self.prefix)


def is_page_url(url: str) -> bool:
    """False for links to files a web page fetcher cannot index (archives, images, PDFs, media, ...)."""
    path = urlsplit(url).path.lower()
    name = path.rsplit("/", 1)[-1]
    return "." not in name or "." + name.rsplit(".", 1)[-1] not in SKIPPED_EXTENSIONS


@dataclass
class _Frontier:
    scope: _Scope
    robots: RobotsRules | None
    seen: set[str] = field(default_factory=set)
    queue: deque[tuple[str, int]] = field(default_factory=deque)

    def offer(self, url: str, depth: int) -> None:
        try:
            normalized = normalize_url(url)
        except ValueError:  # a page's malformed link (bad port, unbalanced "[") is skipped, not fatal
            return
        if normalized in self.seen or not self.scope.contains(normalized) or not is_page_url(normalized):
            return
        self.seen.add(normalized)
        if self.robots is None or self.robots.allowed(normalized):
            self.queue.append((normalized, depth))


@dataclass(frozen=True, kw_only=True)
class CrawlLimits:
    """How far a crawl may go: link hops from the start page, fetches, scope, and the cap on robots' delay."""

    max_depth: int
    max_pages: int
    same_prefix: bool = True
    max_delay: float = 5.0


class Crawl:
    """A lazy breadth-first crawl over same-host links (under the start page's directory when same_prefix).

    Iterating fetches one URL at a time and yields it as a CrawledPage, so a caller can index pages while
    the crawl goes on and never holds the whole site. At most max_pages fetches are yielded (failed ones
    included), links are followed up to max_depth hops from the start page; URLs robots.txt disallows and
    links to non-page files are skipped, and the robots crawl-delay (capped at max_delay) is kept between
    fetches. Each fetched URL is yielded once: with its page, or with the error message. Iterate it once.
    """

    def __init__(self, start_url: str, fetch: Fetch, robots: RobotsRules | None, limits: CrawlLimits,
                 *, sleep: Callable[[float], None] = time.sleep) -> None:
        self._fetch, self._robots, self._limits, self._sleep = fetch, robots, limits, sleep
        self.fetched = 0
        """CrawledPages yielded so far, failed fetches included."""
        self.failed = 0
        """Of those, the fetches that failed."""
        self._refusal: CrawledPage | None = None
        self._frontier = _Frontier(_Scope("", "/"), robots)  # stays empty when the start URL is refused
        try:
            start = normalize_url(start_url)
        except ValueError:
            self._refusal = CrawledPage(start_url, 0, error="not a valid URL")
            return
        if robots is not None and not robots.allowed(start):
            self._refusal = CrawledPage(start, 0, error="robots.txt disallows this page")
            return
        self._frontier = _Frontier(_Scope.of(start, same_prefix=limits.same_prefix), robots, seen={start},
                                   queue=deque([(start, 0)]))

    @property
    def known(self) -> int:
        """Pages known so far: yielded plus still queued, at most max_pages.

        It grows as links are found, and drops when a queued URL redirects to a page already crawled or off the site.
        """
        return min(self._limits.max_pages, self.fetched + len(self._frontier.queue))

    def __iter__(self) -> Iterator[CrawledPage]:
        if self._refusal is not None:
            yield self._counted(self._refusal)
            return
        robots, frontier = self._robots, self._frontier
        delay = min(robots.crawl_delay, self._limits.max_delay) if robots is not None else 0.0
        while frontier.queue and self.fetched < self._limits.max_pages:
            url, depth = frontier.queue.popleft()
            if self.fetched and delay:
                self._sleep(delay)
            crawled = self._visit(url, depth)
            if crawled is not None:
                yield self._counted(crawled)

    def _visit(self, url: str, depth: int) -> CrawledPage | None:
        """Fetch one URL and queue its links; None for a redirect to a page already crawled or off the site."""
        frontier = self._frontier
        try:
            page = self._fetch(url)
        except ServiceError as exc:
            return CrawledPage(url, depth, error=str(exc))
        final = normalize_url(page.final_url)
        if depth == 0 and final != url:
            # The start URL redirected (example.com/docs -> www.example.com/docs/): scope the crawl by where it landed.
            frontier.scope = _Scope.of(final, same_prefix=self._limits.same_prefix)
        elif final != url and (final in frontier.seen or not frontier.scope.contains(final)):
            return None
        frontier.seen.add(final)
        # Links are queued before the page is yielded, so `known` already counts them when the caller sees it.
        if depth < self._limits.max_depth:
            for link in page.links:
                frontier.offer(link, depth + 1)
        return CrawledPage(url, depth, page=page)

    def _counted(self, crawled: CrawledPage) -> CrawledPage:
        self.fetched += 1
        if not crawled.ok:
            self.failed += 1
        return crawled


def crawl(
    start_url: str,
    fetch: Fetch,
    robots: RobotsRules | None,
    *,
    max_depth: int,
    max_pages: int,
    same_prefix: bool = True,
    max_delay: float = 5.0,
    sleep: Callable[[float], None] = time.sleep,
) -> list[CrawledPage]:
    """Every page of a Crawl at once, in crawl order (see Crawl for the rules)."""
    limits = CrawlLimits(max_depth=max_depth, max_pages=max_pages, same_prefix=same_prefix, max_delay=max_delay)
    return list(Crawl(start_url, fetch, robots, limits, sleep=sleep))


def crawl_failures(pages: Iterable[CrawledPage]) -> list[tuple[str, str]]:
    """(url, message) of the fetches that failed."""
    return [(page.url, page.error) for page in pages if page.page is None]
