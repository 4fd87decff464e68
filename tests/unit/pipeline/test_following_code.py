"""A context cut right before (or inside) a code block is completed from its document's next chunk."""

from __future__ import annotations

from backend.pipeline.chunking import next_chunk_id
from backend.pipeline.contexts import Context, join_chunks
from backend.pipeline.following_code import MAX_FOLLOWING_CODE_CHARS, completed, following_code
from backend.pipeline.types import SourceKind

INTRO = ("Servers should set the forwarded headers. Since they can be faked, tell the middleware how many\n"
         "proxies set each header so it knows what to trust.\n\n")


def test_a_code_directive_whose_body_the_boundary_cut_off_gets_its_body() -> None:
    text = INTRO + ".. code-block:: python"
    following = ".. code-block:: python\n\n    app.wsgi_app = Middleware(app.wsgi_app, x_for=1)\n\nRemember this."
    assert following_code(text, following) == "\n\n    app.wsgi_app = Middleware(app.wsgi_app, x_for=1)"


def test_prose_ending_before_its_example_gets_the_example_and_nothing_after_it() -> None:
    overlap = "proxies set each header so it knows what to trust.\n\n"
    fenced = "```python\napp.wsgi_app = Middleware(app.wsgi_app)\n```\n\nThe next section is about logging."
    assert following_code(INTRO, overlap + fenced) == "\n\n```python\napp.wsgi_app = Middleware(app.wsgi_app)\n```"
    directive = ".. code-block:: text\n\n    $ tool serve\n\nNext paragraph."
    assert following_code(INTRO, directive) == "\n\n.. code-block:: text\n\n    $ tool serve"


def test_an_indented_literal_counts_only_after_a_colon() -> None:
    assert following_code("Run it like this::", "    $ tool serve --port 8000\n\nThen open it.") \
        == "\n\n    $ tool serve --port 8000"
    assert following_code("It serves files.", "    - a nested item\n\nMore.") == ""


def test_a_block_cut_in_the_middle_is_finished() -> None:
    fence = "Configure the server:\n\n```nginx\nserver {\n    listen 80;  # the public port"
    block_rest = "\n    location / {\n        proxy_pass http://127.0.0.1:8000/;\n    }\n}\n```"
    rest = "    listen 80;  # the public port" + block_rest + "\n\nThen reload."
    assert following_code(fence, rest) == block_rest
    indented = "Configure the server::\n\n    server {\n        listen 80;  # the public port"
    tail = "        listen 80;  # the public port\n        location / {}\n    }\n\nThen reload."
    assert following_code(indented, tail) == "\n        location / {}\n    }"
    # The next chunk starts inside the block, so it was stored behind the block's opening fence: not repeated.
    assert following_code(fence, "```nginx\n" + rest) == block_rest


def test_a_chunk_reopening_the_block_joins_its_neighbour_without_the_fence() -> None:
    first = "Configure it:\n\n```python\nclient = httpx.Client()\nresponse = client.get('https://example.com/')"
    second = "```python\nresponse = client.get('https://example.com/')\nresponse.raise_for_status()\n```"
    assert join_chunks([first, second]) == first + "\nresponse.raise_for_status()\n```"
    # Without an overlap (overlap set to 0), the code still continues as one block.
    assert join_chunks([first, "```python\nprint(response.text)\n```"]) == first + "\nprint(response.text)\n```"
    # A bare fence after a chunk ending inside a block, with no repeated text after it, is the block's closing one.
    bare = "Run it:\n\n```\nquarry serve --port 8000"
    assert join_chunks([bare, "```\nThen open the page."]) == bare + "\n```\nThen open the page."
    assert join_chunks([bare, "```\nquarry serve --port 8000\nquarry open\n```"]) == bare + "\nquarry open\n```"
    # A fence that opens a new block after a closed one is kept.
    closed = first + "\n```"
    assert join_chunks([closed, "```python\nprint(1)\n```"]) == closed + "\n```python\nprint(1)\n```"


def test_prose_after_prose_and_long_examples_add_nothing() -> None:
    assert following_code(INTRO, "Logging is configured separately.\n\n```\nlog()\n```") == ""
    long_code = "```python\n" + "x = 1\n" * (MAX_FOLLOWING_CODE_CHARS // 6 + 1) + "```"
    assert following_code(INTRO, long_code) == ""
    assert following_code(INTRO + "```python\ndone()\n```", "More prose.") == ""


def context(text: str, chunk_id: str, *, summary: bool = False) -> Context:
    return Context(source_id=1, kind=SourceKind.WEBSITE, title="Proxies", link="", text=text, score=0.9, locator="",
                   chunk_ids=(chunk_id,), summary=summary, document="1:proxies")


def test_contexts_are_completed_from_the_next_chunk_of_their_document() -> None:
    assert next_chunk_id("s3-g2-9f739d2a409d9764-7") == "s3-g2-9f739d2a409d9764-8"
    assert next_chunk_id("summary-3-1") is None
    asked: list[list[str]] = []

    def read(ids: list[str]) -> dict[str, str]:
        asked.append(ids)
        return {"s1-g1-ab12cd34ef567890-5": "```\nserve()\n```"}

    done = completed([context(INTRO, "s1-g1-ab12cd34ef567890-4"), context(INTRO, "s1-g1-ab12cd34ef567890-5"),
                      context(INTRO, "s1-g1-ab12cd34ef567890-4", summary=True)], read)
    # one read for every context, none for the summary
    assert asked == [["s1-g1-ab12cd34ef567890-5", "s1-g1-ab12cd34ef567890-6"]]
    assert done[0].text == INTRO + "\n\n```\nserve()\n```"
    assert done[1].text == INTRO and done[2].text == INTRO  # no next chunk found; a summary is never completed
    assert completed([context(INTRO, "summary-1")], read) == [context(INTRO, "summary-1")] and len(asked) == 1
