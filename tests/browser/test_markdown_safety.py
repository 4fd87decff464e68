"""markdown.js in Chromium: hostile markdown and raw HTML render inert; the supported syntax renders right."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.browser import playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

playwright_sync_api()  # without the package: a loud skip, or a failure under CI=true
pytestmark = pytest.mark.browser

STATIC_JS = Path(__file__).resolve().parents[2] / "frontend" / "static" / "js"
MARKDOWN_JS = (STATIC_JS / "markdown-inline.js", STATIC_JS / "markdown.js")  # in load order
BLANK = "<!doctype html><html><head><meta charset='utf-8'></head><body><div id='out'></div></body></html>"

PWN = "window.__pwned=1"
PAYLOADS = [
    f'<img src=x onerror="{PWN}">',
    f"<script>{PWN}</script>",
    f'<svg onload="{PWN}"></svg>',
    f"<svg/onload={PWN}>",
    f'<iframe src="javascript:{PWN}"></iframe>',
    f'<a href="javascript:{PWN}">anchor</a>',
    f'<div onclick="{PWN}">click me</div>',
    f'<form action="javascript:{PWN}"><button>go</button></form>',
    f"<style>body{{background:url(javascript:{PWN})}}</style>",
    f'<details open ontoggle="{PWN}">x</details>',
    f"[click](javascript:{PWN})",
    f"[click](JaVaScRiPt:{PWN})",
    f"[click]( javascript:{PWN} )",
    f"[click](<javascript:{PWN}>)",
    f"[click](javascript&#58;{PWN})",
    f"[click](java\tscript:{PWN})",
    f"[click](\x01javascript:{PWN})",
    "[x](javascript:alert(1))",
    "[vb](vbscript:msgbox(1))",
    "[data](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xPC9zY3JpcHQ+)",
    f"![pixel](data:image/svg+xml,<svg onload='{PWN}'>)",
    f"![img](javascript:{PWN})",
    f"<javascript:{PWN}>",
    f'[x](https://example.com" onclick="{PWN})',
    f'https://example.com/"onmouseover="{PWN}',
    f"[<img src=x onerror={PWN}>](https://example.com/ok)",
    f"**<img src=x onerror={PWN}>** and _<b onmouseover={PWN}>x</b>_",
    f"`<img src=x onerror={PWN}>`",
    f"```html\n<script>{PWN}</script>\n```",
    f'```"><img src=x onerror={PWN}>\ncode\n```',
    f"| a | b |\n|---|---|\n| <img src=x onerror={PWN}> | [x](javascript:{PWN}) |",
    f"> <script>{PWN}</script>",
    f"- <img src=x onerror={PWN}>\n  - [y](javascript:{PWN})",
    f"# <svg/onload={PWN}>",
    f"[1](javascript:{PWN}) [2]",
]
ALLOWED_TAGS = {"P", "STRONG", "EM", "DEL", "CODE", "PRE", "A", "SUP", "UL", "OL", "LI", "BLOCKQUOTE", "H1", "H2",
                "H3", "H4", "H5", "H6", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "DIV", "SPAN", "BUTTON", "BR",
                "HR"}
ALLOWED_ATTRIBUTES = {"class", "href", "rel", "target", "style", "type", "aria-label", "scope", "start"}

SUMMARY_JS = """() => {
  const out = document.getElementById("out");
  const elements = Array.from(out.querySelectorAll("*"));
  return {
    pwned: window.__pwned,
    tags: [...new Set(elements.map((e) => e.tagName))],
    attributes: [...new Set(elements.flatMap((e) => e.getAttributeNames()))],
    hrefs: Array.from(out.querySelectorAll("[href]")).map((e) => e.getAttribute("href")),
    text: out.textContent,
  };
}"""


class Markdown:
    """markdown.js loaded into a blank page; render() puts the result into #out."""

    def __init__(self, page: Page) -> None:
        self.page = page

    def render(self, text: str, options: dict[str, Any] | None = None) -> None:
        self.page.evaluate(
            """([text, options]) => {
              document.getElementById("out").replaceChildren(window.OpenGuruMarkdown.render(text, options));
            }""",
            [text, options],
        )

    def summary(self) -> dict[str, Any]:
        result: dict[str, Any] = self.page.evaluate(SUMMARY_JS)
        return result

    def eval(self, script: str) -> Any:
        return self.page.evaluate(script)


@pytest.fixture
def md(page: Page) -> Markdown:
    page.set_content(BLANK)
    for script in MARKDOWN_JS:
        page.add_script_tag(content=script.read_text(encoding="utf-8"))
    return Markdown(page)


