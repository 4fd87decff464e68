"""A small fake website (chrome, links, sitemaps, robots.txt, redirects, errors) and its pytest fixtures."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from backend.adapters.net_guard import UrlPolicy
from backend.adapters.web.fetcher import HttpPageFetcher
from tests.fakes.http import FakeRequest, FakeResponder, serve

SITE_TIMEOUT = 5.0
"""The test fetcher's timeout: long enough that a busy 2-core machine never trips it on a local reply (at 1 s, a
full suite run beside a benchmark did), short enough that `/slow` (twice as long) keeps its test quick."""
SITE_MAX_BYTES = 64 * 1024
SITE_USER_AGENT = "OpenGuruTestBot/1.0 (+https://example.invalid/bot)"

CHROME_TEXTS = ("Pricing", "We use cookies", "Copyright 2024 Widget Corp", "Subscribe to our newsletter",
                "Queues at scale", "Search docs", "Built with Sphinx")

_HEADER = """<header class="site-header"><a href="/">Widget Docs</a><nav><a href="/docs/">Docs</a>
<a href="/blog/scheduler">Blog</a> <a href="/pricing">Pricing</a></nav></header>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience.
<button>Accept all cookies</button></div>"""
_SIDEBAR = """<aside class="sidebar"><ul><li><a href="/docs/install">Installation</a></li>
<li><a href="/docs/config">Configuration reference</a></li>
<li><a href="/docs/quickstart">Quickstart</a></li></ul></aside>"""
_FOOTER = """<footer class="site-footer"><p>Copyright 2024 Widget Corp. All rights reserved.</p>
<a href="/privacy.html">Privacy policy</a></footer>"""

DOCS_PAGE = f"""<!doctype html><html><head><title>Installing Widgets — Widget Docs</title>
<meta property="og:title" content="Installing Widgets">
<style>body {{ font-family: sans-serif }}</style><script>window.analytics = {{track() {{}}}};</script></head>
<body>{_HEADER}<div class="layout">{_SIDEBAR}<main><article>
<h1>Installing Widgets</h1>
<p>Widgets runs on Python 3.11 or newer. Install it from the package index and verify the version first.</p>
<h2>Install with pip</h2>
<p>Create a virtual environment first, then install the package:</p>
<pre><code class="language-bash">python -m venv .venv
source .venv/bin/activate
pip install widgets==2.1
</code></pre>
<h2>Configure the client</h2>
<p>Point the client at your server with <code>WIDGETS_URL</code> and create one instance per process:</p>
<pre><code class="language-python">from widgets import Client

client = Client(url="https://widgets.example.com")
if client.ping():
    print("connected")
