"""The built-in page fetcher: SSRF guard on every hop, caps, content types, errors, and HTML to markdown."""

from __future__ import annotations

import gzip
import socket

import pytest

from backend.adapters.net_guard import BlockedUrlError, UrlPolicy
from backend.adapters.web.fetcher import HttpPageFetcher, html_to_markdown
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from tests.fakes.site_server import (
    BLOG_PAGE,
    CHROME_TEXTS,
    DIV_SOUP_PAGE,
    DOCS_PAGE,
    SITE_TIMEOUT,
    SITE_USER_AGENT,
    SPHINX_PAGE,
    TABLE_PAGE,
    Reply,
    SiteFake,
)

BASE = "https://widgets.example.com/docs/install"


def fetcher_for(policy: UrlPolicy, **options: object) -> HttpPageFetcher:
    settings: dict[str, object] = {"timeout": SITE_TIMEOUT, "max_bytes": 64 * 1024, "user_agent": SITE_USER_AGENT}
    settings.update(options)
    return HttpPageFetcher(policy=policy, **settings)  # type: ignore[arg-type]


# --- HTML to markdown -------------------------------------------------------------------------------------


def test_docs_page_keeps_headings_code_blocks_lists_and_links_and_drops_chrome() -> None:
    title, markdown, _ = html_to_markdown(DOCS_PAGE, BASE)
    assert title == "Installing Widgets"
    assert markdown.startswith("# Installing Widgets\n")
    assert "\n## Install with pip\n" in markdown and "\n### Options\n" in markdown
    assert ("```bash\npython -m venv .venv\nsource .venv/bin/activate\npip install widgets==2.1\n```"
            in markdown)
    # The blank line inside the code block and its indentation survive byte for byte.
    assert ('```python\nfrom widgets import Client\n\nclient = Client(url="https://widgets.example.com")\n'
            'if client.ping():\n    print("connected")\n```') in markdown
    assert "- **timeout**: seconds to wait for the server (default 30)." in markdown
    assert "`WIDGETS_URL`" in markdown
    assert "[configuration reference](https://widgets.example.com/docs/config#options)" in markdown
    for chrome in (*CHROME_TEXTS, "Accept all cookies", "Configuration reference", "analytics", "font-family"):
        assert chrome not in markdown


def test_sphinx_page_without_main_keeps_highlighted_code_and_drops_permalinks_and_menus() -> None:
    title, markdown, _ = html_to_markdown(SPHINX_PAGE, BASE)
    assert title == "Quickstart — widgets 2.1"
    assert markdown.startswith("# Quickstart\n")
    assert "## Make a Request" in markdown
    assert "```python\nimport widgets\n\nr = widgets.get('events')\nfor event in r:\n    print(event)\n```" in markdown
    assert "¶" not in markdown
    for chrome in ("Search docs", "Installation", "Copyright", "Built with Sphinx"):
        assert chrome not in markdown


def test_blog_post_keeps_byline_list_and_quote_and_drops_related_and_newsletter() -> None:
    title, markdown, _ = html_to_markdown(BLOG_PAGE, BASE)
    assert title == "Blog | Widget Corp"
    assert markdown.startswith("# Why we rewrote the scheduler\n\nBy Ada Lovelace, 3 March 2024")
    assert "1. Measure before you rewrite." in markdown
    assert "> The fastest code is the code you never run." in markdown
    for chrome in ("Careers", "All posts", "Related posts", "Queues at scale", "newsletter", "Copyright"):
        assert chrome not in markdown


def test_table_becomes_a_pipe_table() -> None:
    _, markdown, _ = html_to_markdown(TABLE_PAGE, BASE)
    assert "| Plan | Writes per hour | Storage |\n| --- | --- | --- |\n| Free | 1,000 | 1 GB |" in markdown
    assert "| Enterprise | Unlimited | Custom |" in markdown
    assert "Pricing" not in markdown and "Copyright" not in markdown


