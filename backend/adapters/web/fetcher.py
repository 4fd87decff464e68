"""Built-in page fetcher: httpx behind the SSRF guard on every redirect hop, capped bodies, HTML to markdown."""

# HTML -> markdown: beautifulsoup4 + markdownify with our own boilerplate stripping, chosen over trafilatura
# 2.3.1 after running both on a docs page (header nav, sidebar, cookie banner, two fenced code blocks), a
# Sphinx/Read-the-Docs page (div-only layout, Pygments <span> soup), a blog post and a page with a table
# (the pages are in tests/fakes/site_server.py). Both dropped the chrome and kept headings,
# lists and tables. trafilatura changed code: it deleted the blank lines inside every <pre> block, lost
# the language of the fence (```python became ```), dropped the blog's byline paragraph and the blockquote
# marker, and kept relative links. markdownify kept code byte for byte with its language, and quotes as
# "> ". trafilatura also pulls in dateparser, babel, htmldate, courlan, justext and tld, and failed to
# import with lxml 6 until lxml_html_clean was added by hand. Its edge is heuristic content detection on
# div-only layouts; the landmark/class rules and the link-density pass below cover the pages we tried.

from __future__ import annotations

import codecs
import contextlib
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx
from bs4 import BeautifulSoup, Tag
from markdownify import MarkdownConverter

from backend.adapters.net_guard import Resolver, UrlPolicy, check_url, system_resolver
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.ingest_types import FetchedPage

MIB = 1024 * 1024
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
_PAGE_ACCEPT = "text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.8,text/plain;q=0.7,*/*;q=0.1"
# WHATWG Encoding: pages labelled latin-1 or ASCII are decoded as windows-1252, as browsers do.
_CHARSET_ALIASES = {"iso-8859-1": "cp1252", "latin-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252",
                    "ascii": "cp1252"}
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.I)

_ALWAYS_DROP = ["script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "nav",
                "button", "input", "select", "textarea", "dialog", "link", "meta", "footer"]
_DROP_OUTSIDE_ARTICLE = ["header", "aside"]  # an article's own <header> holds its title and byline
_CHROME_ROLES = re.compile(r"^(navigation|banner|contentinfo|complementary|search|dialog|alertdialog)$", re.I)
# Whole class/id tokens only: "wy-nav-content" (Read the Docs' content wrapper) must not match a "nav" rule.
_CHROME_TOKEN = re.compile(
    r"(?:^|[-_])(?:cookies?|consent|gdpr|newsletter|subscribe|sidebar|breadcrumbs?|share|sharing|social|related|"
    r"advert|ads|banner|announcement|announcementbar|skip-link|toc|pagination|pager|feedback|navbar|menu|"
    r"linenos|lineno)(?:$|[-_])", re.I)
_PERMALINK_TEXT = frozenset({"", "¶", "#", "§", "🔗"})
_CODE_LANGUAGE = re.compile(r"^(?:language|lang|highlight|sourcecode)-([\w+#.-]+)$", re.I)
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class RawResponse:
    """A body fetched as-is (robots.txt, sitemaps): where it ended up, its media type and decoded text."""

    final_url: str
    content_type: str
    text: str


@dataclass(frozen=True)
class _Body:
    final_url: str
    mimetype: str
    charset: str | None
    content: bytes