def _assert_inert(md: Markdown) -> dict[str, Any]:
    md.page.wait_for_timeout(200)  # let a (wrongly) created <img> fail to load and fire onerror
    summary = md.summary()
    assert summary["pwned"] is None
    assert set(summary["tags"]) <= ALLOWED_TAGS, summary["tags"]
    assert set(summary["attributes"]) <= ALLOWED_ATTRIBUTES, summary["attributes"]
    assert not [name for name in summary["attributes"] if name.startswith("on")]
    for href in summary["hrefs"]:
        assert href.startswith(("https://", "http://", "mailto:", "#")), href
    return summary


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_hostile_markdown_renders_inert(md: Markdown, payload: str, page_errors: list[str]) -> None:
    md.render(payload)
    _assert_inert(md)
    assert page_errors == []


def test_all_payloads_together_and_every_link_clicked_stay_inert(md: Markdown, page: Page) -> None:
    md.render("\n\n".join(PAYLOADS))
    summary = _assert_inert(md)
    assert "<script>" in summary["text"] and "onerror=" in summary["text"]  # raw HTML is shown as text
    page.evaluate("""() => {
      for (const a of document.querySelectorAll("#out a")) {
        a.removeAttribute("target");
        a.addEventListener("click", (event) => event.preventDefault());
        a.click();
      }
    }""")
    assert page.evaluate("window.__pwned") is None


def test_raw_html_is_text(md: Markdown) -> None:
    md.render('Hello <b>bold</b> & <img src="x"> "quoted"')
    assert md.eval("document.querySelector('#out p').textContent") == 'Hello <b>bold</b> & <img src="x"> "quoted"'
    assert md.eval("document.querySelectorAll('#out b, #out img').length") == 0


def test_links_only_for_http_https_and_mailto(md: Markdown) -> None:
    md.render("[site](https://example.com/a?b=1) [mail](mailto:help@example.com) [rel](/relative) "
              "[ftp](ftp://example.com) <https://example.org/x> and https://example.net/y.")
    links = md.eval("""Array.from(document.querySelectorAll('#out a')).map((a) => ({
        text: a.textContent, href: a.getAttribute('href'), rel: a.rel, target: a.target }))""")
    assert [(link["text"], link["href"]) for link in links] == [
        ("site", "https://example.com/a?b=1"), ("mail", "mailto:help@example.com"),
        ("https://example.org/x", "https://example.org/x"), ("https://example.net/y", "https://example.net/y"),
    ]
    assert all(link["rel"] == "noopener noreferrer nofollow" and link["target"] == "_blank" for link in links)
    assert md.eval("document.querySelector('#out p').textContent").startswith("site mail rel ftp ")


def test_code_block_with_language_and_copy_button(md: Markdown, page: Page) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    md.render("Run this:\n\n```Python\nprint('<b>hi</b>')\n\nx = 1 * 2 * 3\n```\n\nDone with `a_b_c` and `<i>`.")
    code = page.locator("#out .code-block pre code")
    assert code.get_attribute("class") == "language-python"
    assert code.text_content() == "print('<b>hi</b>')\n\nx = 1 * 2 * 3"
    assert page.locator("#out .code-block .code-lang").text_content() == "python"
    button = page.get_by_role("button", name="Copy code")
    assert button.text_content() == "Copy" and button.get_attribute("type") == "button"
    button.click()
    assert button.text_content() in ("Copied", "Copy failed")
    page.wait_for_function("document.querySelector('#out .code-copy').textContent === 'Copy'")
    assert md.eval("Array.from(document.querySelectorAll('#out p code')).map((c) => c.textContent)") == [
        "a_b_c", "<i>"]


def test_unclosed_fence_while_streaming_is_a_code_block(md: Markdown) -> None:
    md.render("Intro\n\n```bash\npip install openguru\n")
    assert md.eval("document.querySelector('#out pre code.language-bash').textContent") == "pip install openguru"


def test_table(md: Markdown) -> None:
    md.render("| Name | Default | Notes |\n|:-----|:-------:|------:|\n| `timeout` | **30** | seconds \\| s |\n"
              "| retries | 3 |\n\nAfter the table.")
    rows = md.eval("""Array.from(document.querySelectorAll('#out table tr')).map((tr) =>
        Array.from(tr.children).map((c) => [c.tagName, c.textContent, c.style.textAlign]))""")
    assert rows == [
        [["TH", "Name", "left"], ["TH", "Default", "center"], ["TH", "Notes", "right"]],
        [["TD", "timeout", "left"], ["TD", "30", "center"], ["TD", "seconds | s", "right"]],
        [["TD", "retries", "left"], ["TD", "3", "center"], ["TD", "", "right"]],
    ]
    assert md.eval("document.querySelectorAll('#out td code, #out td strong').length") == 2
    assert md.eval("document.querySelector('#out .table-wrap + p').textContent") == "After the table."