def test_link_lists_are_dropped_on_pages_without_landmarks() -> None:
    title, markdown, _ = html_to_markdown(DIV_SOUP_PAGE, BASE)
    assert title == "Release notes"
    assert "# Release notes" in markdown and "Version 2.0 removed the deprecated v1 client." in markdown
    for chrome in ("Pricing", "Imprint", "Terms"):
        assert chrome not in markdown


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        ('<meta property="og:title" content=" Open  Graph "><title>Tab</title>', "<h1>Heading</h1>", "Open Graph"),
        ("<title>\n  Tab title </title>", "<h1>Heading</h1>", "Tab title"),
        ("", "<main><h1>Only <em>heading</em></h1><p>text</p></main>", "Only heading"),
    ],
)
def test_title_prefers_og_title_then_title_then_first_h1(head: str, body: str, expected: str) -> None:
    title, _, _ = html_to_markdown(f"<html><head>{head}</head><body>{body}<p>Some text.</p></body></html>", BASE)
    assert title == expected


def test_links_are_absolute_http_without_fragments_or_repeats_and_include_navigation() -> None:
    html = """<html><head><base href="/docs/v2/"></head><body><nav><a href="/pricing">Pricing</a></nav><main>
    <p><a href="guide">Guide</a> <a href="guide#part-2">Part 2</a> <a href="../v1/old">Old</a>
    <a href="mailto:a@b.c">Mail</a> <a href="javascript:void(0)">JS</a> <a href="http://[::1">Broken</a>
    <a href="https://other.example/x#y">Other</a> <a href="#top">Top</a></p></main></body></html>"""
    _, markdown, links = html_to_markdown(html, "https://widgets.example.com/start")
    assert links == (
        "https://widgets.example.com/pricing",
        "https://widgets.example.com/docs/v2/guide",
        "https://widgets.example.com/docs/v1/old",
        "https://other.example/x",
        "https://widgets.example.com/docs/v2/",  # "#top" is relative to <base href>, as in a browser
    )
    assert "[Guide](https://widgets.example.com/docs/v2/guide)" in markdown


def test_hidden_elements_and_image_urls_stay_out_but_inactive_tabs_stay_in() -> None:
    html = """<main><h1>Visible</h1><div style="display: none">Hidden promo</div><p hidden>Also hidden</p>
    <p>Diagram: <img src="/arch.png" alt="architecture overview"></p>
    <div role="tabpanel"><pre>npm install widgets</pre></div>
    <div role="tabpanel" hidden><pre>yarn add widgets</pre></div>
    </main>"""
    _, markdown, _ = html_to_markdown(html, BASE)
    assert "Hidden promo" not in markdown and "Also hidden" not in markdown
    assert "yarn add widgets" in markdown and "npm install widgets" in markdown
    assert "architecture overview" in markdown and "arch.png" not in markdown


def test_a_page_without_text_is_permanent() -> None:
    with pytest.raises(PermanentServiceError, match="no readable text"):
        html_to_markdown("<html><body><nav><a href='/'>Home</a></nav><script>x()</script></body></html>", BASE)


# --- Over HTTP --------------------------------------------------------------------------------------------


def test_fetches_a_page_as_markdown_with_title_links_and_headers(site_fetcher: HttpPageFetcher,
                                                                  fake_site: SiteFake) -> None:
    page = site_fetcher.fetch(f"{fake_site.base_url}/docs/install")
    assert page.url == page.final_url == f"{fake_site.base_url}/docs/install"
    assert page.title == "Installing Widgets"
    assert "```python" in page.markdown and "Pricing" not in page.markdown
    assert f"{fake_site.base_url}/pricing" in page.links and f"{fake_site.base_url}/docs/config" in page.links
    request = fake_site.requests[-1]
    assert request.headers["user-agent"] == SITE_USER_AGENT
    assert request.headers["accept"].startswith("text/html")


def test_without_an_allow_list_entry_the_local_fake_is_refused(fake_site: SiteFake) -> None:
    with fetcher_for(UrlPolicy()) as fetcher, pytest.raises(BlockedUrlError, match="OPENGURU_FETCH_ALLOWLIST"):
        fetcher.fetch(f"{fake_site.base_url}/docs/install")
    assert fake_site.requests == []