class HttpPageFetcher:
    """PageFetcher over plain HTTP: guard and pin every hop, cap size and time, keep only HTML or text."""

    def __init__(self, *, policy: UrlPolicy, timeout: float = 20, max_bytes: int = 5 * MIB, user_agent: str,
                 resolver: Resolver | None = None, max_redirects: int = 5) -> None:
        self._policy = policy
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._resolver = resolver or system_resolver
        self._max_redirects = max_redirects
        # Requests go to the pinned address, so pooled connections would be keyed by IP and could carry one
        # virtual host's request over another's TLS session; environment proxies would bypass the pin.
        self._client = httpx.Client(follow_redirects=False, timeout=timeout, trust_env=False,
                                    headers={"User-Agent": user_agent},
                                    limits=httpx.Limits(max_keepalive_connections=0))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpPageFetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def fetch(self, url: str) -> FetchedPage:
        body = self._download(url, accept=_PAGE_ACCEPT, pages_only=True)
        if body.mimetype in _TEXT_TYPES:
            text = _decode(body.content, body.charset, sniff_meta=False).strip()
            if not _WORD.search(text):
                raise PermanentServiceError("no readable text on the page")
            return FetchedPage(url=url, final_url=body.final_url, title=_markdown_title(text) or body.final_url,
                               markdown=text)
        html = _decode(body.content, body.charset, sniff_meta=True)
        title, markdown, links = html_to_markdown(html, body.final_url)
        return FetchedPage(url=url, final_url=body.final_url, title=title or body.final_url, markdown=markdown,
                           links=links)

    def fetch_raw(self, url: str, *, accept: str) -> RawResponse:
        """Any text body (robots.txt, sitemap XML) with the same guard, redirects and caps as fetch()."""
        body = self._download(url, accept=accept, pages_only=False)
        return RawResponse(final_url=body.final_url, content_type=body.mimetype,
                           text=_decode(body.content, body.charset, sniff_meta=False))

    def _download(self, url: str, *, accept: str, pages_only: bool) -> _Body:
        deadline = time.monotonic() + self._timeout
        current = url
        try:
            for _hop in range(self._max_redirects + 1):
                response = self._open(current, accept)
                try:
                    if response.has_redirect_location:
                        current = urldefrag(urljoin(current, response.headers["location"])).url
                        continue
                    raise_for_http_status(response.status_code)
                    mimetype = response.headers.get("content-type", "").split(";")[0].strip().lower()
                    if pages_only and mimetype and mimetype not in _HTML_TYPES | _TEXT_TYPES:
                        raise PermanentServiceError(_not_html_message(mimetype))
                    content = self._read_capped(response, deadline)
                    if pages_only and not mimetype and not _looks_like_html(content):
                        raise PermanentServiceError(_not_html_message("no content type"))
                    return _Body(current, mimetype or "text/html", response.charset_encoding, content)
                finally:
                    response.close()
        except httpx.TimeoutException as exc:
            raise TransientServiceError(f"the site did not answer within {self._timeout:g} s") from exc
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise PermanentServiceError(f"cannot fetch {current!r}: {exc}") from exc
        except httpx.DecodingError as exc:
            raise PermanentServiceError(f"the site sent a corrupt compressed body: {exc}") from exc
        except httpx.TransportError as exc:
            raise TransientServiceError(f"could not reach the site: {exc or type(exc).__name__}") from exc
        raise PermanentServiceError(f"too many redirects (more than {self._max_redirects})")

    def _open(self, url: str, accept: str) -> httpx.Response:
        addresses: list[str] = []

        def capture(host: str, port: int) -> list[str]:
            found = self._resolver(host, port)
            addresses.extend(found)
            return found

        check_url(url, self._policy, resolver=capture)
        request = self._client.build_request("GET", url, headers={"Accept": accept})
        if addresses:
            # Connect to the address the guard approved (the Host header keeps the name), so a DNS answer
            # that changes between check and connect (DNS rebinding) cannot reach an internal host.
            host = request.url.host
            # IPv4 first: many containers resolve AAAA records but have no IPv6 route.
            request.url = request.url.copy_with(host=min(addresses, key=lambda address: ":" in address))
            if request.url.scheme == "https":
                request.extensions["sni_hostname"] = host
        return self._client.send(request, stream=True)

    def _read_capped(self, response: httpx.Response, deadline: float) -> bytes:
        too_large = PermanentServiceError(f"the page is larger than the {_size(self._max_bytes)} limit "
                                          "(OPENGURU_FETCH_MAX_BYTES)")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max_bytes:
            raise too_large
        content = bytearray()
        # iter_bytes yields decompressed data, so the cap also stops a small gzip bomb from inflating.
        for chunk in response.iter_bytes():
            content += chunk
            if len(content) > self._max_bytes:
                raise too_large
            if time.monotonic() > deadline:
                raise TransientServiceError(f"the site did not send the page within {self._timeout:g} s")
        return bytes(content)