</code></pre>
<h3>Options</h3>
<ul><li><strong>timeout</strong>: seconds to wait for the server (default 30).</li>
<li><strong>retries</strong>: how often to retry on 503.</li></ul>
<p>See the <a href="/docs/config#options">configuration reference</a> and <a href="/docs/deep/one">internals</a>.</p>
</article></main></div>{_FOOTER}</body></html>"""

BLOG_PAGE = """<!doctype html><html><head><title>Blog | Widget Corp</title></head><body>
<nav class="topnav"><a href="/">Home</a><a href="/blog/">All posts</a><a href="/careers">Careers</a></nav>
<article class="post"><header><h1>Why we rewrote the scheduler</h1>
<p class="byline">By Ada Lovelace, 3 March 2024</p></header>
<p>Last year our job scheduler started to miss deadlines whenever the queue grew beyond ten thousand entries.
Profiling showed that most of the time went into re-sorting the whole queue on every insert.</p>
<p>We replaced the sorted list with a binary heap. Latency at the 99th percentile dropped from 800 ms to 12 ms.</p>
<h2>What we learned</h2>
<ol><li>Measure before you rewrite.</li><li>Keep the old scheduler behind a flag for a month.</li></ol>
<blockquote><p>The fastest code is the code you never run.</p></blockquote>
<p>Read the <a href="https://widgets.example.com/changelog">changelog</a> for details.</p>
</article>
<aside class="related"><h3>Related posts</h3><ul><li><a href="/blog/queues">Queues at scale</a></li></ul></aside>
<div class="newsletter">Subscribe to our newsletter for monthly updates!</div>
<footer><p>Copyright 2024 Widget Corp. All rights reserved.</p></footer></body></html>"""

TABLE_PAGE = f"""<!doctype html><html><head><title>Plans and limits</title></head><body>{_HEADER}
<main><h1>Plans and limits</h1>
<p>Every plan includes unlimited read requests. Write limits apply per workspace and reset every hour.</p>
<table><thead><tr><th>Plan</th><th>Writes per hour</th><th>Storage</th></tr></thead>
<tbody><tr><td>Free</td><td>1,000</td><td>1 GB</td></tr><tr><td>Team</td><td>50,000</td><td>100 GB</td></tr>
<tr><td>Enterprise</td><td>Unlimited</td><td>Custom</td></tr></tbody></table>
<p>Contact sales if you need more than the Enterprise defaults.</p></main>{_FOOTER}</body></html>"""

# Read the Docs theme: no <main>, div-only layout, Pygments spans in the code and permalinks in headings.
SPHINX_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Quickstart &mdash; widgets 2.1</title>
</head><body class="wy-body-for-nav"><div class="wy-grid-for-nav"><div class="wy-nav-side"><div class="wy-side-scroll">
<div class="wy-side-nav-search"><a href="/docs/">widgets</a><div role="search"><form action="search.html">
<input type="text" name="q" placeholder="Search docs"></form></div></div>
<div class="wy-menu wy-menu-vertical" role="navigation"><ul><li><a href="/docs/install">Installation</a></li>
<li><a href="/docs/quickstart">Quickstart</a></li></ul></div></div></div>
<section class="wy-nav-content-wrap"><div class="wy-nav-content"><div class="rst-content">
<div role="navigation" aria-label="breadcrumbs"><ul class="wy-breadcrumbs"><li><a href="/docs/">Docs</a></li></ul></div>
<div role="main" class="document"><div class="section" id="quickstart">
<h1>Quickstart<a class="headerlink" href="#quickstart" title="Permalink to this headline">¶</a></h1>
<p>Eager to get started? This page gives a good introduction to widgets.</p>
<div class="section" id="make-a-request"><h2>Make a Request<a class="headerlink" href="#make-a-request">¶</a></h2>
<div class="highlight-python notranslate"><div class="highlight"><pre><span></span><span class="kn">import</span> \
<span class="nn">widgets</span>

<span class="n">r</span> <span class="o">=</span> <span class="n">widgets</span><span class="o">.</span>\
<span class="n">get</span><span class="p">(</span><span class="s1">&#39;events&#39;</span><span class="p">)</span>
<span class="k">for</span> <span class="n">event</span> <span class="ow">in</span> <span class="n">r</span>:
    <span class="nb">print</span><span class="p">(</span><span class="n">event</span><span class="p">)</span>
</pre></div></div></div></div></div>
<footer><div role="contentinfo"><p>&copy; Copyright 2024.</p></div>Built with Sphinx.</footer>
</div></div></section></div></body></html>"""

# No landmarks at all: the menu and footer are plain <div>s full of links.
DIV_SOUP_PAGE = """<html><head><title>Release notes</title></head><body>
<div id="top"><a href="/">Home</a> | <a href="/docs/">Docs</a> | <a href="/pricing">Pricing</a> |
<a href="/blog/">Blog</a></div>
<div class="content"><h1>Release notes</h1><p>Version 2.1 adds streaming uploads and fixes the retry loop.</p>
<p>Version 2.0 removed the deprecated v1 client.</p></div>
<div><a href="/privacy">Privacy</a> <a href="/terms">Terms</a> <a href="/imprint">Imprint</a></div></body></html>"""

_DEEP_PAGE = """<html><head><title>Internals {n}</title></head><body><main><h1>Internals part {n}</h1>
<p>Part {n} of the internals tour explains the storage layer.</p>{link}</main></body></html>"""

DOCS_INDEX_PAGE = f"""<html><head><title>Widget documentation</title></head><body>{_HEADER}<main>
<h1>Widget documentation</h1><p>Start with the installation guide.</p><ul>
<li><a href="/docs/install">Installation</a></li><li><a href="/docs/install#options">Install options</a></li>
<li><a href="/docs/./config">Configuration</a></li><li><a href="/docs/quickstart">Quickstart</a></li>
<li><a href="/docs/private/secret">Internal notes</a></li><li><a href="/docs/guide.pdf">PDF guide</a></li>
<li><a href="/blog/scheduler">Blog</a></li><li><a href="https://elsewhere.example/">Elsewhere</a></li>
<li><a href="/docs/broken">Broken link</a></li><li><a href="http://[::1">Malformed</a></li>
<li><a href="mailto:docs@example.com">Mail us</a></li></ul></main>{_FOOTER}</body></html>"""


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def send(respond: FakeResponder, reply: Reply) -> None:
    """Write any status, headers and bytes (FakeResponder.json only sends JSON)."""
    respond.raw(reply.body, status=reply.status, headers=reply.headers)


