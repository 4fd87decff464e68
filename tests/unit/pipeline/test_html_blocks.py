"""HTML blocks in markdown are chunked as what their reader sees: tables as markdown tables, images by their
alt text, tags gone, empty anchors gone, reference links as their text; fenced code and inline HTML are left as
they are."""

from __future__ import annotations

from backend.pipeline.excerpts import segment
from backend.pipeline.html_blocks import html_block_markdown
from backend.pipeline.sanitize import neutralise
from backend.pipeline.visible import link_texts, visible_markdown

CONSTANTS = """The following constants are meant for use with `mode`.

<table>
  <tr>
    <th>Constant</th>
    <th>Description</th>
  </tr>

  <tr>
    <td><code>S_IFMT</code></td>
    <td>Bit mask used to extract the file type code &amp; more.</td>
  </tr>
</table>

On Windows, only `S_IFMT` is available.
"""


def test_a_table_is_a_markdown_table_even_with_blank_lines_between_its_rows() -> None:
    assert visible_markdown(CONSTANTS) == (
        "The following constants are meant for use with `mode`.\n\n"
        "| Constant | Description |\n| --- | --- |\n"
        "| `S_IFMT` | Bit mask used to extract the file type code & more. |\n\n"
        "On Windows, only `S_IFMT` is available.\n")


def test_a_readme_header_shows_its_alt_texts_and_links_by_their_text() -> None:
    header = ('<p align="center">\n  <img src="logo.png" alt="Acme logo">\n  <br>\n'
              '  <a href="https://ci.example"><img src="badge.svg" alt="build passing"></a> <b>v2</b>\n</p>\n')
    assert html_block_markdown(header) == "Acme logo\nbuild passing v2"


def test_lists_and_preformatted_text_keep_their_shape() -> None:
    assert html_block_markdown("<ul><li>one <code>a|b</code></li><li>two</li></ul>") == "- one `a|b`\n- two"
    assert html_block_markdown("<pre>x = 1\ny = 2</pre>") == "```\nx = 1\ny = 2\n```"
    assert html_block_markdown("<div><script>alert(1)</script>shown</div>") == "shown"


def test_fenced_html_and_inline_tags_are_not_touched() -> None:
    text = "Some <b>bold</b> text.\n\n```html\n<table><tr><td>kept</td></tr></table>\n```\n"
    assert visible_markdown(text) == text


def test_reference_links_read_as_their_text_and_code_keeps_its_brackets() -> None:
    text = ("For example, [`assert.deepEqual()`][] behaves like [`assert.deepStrictEqual()`][strict].\n"
            "See [the guide][guide], `arr[0][1]` and [x](https://example.org).\n\n"
            "```js\nconst y = a[0][1];\n```\n\n[guide]: https://example.org/guide\n")
    assert visible_markdown(text) == (
        "For example, `assert.deepEqual()` behaves like `assert.deepStrictEqual()`.\n"
        "See the guide, `arr[0][1]` and [x](https://example.org).\n\n```js\nconst y = a[0][1];\n```\n\n")
    assert link_texts("a \x000\x00 [b][]") == "a \x000\x00 b"  # odd characters pass through unharmed


ANCHORED = """Script execution timed out, possibly due to bugs in the script being executed.

<a id="ERR_SERVER_ALREADY_LISTEN"></a>

### `ERR_SERVER_ALREADY_LISTEN`

The `server.listen()` method was called while a `net.Server` was already listening.
See <https://nodejs.org/api/net.html> or write to <docs@example.org>.

```html
<a id="kept-in-code"></a>
```
"""


def test_an_empty_anchor_is_read_as_nothing_and_autolinks_and_code_are_kept() -> None:
    text = visible_markdown(ANCHORED)
    assert 'id="ERR_SERVER_ALREADY_LISTEN"' not in text and "### `ERR_SERVER_ALREADY_LISTEN`" in text
    assert "<https://nodejs.org/api/net.html>" in text and "<docs@example.org>" in text
    assert '<a id="kept-in-code"></a>' in text


def test_an_anchor_already_stored_in_a_chunk_is_never_quoted() -> None:
    # Chunks indexed before anchors were dropped hold them as the neutraliser wrote them.
    chunk = neutralise(ANCHORED.split("```")[0])
    blocks = segment(chunk)
    assert blocks and not any("ERR_SERVER_ALREADY_LISTEN\"" in b.text for b in blocks)
    assert any(b.text.startswith("The `server.listen()` method") for b in blocks)