def raise_for_http_status(status: int) -> None:
    """Nothing for 2xx; otherwise the Permanent or Transient error a fetch of that status means."""
    if 200 <= status < 300:
        return
    if status in (404, 410):
        raise PermanentServiceError(f"page not found (HTTP {status})")
    if status in (401, 403):
        raise PermanentServiceError(f"the site refused access (HTTP {status})")
    if status == 429:
        raise TransientServiceError("the site is rate limiting requests (HTTP 429)")
    if status >= 500:
        raise TransientServiceError(f"the site had a server error (HTTP {status})")
    if 400 <= status < 500:
        raise PermanentServiceError(f"the site rejected the request (HTTP {status})")
    raise PermanentServiceError(f"unexpected answer from the site (HTTP {status})")


def _not_html_message(mimetype: str) -> str:
    hint = " — add it as a PDF source instead" if mimetype == "application/pdf" else ""
    return f"not an HTML page: {mimetype}{hint}"


def _size(count: int) -> str:
    return f"{count / MIB:g} MiB" if count >= MIB else f"{count / 1024:g} KiB"


def _looks_like_html(content: bytes) -> bool:
    head = content[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<!--"))


def _decode(content: bytes, charset: str | None, *, sniff_meta: bool) -> str:
    """A byte order mark wins, then the HTTP charset, then <meta charset>, then UTF-8, then windows-1252."""
    bom = next((name for mark, name in _BOMS if content.startswith(mark)), None)
    meta = _META_CHARSET.search(content[:4096]) if sniff_meta else None
    candidates = (bom, charset, meta.group(1).decode("ascii") if meta else None)
    for candidate in candidates:
        if not candidate:
            continue
        name = _CHARSET_ALIASES.get(candidate.strip().lower(), candidate.strip())
        try:
            codecs.lookup(name)
        except LookupError:
            continue
        return content.decode(name, errors="replace")
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return content.decode("cp1252", errors="replace")


def _markdown_title(text: str) -> str:
    match = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.M)
    return match.group(1) if match else ""


def _squash(text: str) -> str:
    return " ".join(text.split())


def page_title(soup: BeautifulSoup) -> str:
    """og:title, then <title>, then the first <h1>."""
    meta = soup.find("meta", attrs={"property": "og:title"}) or soup.find("meta", attrs={"name": "og:title"})
    if isinstance(meta, Tag) and _squash(str(meta.get("content") or "")):
        return _squash(str(meta.get("content")))
    if soup.title and _squash(soup.title.get_text()):
        return _squash(soup.title.get_text())
    heading = soup.find("h1")
    return _squash(heading.get_text()) if heading else ""


def page_links(soup: BeautifulSoup, base_url: str) -> tuple[str, ...]:
    """Absolute http(s) targets of every <a href>, fragments stripped, in order, without repeats."""
    links: dict[str, None] = {}
    for anchor in soup.find_all("a", href=True):
        try:
            target = urldefrag(urljoin(base_url, str(anchor["href"]).strip())).url
            if urlsplit(target).scheme in ("http", "https") and urlsplit(target).hostname:
                links.setdefault(target, None)
        except ValueError:  # "http://[::1" and the like: one broken link must not fail the page
            continue
    return tuple(links)


def html_to_markdown(html: str, url: str) -> tuple[str, str, tuple[str, ...]]:
    """(title, markdown of the main content, links) of an HTML page fetched from `url`."""
    soup = BeautifulSoup(html, "lxml")
    base = soup.find("base", href=True)
    base_url = url
    if isinstance(base, Tag):
        with contextlib.suppress(ValueError):
            base_url = urljoin(url, str(base["href"]).strip())
    title, links = page_title(soup), page_links(soup, base_url)
    _drop_invisible(soup)
    for root, is_body in _content_roots(soup):
        _drop_chrome(root, link_density=is_body)
        _absolutize(root, base_url)
        markdown = _tidy(_Markdown(heading_style="ATX", bullets="-", escape_asterisks=False,
                                   escape_underscores=False, code_language_callback=_code_language)
                         .convert_soup(root))
        if _WORD.search(markdown):
            return title, markdown, links
    raise PermanentServiceError("no readable text on the page (it may need JavaScript to show its content)")