def test_redirect_to_another_local_service_is_refused_although_the_first_url_was_allowed(fake_site: SiteFake) -> None:
    # Only the host name "localhost" is allowed: the redirect's 127.0.0.1 target must be checked on its own.
    with fetcher_for(UrlPolicy.from_setting(["localhost"])) as fetcher, pytest.raises(BlockedUrlError):
        fetcher.fetch(f"{fake_site.named_url}/redirect/internal")
    assert fake_site.paths() == ["/redirect/internal"]
    assert fake_site.internal_requests == []


def test_an_allow_list_entry_with_a_port_opens_that_port_only_on_every_hop(fake_site: SiteFake) -> None:
    # The internal service listens on another port of the same 127.0.0.1 the entry names.
    port = fake_site.base_url.rsplit(":", 1)[1]
    with fetcher_for(UrlPolicy.from_setting([f"127.0.0.1:{port}"])) as fetcher:
        assert fetcher.fetch(f"{fake_site.base_url}/docs/install").title == "Installing Widgets"
        with pytest.raises(BlockedUrlError, match="OPENGURU_FETCH_ALLOWLIST"):
            fetcher.fetch(f"{fake_site.base_url}/redirect/internal")
    assert fake_site.paths() == ["/docs/install", "/redirect/internal"]
    assert fake_site.internal_requests == []


def test_an_allow_list_entry_without_a_port_lets_a_redirect_reach_any_port(fake_site: SiteFake) -> None:
    with fetcher_for(UrlPolicy.from_setting(["127.0.0.1"])) as fetcher:
        assert "Internal admin" in fetcher.fetch(f"{fake_site.base_url}/redirect/internal").markdown
    assert len(fake_site.internal_requests) == 1


@pytest.mark.parametrize("path", ["/redirect/metadata", "/redirect/file"])
def test_redirect_to_metadata_address_or_other_scheme_is_refused(site_fetcher: HttpPageFetcher, fake_site: SiteFake,
                                                                  path: str) -> None:
    with pytest.raises(BlockedUrlError):
        site_fetcher.fetch(f"{fake_site.base_url}{path}")