def test_lists_headings_quotes_and_emphasis(md: Markdown) -> None:
    md.render(
        "## Setup steps\n\n3. Install **Widgets**\n4. Configure:\n   - `timeout`\n   - *retries*\n5. Run\n\n"
        "- one\n- two\n  continued\n\n> Quoted **text**\n> second line\n\n"
        "Use snake_case_names and 2 * 3 * 4, not ~~old~~ __new__ _em_.\n\n---\n\n###### Small"
    )
    structure = md.eval("""(() => {
      const out = document.getElementById('out');
      const ol = out.querySelector('ol');
      return {
        h2: out.querySelector('h2').textContent,
        h6: out.querySelector('h6').textContent,
        olStart: ol.start,
        olItems: Array.from(ol.children).map((li) => li.firstChild.textContent),
        nested: Array.from(ol.querySelectorAll('li ul li')).map((li) => li.innerText),
        nestedTags: Array.from(ol.querySelectorAll('li ul li > *')).map((e) => e.tagName),
        ul: Array.from(out.querySelectorAll(':scope > ul > li')).map((li) => li.textContent),
        quote: out.querySelector('blockquote').textContent,
        quoteStrong: out.querySelector('blockquote strong').textContent,
        emphasis: Array.from(out.querySelectorAll(':scope > p > *')).map((e) => e.tagName + ':' + e.textContent),
        hr: out.querySelectorAll('hr').length,
        paragraphsInTightLists: out.querySelectorAll('li > p').length,
      };
    })()""")
    assert structure == {
        "h2": "Setup steps", "h6": "Small", "olStart": 3,
        "olItems": ["Install ", "Configure:", "Run"],
        "nested": ["timeout", "retries"], "nestedTags": ["CODE", "EM"],
        "ul": ["one", "two\ncontinued"],
        "quote": "Quoted text\nsecond line", "quoteStrong": "text",
        "emphasis": ["DEL:old", "STRONG:new", "EM:em"],
        "hr": 1, "paragraphsInTightLists": 0,
    }


def test_citations_link_to_references(md: Markdown) -> None:
    md.render("Workers ack tasks [1]. Retries back off [2][3], see [1, 3]. A link [4](https://example.com).")
    cites = md.eval("""Array.from(document.querySelectorAll('#out sup > a.cite')).map((a) =>
        [a.textContent, a.getAttribute('href')])""")
    assert cites == [["1", "#ref-1"], ["2", "#ref-2"], ["3", "#ref-3"], ["1", "#ref-1"], ["3", "#ref-3"]]
    assert md.eval("document.querySelector('#out a:not(.cite)').getAttribute('href')") == "https://example.com/"


def test_citation_options(md: Markdown) -> None:
    md.render("Known [2], unknown [7].", {"citePrefix": "ref-4-", "citations": [1, 2]})
    assert md.eval("Array.from(document.querySelectorAll('#out a.cite')).map((a) => a.getAttribute('href'))") == [
        "#ref-4-2"]
    assert md.eval("document.querySelector('#out p').textContent") == "Known 2, unknown [7]."


def test_every_prefix_of_a_document_renders(md: Markdown, page_errors: list[str]) -> None:
    """While streaming, the page re-renders the text so far: no prefix may throw or hang."""
    document = (
        "# Title\n\nSome **bold** and *it* with `code` [1] and [a link](https://example.com/x_(y)).\n\n"
        "1. first\n   - nested *item*\n2. second\n\n> quote\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n\n"
        "```js\nconst x = `template`;\n```\n\n- [ ] task ~~done~~\n\n![alt](https://example.com/i.png)\n"
    )
    count = md.page.evaluate("""(text) => {
      let total = 0;
      for (let i = 0; i <= text.length; i += 1) {
        total += window.OpenGuruMarkdown.render(text.slice(0, i), {citations: [1]}).childNodes.length;
      }
      return total;
    }""", document)
    assert count > 0
    md.render(document, {"citations": [1]})
    _assert_inert(md)
    assert md.eval("document.querySelector('#out a.image-link').textContent") == "alt"
    assert page_errors == []