def _html(text: str, status: int = 200) -> Reply:
    return Reply(status, text.encode(), {"Content-Type": "text/html; charset=utf-8"})


def _xml(text: str) -> Reply:
    return Reply(200, text.encode(), {"Content-Type": "application/xml"})


def _redirect(location: str, status: int = 302) -> Reply:
    return Reply(status, b"", {"Location": location})


@dataclass
class SiteFake:
    """Both servers: the site, and an "internal" service that redirects must never reach."""

    base_url: str = ""
    internal_url: str = ""
    requests: list[FakeRequest] = field(default_factory=list)
    internal_requests: list[FakeRequest] = field(default_factory=list)
    overrides: dict[str, Reply] = field(default_factory=dict)
    page_delay: float = 0.0  # seconds before each HTML page, so a test can watch progress advance
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def named_url(self) -> str:
        """The site under the host name "localhost", for policies that allow it by name only."""
        return self.base_url.replace("127.0.0.1", "localhost")

    def paths(self) -> list[str]:
        with self._lock:
            return [request.path for request in self.requests]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.internal_requests.clear()
            self.overrides.clear()
            self.page_delay = 0.0

    def route(self, request: FakeRequest, respond: FakeResponder) -> None:
        with self._lock:
            self.requests.append(request)
            override = self.overrides.get(request.path)
            delay = self.page_delay if request.path.startswith(("/docs/", "/blog/")) else 0.0
        try:
            time.sleep(delay)
            if request.path == "/slow":
                time.sleep(SITE_TIMEOUT * 2)
            if request.path == "/huge-stream":
                self._stream_forever(respond)
                return
            send(respond, override or self._reply(request.path))
        except (BrokenPipeError, ConnectionResetError):
            return  # the client hung up (timeout or size cap), as the test intended

    def route_internal(self, request: FakeRequest, respond: FakeResponder) -> None:
        with self._lock:
            self.internal_requests.append(request)
        send(respond, _html("<html><body><h1>Internal admin</h1><p>secret token 42</p></body></html>"))

    def _stream_forever(self, respond: FakeResponder) -> None:
        respond.start_stream("text/html")
        respond.write(b"<html><body><main><h1>Endless</h1>")
        for _ in range(1024):  # 8 MiB at most, well past any cap a test sets
            if not respond.write(b"<p>" + b"x" * 8185 + b"</p>"):
                return

    def _reply(self, path: str) -> Reply:
        static = _STATIC.get(path)
        if static is not None:
            return static
        if path.startswith("/docs/deep/"):
            return self._deep(path.removeprefix("/docs/deep/"))
        return self._dynamic(path) or _html("<h1>Not found</h1>", 404)

    def _deep(self, name: str) -> Reply:
        order = ["one", "two", "three", "four"]
        if name not in order:
            return _html("<h1>Not found</h1>", 404)
        n = order.index(name)
        link = f'<a href="/docs/deep/{order[n + 1]}">next</a>' if n + 1 < len(order) else ""
        return _html(_DEEP_PAGE.format(n=n + 1, link=link))

    def _dynamic(self, path: str) -> Reply | None:
        base = self.base_url
        replies = {
            "/robots.txt": Reply(200, f"User-agent: *\nDisallow: /docs/private/\nSitemap: {base}/sitemap_index.xml\n"
                                 .encode(), {"Content-Type": "text/plain"}),
            "/sitemap_index.xml": _xml(_sitemap_index([f"{base}/sitemap-docs.xml", f"{base}/sitemap-blog.xml",
                                                       f"{base}/sitemap-missing.xml", f"{base}/sitemap_index.xml"])),
            "/sitemap-docs.xml": _xml(_urlset([f"{base}/docs/", f"{base}/docs/install", f"{base}/docs/install#top",
                                               f"{base}/docs/config", f"{base}/docs/quickstart",
                                               "mailto:docs@example.com", "ftp://files.example.com/x"])),
            "/sitemap-blog.xml": _xml(_urlset([f"{base}/blog/scheduler"])),
            # Three pages of three subjects (install, plans, scheduler), for per-page records and citations.
            "/sitemap-three.xml": _xml(_urlset([f"{base}/docs/install", f"{base}/docs/config",
                                                f"{base}/blog/scheduler"])),
            "/redirect/internal": _redirect(f"{self.internal_url}/admin"),
            "/redirect/metadata": _redirect("http://169.254.169.254/latest/meta-data/"),
        }
        return replies.get(path)