def _drop_invisible(soup: BeautifulSoup) -> None:
    for tag in soup.find_all(["script", "style", "noscript", "template"]):
        tag.decompose()
    for tag in soup.find_all(True):
        if tag.decomposed or not tag.attrs or tag.get("role") == "tabpanel":  # inactive tabs hold real content
            continue
        style = str(tag.get("style") or "").replace(" ", "").lower()
        if tag.has_attr("hidden") or "display:none" in style or "visibility:hidden" in style:
            tag.decompose()
    for anchor in soup.find_all("a"):
        # Sphinx/Docusaurus permalinks ("¶", "#") inside headings are navigation, not heading text.
        if str(anchor.get("href") or "").startswith("#") and anchor.get_text().strip() in _PERMALINK_TEXT:
            anchor.decompose()


def _content_roots(soup: BeautifulSoup) -> list[tuple[Tag, bool]]:
    """Where the content most likely is, best guess first; <body> (or the whole document) last."""
    roots: list[tuple[Tag, bool]] = []
    articles = soup.find_all("article")
    for candidate in (soup.find("main"), soup.find(None, attrs={"role": "main"}), articles[0] if len(articles) == 1
                      else None):
        if isinstance(candidate, Tag) and all(candidate is not root for root, _ in roots):
            roots.append((candidate, False))
    body = soup.body if soup.body else soup
    roots.append((body, True))
    return roots


def _drop_chrome(root: Tag, *, link_density: bool) -> None:
    for tag in root.find_all(_ALWAYS_DROP):
        tag.decompose()
    for tag in root.find_all(_DROP_OUTSIDE_ARTICLE):
        if not tag.decomposed and tag.find_parent("article") is None:
            tag.decompose()
    for tag in root.find_all(True):
        if tag.decomposed or tag.name in ("pre", "code", "article", "main"):
            continue
        tokens = [str(tag.get("id") or ""), *(str(c) for c in tag.get("class") or [])]
        if _CHROME_ROLES.match(str(tag.get("role") or "")) or any(_CHROME_TOKEN.search(t) for t in tokens if t):
            tag.decompose()
    if link_density:
        _drop_link_lists(root)


def _drop_link_lists(root: Tag) -> None:
    """Without landmarks, blocks that are mostly link text (menus, footers built of <div>s) are chrome."""
    for tag in root.find_all(["div", "section", "ul", "ol", "table", "p"]):
        if tag.decomposed or tag.find(["pre", "h1", "h2"]) is not None:
            continue
        anchors = tag.find_all("a")
        # Word characters only, so separators like " | " between menu links do not count as prose.
        words = len(_WORD.findall(tag.get_text()))
        if len(anchors) >= 3 and words:
            linked = sum(len(_WORD.findall(a.get_text())) for a in anchors)
            if linked / words >= 0.7:
                tag.decompose()


def _absolutize(root: Tag, base_url: str) -> None:
    for anchor in root.find_all("a", href=True):
        try:
            anchor["href"] = urljoin(base_url, str(anchor["href"]).strip())
        except ValueError:
            del anchor["href"]


def _code_language(pre: Tag) -> str:
    """The language of a <pre> from language-x / lang-x / highlight-x classes on it, its <code> or wrappers."""
    candidates: list[Any] = [pre, pre.find("code"), pre.parent, pre.parent.parent if pre.parent else None]
    for element in candidates:
        if not isinstance(element, Tag):
            continue
        for css_class in element.get("class") or []:
            match = _CODE_LANGUAGE.match(str(css_class))
            if match and match.group(1).lower() not in ("default", "none", "text", "notranslate"):
                return match.group(1).lower()
    return ""


class _Markdown(MarkdownConverter):
    """markdownify with images reduced to their alt text (image URLs are noise for search)."""

    def convert_img(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        return _squash(str(el.get("alt") or ""))


def _tidy(markdown: str) -> str:
    """Trailing spaces and runs of blank lines removed outside fenced code; code stays as it was."""
    lines: list[str] = []
    in_fence = False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if not in_fence:
            line = line.rstrip()
            if not line and (not lines or not lines[-1]):
                continue
        lines.append(line)
    return "\n".join(lines).strip()
