"""A markdown document is chunked as its reader sees it: no HTML comments, no link reference definitions."""

from __future__ import annotations

from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder
from backend.pipeline.chunking import default_chunking, split_document
from backend.pipeline.ingest_types import ContentType, Document
from backend.pipeline.visible import link_targets, visible_markdown

PAGE = """# Compression

## `zlib.createGzip([options])`
<!-- YAML
added: v0.5.8
changes:
  - version: v5.9.0
    pr-url: https://example.org/pull/5120
-->

Creates a `Gzip` stream that compresses what is written to it, see [`Gzip`][].

<!-- a one-line note --> Pipe a file through it.

```html
<!-- this comment is part of the example and stays -->
<p>[not]: a-definition-either</p>
```

A paragraph's first line,
[not a definition]: because it continues the paragraph

[`Gzip`]: #class-zlibgzip
[streams]: stream.md#streams "Streams"

[no title]: url but this is no quoted title
"""


def test_comments_and_definitions_go_code_and_paragraph_text_stay() -> None:
    seen = visible_markdown(PAGE)
    assert "added: v0.5.8" not in seen and "pr-url" not in seen and "a one-line note" not in seen
    assert "Pipe a file through it." in seen  # text after a comment on its line is the reader's
    assert "<!-- this comment is part of the example and stays -->" in seen  # code is shown as written
    assert "<p>[not]: a-definition-either</p>" in seen
    assert "[`Gzip`]: #class-zlibgzip" not in seen and "stream.md#streams" not in seen
    assert "[not a definition]: because" in seen  # a paragraph's second line is text, as CommonMark reads it
    assert "[no title]: url but" in seen  # what follows a destination must be a quoted title
    assert "Creates a `Gzip` stream that compresses what is written to it, see `Gzip`." in seen  # the link as read


def test_an_unclosed_comment_hides_the_rest_as_a_browser_would() -> None:
    assert visible_markdown("Shown.\n<!-- never closed\nHidden.\n") == "Shown.\n"


def test_chunks_of_markdown_hold_no_hidden_text_other_kinds_are_untouched() -> None:
    embedder = LocalMiniLMEmbedder()
    config = default_chunking(embedder_max_tokens=embedder.max_input_tokens)
    markdown = Document(key="zlib.md", text=PAGE, title="zlib.md", link="", content_type=ContentType.MARKDOWN)
    text = " ".join(c.text for c in split_document(markdown, config, embedder.count_tokens))
    assert "pr-url" not in text and "#class-zlibgzip" not in text and "Creates a `Gzip` stream" in text
    prose = Document(key="notes.txt", text=PAGE, title="notes", link="", content_type=ContentType.PROSE)
    assert "pr-url" in " ".join(c.text for c in split_document(prose, config, embedder.count_tokens))


def test_link_targets_are_where_the_dropped_definitions_point() -> None:
    text = ("# fs\n\nSee [`fs.watch()`][] and [the guide][g], or [`fs.watch()`][] again.\n\n"
            "[`fs.watch()`]: fs.md#fswatchfilename-options-listener\n[g]: <https://example.org/guide> \"Guide\"\n"
            "[top]: #top\n\n```md\n[inside]: code-in-a-fence.md\n```\n[after]: after.md\n")
    assert link_targets(text) == ["fs.md#fswatchfilename-options-listener", "https://example.org/guide", "after.md"]
    assert link_targets("".join(f"[l{n}]: page{n}.md\n" for n in range(500))) == [f"page{n}.md" for n in range(200)]