def _urlset(urls: list[str]) -> str:
    entries = "".join(f"<url><loc> {url} </loc><lastmod>2024-03-01</lastmod></url>" for url in urls)
    return ('<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>')


def _sitemap_index(urls: list[str]) -> str:
    entries = "".join(f"<sitemap><loc>{url}</loc></sitemap>" for url in urls)
    return ('<?xml version="1.0" encoding="UTF-8"?>'
            f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</sitemapindex>')


_STATIC: dict[str, Reply] = {
    "/docs/": _html(DOCS_INDEX_PAGE),
    "/docs": _redirect("/docs/", 301),
    "/docs/install": _html(DOCS_PAGE),
    "/docs/config": _html(TABLE_PAGE),
    "/docs/quickstart": _html(SPHINX_PAGE),
    "/docs/private/secret": _html("<html><body><main><h1>Internal notes</h1><p>Do not crawl.</p></main></body></html>"),
    "/docs/guide.pdf": Reply(200, b"%PDF-1.7\n%fake\n", {"Content-Type": "application/pdf"}),
    "/blog/scheduler": _html(BLOG_PAGE),
    "/release-notes": _html(DIV_SOUP_PAGE),
    "/redirect/to-docs": _redirect("/docs/install"),
    "/redirect/loop": _redirect("/redirect/loop"),
    "/redirect/file": _redirect("file:///etc/passwd"),
    "/huge": _html("<html><body><main><h1>Big</h1>" + "<p>" + "y" * 200_000 + "</p></main></body></html>"),
    "/image.png": Reply(200, b"\x89PNG\r\n\x1a\n", {"Content-Type": "image/png"}),
    "/no-type": Reply(200, b"<!doctype html><html><body><h1>Untyped</h1><p>Served without a type.</p></body></html>"),
    "/binary-no-type": Reply(200, b"\x00\x01\x02 binary blob"),
    "/latin1": Reply(200, "<html><body><h1>Café crème</h1><p>Déjà vu.</p></body></html>".encode("latin-1"),
                     {"Content-Type": "text/html; charset=ISO-8859-1"}),
    "/meta-charset": Reply(200, b'<html><head><meta charset="windows-1252"></head><body><h1>\x93Quoted\x94</h1>'
                                b"<p>Na\xefve text.</p></body></html>", {"Content-Type": "text/html"}),
    "/notes.txt": Reply(200, b"Plain notes\n\nLine two of the notes.\n", {"Content-Type": "text/plain; charset=utf-8"}),
    "/readme.md": Reply(200, b"# Read me\n\nSome *markdown* text.\n", {"Content-Type": "text/markdown"}),
    "/spa": _html('<html><head><title>App</title></head><body><div id="root"></div>\n'
                  "<noscript>You need to enable JavaScript to run this app.</noscript>\n"
                  "<script>boot()</script></body></html>"),
    "/gone": _html("<h1>Gone</h1>", 410),
    "/forbidden": _html("<h1>Forbidden</h1>", 403),
    "/login": _html("<h1>Log in</h1>", 401),
    "/teapot": _html("<h1>Teapot</h1>", 418),
    "/busy": _html("<h1>Slow down</h1>", 429),
    "/down": _html("<h1>Maintenance</h1>", 503),
    "/error": _html("<h1>Oops</h1>", 500),
}


@pytest.fixture(scope="session")
def _site_servers() -> Iterator[SiteFake]:
    fake = SiteFake()
    with serve(fake.route) as base_url, serve(fake.route_internal) as internal_url:
        fake.base_url, fake.internal_url = base_url, internal_url
        yield fake


@pytest.fixture
def fake_site(_site_servers: SiteFake) -> Iterator[SiteFake]:
    """The fake site with no recorded requests and no overrides."""
    _site_servers.reset()
    yield _site_servers
    _site_servers.reset()


@pytest.fixture
def site_policy() -> UrlPolicy:
    """The fake listens on 127.0.0.1, which the SSRF guard refuses unless allow-listed like this."""
    return UrlPolicy.from_setting(["127.0.0.1/32"])


@pytest.fixture
def site_fetcher(site_policy: UrlPolicy) -> Iterator[HttpPageFetcher]:
    fetcher = HttpPageFetcher(policy=site_policy, timeout=SITE_TIMEOUT, max_bytes=SITE_MAX_BYTES,
                              user_agent=SITE_USER_AGENT)
    yield fetcher
    fetcher.close()