def test_relative_redirects_are_followed_and_reported(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    page = site_fetcher.fetch(f"{fake_site.base_url}/redirect/to-docs")
    assert page.url == f"{fake_site.base_url}/redirect/to-docs"
    assert page.final_url == f"{fake_site.base_url}/docs/install"
    assert fake_site.paths() == ["/redirect/to-docs", "/docs/install"]


def test_redirect_chains_are_bounded(site_policy: UrlPolicy, fake_site: SiteFake) -> None:
    with fetcher_for(site_policy, max_redirects=3) as fetcher, pytest.raises(PermanentServiceError, match="redirects"):
        fetcher.fetch(f"{fake_site.base_url}/redirect/loop")
    assert len(fake_site.requests) == 4
    with fetcher_for(site_policy, max_redirects=0) as fetcher, pytest.raises(PermanentServiceError, match="redirects"):
        fetcher.fetch(f"{fake_site.base_url}/redirect/to-docs")


def test_connects_to_the_address_the_guard_checked(site_policy: UrlPolicy, fake_site: SiteFake) -> None:
    # The name does not exist in DNS: the page arrives only because the connection goes to the vetted address.
    port = fake_site.base_url.rsplit(":", 1)[1]
    with fetcher_for(site_policy, resolver=lambda host, _port: ["127.0.0.1"]) as fetcher:
        page = fetcher.fetch(f"http://docs.example.test:{port}/docs/install")
    assert page.title == "Installing Widgets"
    assert fake_site.requests[-1].headers["host"] == f"docs.example.test:{port}"


@pytest.mark.parametrize("path", ["/huge", "/huge-stream", "/bomb"])
def test_bodies_over_the_size_cap_are_refused(site_fetcher: HttpPageFetcher, fake_site: SiteFake, path: str) -> None:
    bomb = gzip.compress(b"<html><body>" + b" " * (2 * 1024 * 1024) + b"</body></html>")
    fake_site.overrides["/bomb"] = Reply(200, bomb, {"Content-Type": "text/html", "Content-Encoding": "gzip"})
    with pytest.raises(PermanentServiceError, match="larger than the 64 KiB limit"):
        site_fetcher.fetch(f"{fake_site.base_url}{path}")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/docs/guide.pdf", "not an HTML page: application/pdf — add it as a PDF source instead"),
        ("/image.png", "not an HTML page: image/png"),
        ("/binary-no-type", "not an HTML page: no content type"),
    ],
)
def test_non_html_bodies_are_permanent(site_fetcher: HttpPageFetcher, fake_site: SiteFake, path: str,
                                       message: str) -> None:
    with pytest.raises(PermanentServiceError) as caught:
        site_fetcher.fetch(f"{fake_site.base_url}{path}")
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("/missing", PermanentServiceError, "page not found (HTTP 404)"),
        ("/gone", PermanentServiceError, "page not found (HTTP 410)"),
        ("/forbidden", PermanentServiceError, "the site refused access (HTTP 403)"),
        ("/login", PermanentServiceError, "the site refused access (HTTP 401)"),
        ("/teapot", PermanentServiceError, "the site rejected the request (HTTP 418)"),
        ("/busy", TransientServiceError, "rate limiting requests (HTTP 429)"),
        ("/error", TransientServiceError, "server error (HTTP 500)"),
        ("/down", TransientServiceError, "server error (HTTP 503)"),
        ("/slow", TransientServiceError, "did not answer within"),
    ],
)
def test_http_failures_map_to_permanent_or_transient(site_fetcher: HttpPageFetcher, fake_site: SiteFake, path: str,
                                                      error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        site_fetcher.fetch(f"{fake_site.base_url}{path}")
    assert type(caught.value) is error
    assert message in str(caught.value)


def test_connection_refused_is_transient(site_fetcher: HttpPageFetcher) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TransientServiceError, match="could not reach"):
        site_fetcher.fetch(f"http://127.0.0.1:{port}/")


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/latin1", "# Café crème\n\nDéjà vu."), ("/meta-charset", "# \u201cQuoted\u201d\n\nNa\u00efve text.")],
)
def test_charsets_from_header_or_meta_tag(site_fetcher: HttpPageFetcher, fake_site: SiteFake, path: str,
                                          expected: str) -> None:
    assert site_fetcher.fetch(f"{fake_site.base_url}{path}").markdown == expected


def test_plain_text_and_markdown_pass_through(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    notes = site_fetcher.fetch(f"{fake_site.base_url}/notes.txt")
    assert notes.markdown == "Plain notes\n\nLine two of the notes."
    readme = site_fetcher.fetch(f"{fake_site.base_url}/readme.md")
    assert readme.markdown == "# Read me\n\nSome *markdown* text." and readme.title == "Read me"


def test_html_without_a_content_type_is_sniffed(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    assert site_fetcher.fetch(f"{fake_site.base_url}/no-type").title == "Untyped"


def test_a_javascript_only_page_has_no_readable_text(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    with pytest.raises(PermanentServiceError, match="no readable text"):
        site_fetcher.fetch(f"{fake_site.base_url}/spa")


def test_fetch_raw_returns_any_text_with_the_same_guard(site_fetcher: HttpPageFetcher, fake_site: SiteFake) -> None:
    robots = site_fetcher.fetch_raw(f"{fake_site.base_url}/robots.txt", accept="text/plain")
    assert robots.content_type == "text/plain" and "Disallow: /docs/private/" in robots.text
    assert robots.final_url == f"{fake_site.base_url}/robots.txt"
    assert fake_site.requests[-1].headers["accept"] == "text/plain"
    sitemap = site_fetcher.fetch_raw(f"{fake_site.base_url}/sitemap-blog.xml", accept="application/xml")
    assert sitemap.content_type == "application/xml" and "<urlset" in sitemap.text
    with pytest.raises(PermanentServiceError, match="HTTP 404"):
        site_fetcher.fetch_raw(f"{fake_site.base_url}/sitemap-missing.xml", accept="application/xml")
    with pytest.raises(BlockedUrlError):
        site_fetcher.fetch_raw(f"{fake_site.base_url}/redirect/metadata", accept="text/plain")
