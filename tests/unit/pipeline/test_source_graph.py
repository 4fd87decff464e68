"""Edges between a guru's documents: links (URLs, relative, RST roles), imports, duplicates, near-duplicates."""

from __future__ import annotations

import pytest

from backend.pipeline import source_graph
from backend.pipeline.source_graph import (
    MAX_IMPORTS_PER_FILE,
    MAX_LINKS_PER_DOCUMENT,
    MAX_TEXT_CHARS,
    Edge,
    EdgeKind,
    GraphDocument,
    breadcrumbs,
    extract_edges,
)


def repo(path: str, text: str, *, source_id: int = 1, forge: str = "") -> GraphDocument:
    link = f"{forge}/blob/main/{path}" if forge else ""
    return GraphDocument(source_id=source_id, key=path, title=path, link=link, text=text, kind="github_repo")


def page(url: str, text: str, *, source_id: int = 2, kind: str = "website") -> GraphDocument:
    return GraphDocument(source_id=source_id, key=url, title=url, link=url, text=text, kind=kind)


def pairs(edges: list[Edge], kind: EdgeKind) -> set[tuple[str, str]]:
    return {(edge.key, edge.target_key) for edge in edges if edge.kind == kind}


SPHINX_DOCS = [
    repo("docs/conf.py", 'project = "Flask"\nextensions = ["sphinx.ext.autodoc", "pallets_sphinx_themes"]\n'),
    repo("docs/index.rst", "Welcome to Flask\n================\n\n.. toctree::\n   :maxdepth: 2\n\n   quickstart\n\n"
                           "Read :doc:`quickstart` first, then the :doc:`tutorial <tutorial/index>`.\n"),
    repo("docs/quickstart.rst", ".. _quickstart:\n\nQuickstart\n==========\n\nA minimal application. Bigger "
                                "projects use :ref:`app-factories`, see :ref:`Application Factories <App-Factories>`"
                                " (but not :ref:`app_factories`, which nobody defines).\n"),
    repo("docs/tutorial/index.rst", "Tutorial\n========\n\nIf you skipped it, read :doc:`/quickstart`. The layout "
                                    "follows :std:doc:`../patterns/packages`.\n"),
    repo("docs/patterns/wtforms.rst", "Form Validation with WTForms\n============================\n\nPut the forms in"
                                      " a module as shown in :doc:`packages`; :doc:`not-written-yet` is missing.\n"),
    repo("docs/patterns/packages.rst", "Large Applications as Packages\n==============================\n"),
    repo("docs/patterns/appfactories.rst", "  .. _app-factories:\n\nApplication Factories\n=====================\n"),
]


def test_rst_doc_and_ref_roles_resolve_to_files_of_the_documentation_tree() -> None:
    assert pairs(extract_edges(SPHINX_DOCS), EdgeKind.LINK) == {
        ("docs/index.rst", "docs/quickstart.rst"),
        ("docs/index.rst", "docs/tutorial/index.rst"),
        ("docs/quickstart.rst", "docs/patterns/appfactories.rst"),  # labels ignore case, `_` differs from `-`
        ("docs/tutorial/index.rst", "docs/quickstart.rst"),  # "/quickstart" from conf.py's directory
        ("docs/tutorial/index.rst", "docs/patterns/packages.rst"),
        ("docs/patterns/wtforms.rst", "docs/patterns/packages.rst"),
    }


def test_a_leading_slash_in_doc_is_the_repository_root_without_conf_py_or_index_rst() -> None:
    docs = [repo("guide/intro.rst", "See :doc:`/reference/api`."), repo("reference/api.rst", "API\n===\n")]
    assert pairs(extract_edges(docs), EdgeKind.LINK) == {("guide/intro.rst", "reference/api.rst")}


WIDGETS = "https://github.com/acme/widgets"
MARKDOWN_REPO = [
    repo("README.md", "# Widgets\n\nSee the [installation guide](docs/install.md#requirements) and the [API](docs/api)"
                      ". Questions? [Mail us](mailto:team@acme.dev). [Back to top](#widgets). History: "
                      "[changes](/docs/changelog).\n", source_id=3, forge=WIDGETS),
    repo("docs/install.md", "Back to the [overview](../README.md). Next: [configuration][config].\n\n"
                            "[config]: ./configuration.html \"Configuration\"\n\n"
                            '<p>Try the <a href="../examples/">examples</a> or [this](../../etc/passwd).</p>\n'
                            "[Same page](#requirements) and [same file](install.md#usage).\n",
         source_id=3, forge=WIDGETS),
    repo("docs/api.md", "# API\n\n`Widget.spin()` spins the widget.\n", source_id=3, forge=WIDGETS),
    repo("docs/configuration.md", "# Configuration\n", source_id=3, forge=WIDGETS),
    repo("docs/changelog.md", "# Changelog\n", source_id=3, forge=WIDGETS),
    repo("examples/README.md", "# Examples\n\nSee [the API](<../docs/api.md>).\n", source_id=3, forge=WIDGETS),
]


def test_relative_markdown_links_resolve_with_anchors_parent_paths_extensions_and_directories() -> None:
    assert pairs(extract_edges(MARKDOWN_REPO), EdgeKind.LINK) == {
        ("README.md", "docs/install.md"),
        ("README.md", "docs/api.md"),  # ".md" added
        ("README.md", "docs/changelog.md"),  # "/" is the repository root
        ("docs/install.md", "README.md"),
        ("docs/install.md", "docs/configuration.md"),  # reference definition, ".html" replaced by ".md"
        ("docs/install.md", "examples/README.md"),  # HTML href to a directory
        ("examples/README.md", "docs/api.md"),
    }


SITE = "https://docs.example.com"
WEB_PAGES = [
    page(f"{SITE}/guide/", "Start with [Installing](install/linux.html#prerequisites) or read "
                           f"<{SITE}/guide/faq/>. The API is documented in {WIDGETS}/blob/main/docs/api.md#L10-L20."
                           " Built with [Sphinx](https://www.sphinx-doc.org/en/master/)."),
    page(f"{SITE}/guide/install/linux.html", "Go [back](../) or see `macOS <HTTPS://Docs.Example.com:443/guide/"
                                             f"install/mac.html>`_ (this page: {SITE}/guide/install/linux.html)."),
    page(f"{SITE}/guide/install/mac.html", f"Install with Homebrew (see {SITE}/guide/install/linux.html, or "
                                           f"{WIDGETS}/blob/v2.0/docs/install.md)."),
    page(f"{SITE}/guide/faq/index.html", "Frequently asked questions: [start here](/guide/index.html)."),
    page(f"{SITE}/blog/launch.html", f"Read [the guide](../guide/) and ({SITE}/guide/install/mac.html).",
         source_id=4),
    *MARKDOWN_REPO,
]


def test_web_pages_link_by_absolute_and_relative_urls_but_never_outside_the_guru() -> None:
    links = {(e.source_id, e.key, e.target_key) for e in extract_edges(WEB_PAGES) if e.kind == EdgeKind.LINK}
    assert {link for link in links if link[0] in (2, 4)} == {
        (2, f"{SITE}/guide/", f"{SITE}/guide/install/linux.html"),
        (2, f"{SITE}/guide/", f"{SITE}/guide/faq/index.html"),  # "/" and "/index.html" are one page
        (2, f"{SITE}/guide/", "docs/api.md"),  # a forge blob URL with line anchors
        (2, f"{SITE}/guide/install/linux.html", f"{SITE}/guide/"),
        (2, f"{SITE}/guide/install/linux.html", f"{SITE}/guide/install/mac.html"),  # case and :443 normalised
        (2, f"{SITE}/guide/install/mac.html", f"{SITE}/guide/install/linux.html"),
        (2, f"{SITE}/guide/install/mac.html", "docs/install.md"),  # the same repository at another ref
        (2, f"{SITE}/guide/faq/index.html", f"{SITE}/guide/"),
        # The blog is another source: its absolute link counts, its relative "../guide/" does not.
        (4, f"{SITE}/blog/launch.html", f"{SITE}/guide/install/mac.html"),
    }


def test_pdf_pages_and_videos_are_linked_by_their_own_addresses() -> None:
    manual, guide = "https://example.com/manual.pdf", "https://example.com/guide.pdf"
    docs = [GraphDocument(5, f"page-{n}", "Manual", f"{manual}#page={n}", f"Page {n}.", "pdf") for n in (1, 3)]
    docs += [GraphDocument(7, f"page-{n}", "Guide", guide, "", "pdf") for n in (1, 2)]  # page from the key
    docs += [GraphDocument(6, "dQw4w9WgXcQ", "Talk", "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "", "youtube"),
             page(f"{SITE}/talks.html", f"Slides: {manual}#page=3 and {manual}, or {guide}#page=2.\n"
                                        "Recording: https://youtu.be/dQw4w9WgXcQ?t=42")]
    assert {(e.target_source_id, e.target_key) for e in extract_edges(docs) if e.kind == EdgeKind.LINK} == {
        (5, "page-3"), (5, "page-1"), (7, "page-2"), (6, "dQw4w9WgXcQ")}


SHOP = [
    repo("src/shop/__init__.py", '"""The shop."""\nfrom .app import create_app\n'),
    repo("src/shop/app.py", "import os\nimport logging, json\nfrom flask import Flask\n\nfrom shop import models\n"
                            "from shop.views import cart as cart_views, checkout  # both are modules\n"
                            "from .config import (\n    Settings,  # loaded from the environment\n    DEBUG,\n)\n"
                            "import shop.util.money as money\n\n\ndef create_app() -> Flask:\n"
                            "    import shop.missing  # not in the repository: ignored\n    return Flask(__name__)\n"),
    repo("src/shop/models.py", "from dataclasses import dataclass\n"),
    repo("src/shop/config.py", "import os\nDEBUG = bool(os.environ.get('DEBUG'))\n"),
    repo("src/shop/views/__init__.py", ""),
    repo("src/shop/views/cart.py", "from ..models import Cart\nfrom . import checkout\nfrom ....outside import x\n"),
    repo("src/shop/views/checkout.py", "from .cart import Cart  # circular on purpose\n"),
    repo("src/shop/util/__init__.py", ""),
    repo("src/shop/util/money.py", "from decimal import Decimal\n"),
    repo("tests/test_app.py", "import pytest\n\nfrom shop.app import create_app\n"),
    repo("tests/fixtures/shop/models.py", "# a copy used by one test; the shallower src/shop/models.py wins\n"),
]


def test_python_imports_resolve_absolute_and_relative_modules_of_the_repository() -> None:
    assert pairs(extract_edges(SHOP), EdgeKind.IMPORT) == {
        ("src/shop/__init__.py", "src/shop/app.py"),
        ("src/shop/app.py", "src/shop/__init__.py"),
        ("src/shop/app.py", "src/shop/models.py"),
        ("src/shop/app.py", "src/shop/views/__init__.py"),
        ("src/shop/app.py", "src/shop/views/cart.py"),
        ("src/shop/app.py", "src/shop/views/checkout.py"),
        ("src/shop/app.py", "src/shop/config.py"),
        ("src/shop/app.py", "src/shop/util/money.py"),
        ("src/shop/views/cart.py", "src/shop/models.py"),
        ("src/shop/views/cart.py", "src/shop/views/__init__.py"),
        ("src/shop/views/cart.py", "src/shop/views/checkout.py"),
        ("src/shop/views/checkout.py", "src/shop/views/cart.py"),
        ("tests/test_app.py", "src/shop/app.py"),
    }


def test_equally_shallow_modules_are_all_import_targets() -> None:
    docs = [repo("a/util.py", ""), repo("b/util.py", ""), repo("c/main.py", "import util\n")]
    assert pairs(extract_edges(docs), EdgeKind.IMPORT) == {("c/main.py", "a/util.py"), ("c/main.py", "b/util.py")}


def test_javascript_and_typescript_imports_resolve_relative_specifiers_only() -> None:
    docs = [
        repo("web/src/main.ts", "import { createApp } from 'vue'\nimport App from './App.vue'\nimport {\n  router,\n"
                                "} from './router'\nimport './styles/base.css'\nexport * from './api/client.js'\n"
                                "const Chart = () => import('./components/Chart')\n"),
        repo("web/server.cjs", "const express = require('express')\nconst routes = require( \"./routes\" )\n"
                               "const config = require('../config.json')\n"),
        *(repo(path, "") for path in ("web/src/App.vue", "web/src/router/index.ts", "web/src/styles/base.css",
                                      "web/src/api/client.ts", "web/src/components/Chart.tsx", "web/routes.js",
                                      "config.json")),
    ]
    assert pairs(extract_edges(docs), EdgeKind.IMPORT) == {
        ("web/src/main.ts", "web/src/App.vue"), ("web/src/main.ts", "web/src/router/index.ts"),
        ("web/src/main.ts", "web/src/styles/base.css"), ("web/src/main.ts", "web/src/api/client.ts"),
        ("web/src/main.ts", "web/src/components/Chart.tsx"),
        ("web/server.cjs", "web/routes.js"), ("web/server.cjs", "config.json"),
    }


def test_imports_stay_inside_one_repository() -> None:
    docs = [repo("app.py", "import helpers\n"), repo("helpers.py", "", source_id=9)]
    assert extract_edges(docs) == []


PROSE = [
    "Deploying a Flask application to production takes a little more care than running the development server."
    " The built-in server is convenient while you write code, but it handles one request at a time, reloads"
    " itself when files change, and shows an interactive debugger that must never be reachable from the internet.",
    "Pick a WSGI server such as Gunicorn or Waitress and point it at the application factory. Gunicorn starts"
    " several worker processes, each with its own copy of the application, so module level state is not shared"
    " between requests that land on different workers. Keep that state in a database or a cache instead.",
    "Put a reverse proxy like nginx in front of the WSGI server. The proxy terminates TLS, serves static files"
    " straight from disk, buffers slow clients and forwards the remaining requests. Tell Flask about the proxy"
    " with the ProxyFix middleware so that generated URLs use the public scheme and host names.",
    "Configuration belongs in environment variables or an instance folder that is not committed to version"
    " control. Set a long random secret key, turn debugging off, and make sure that logging goes to a place"
    " where your operations team actually looks, because errors in production are otherwise silent.",
    "Finally, automate the whole procedure. A short script or a container image that installs dependencies,"
    " runs database migrations and restarts the workers turns every release into a routine step, and it makes"
    " rolling back to the previous version just as easy when something unexpected goes wrong.",
]
TEXT = "\n\n".join(PROSE)
EDITED = TEXT.replace("buffers slow clients and forwards the remaining requests",
                      "protects the workers from slow clients by buffering them")
# Another page that opens with the same introduction and then talks about something else.
TESTING = "\n\n".join(PROSE[:1] + [
    "Flask provides a test client that simulates requests without a running server. Create the application with"
    " a testing configuration, open the client in a fixture, and every test gets a fresh context in which the"
    " database is created before the test and removed afterwards, so tests never depend on each other.",
    "Use the command line runner to exercise click commands the same way. Coverage reports show which branches"
    " of the views are never reached by a test; aim for the error paths first, because those are the ones that"
    " users stumble into and that nobody tries by hand before a release.",
    "When a test needs an external service, replace it with a small fake that records what it was asked and"
    " answers from fixtures. Mocks that assert on every call tend to break whenever the code is refactored,"
    " while a fake keeps the test focused on the behaviour that the user can observe.",
])


def test_identical_texts_are_duplicates_once_per_pair_across_sources_and_short_ones_are_not() -> None:
    docs = [page(f"{SITE}/deploying.html", TEXT), repo("docs/deploying.md", "  " + TEXT.upper(), source_id=3),
            page(f"{SITE}/404.html", "Page not found"), page(f"{SITE}/missing.html", "page   NOT found")]
    assert [(e.key, e.target_key, e.kind, e.score) for e in extract_edges(docs)] == [
        (f"{SITE}/deploying.html", "docs/deploying.md", EdgeKind.DUPLICATE, 1.0)]  # not also a near-duplicate


def test_one_edited_paragraph_is_a_near_duplicate_and_a_text_sharing_its_introduction_is_not() -> None:
    docs = [page(f"{SITE}/v1/deploying.html", TEXT), page("https://mirror.example.org/deploying", EDITED,
                                                          source_id=4), page(f"{SITE}/v1/other.html", TESTING)]
    edges = extract_edges(docs)
    assert [(e.key, e.target_key, e.kind) for e in edges] == [
        (f"{SITE}/v1/deploying.html", "https://mirror.example.org/deploying", EdgeKind.NEAR_DUPLICATE)]
    assert 0.8 <= edges[0].score < 1.0 and edges[0].score == round(edges[0].score, 3)
    lenient = extract_edges(docs, near_threshold=0.1)  # the shared introduction only passes a low threshold
    assert (f"{SITE}/v1/deploying.html", f"{SITE}/v1/other.html") in pairs(lenient, EdgeKind.NEAR_DUPLICATE)


def test_pages_that_share_only_site_boilerplate_are_not_near_duplicates(monkeypatch: pytest.MonkeyPatch) -> None:
    menu = " | ".join(f"Release notes for version 2.{n}" for n in range(60))
    footer = f"Navigation: {menu}. Copyright 2024 Example Inc. All rights reserved. Privacy policy. Terms of use."
    docs = [page(f"{SITE}/releases/2.{n}.html", f"Version 2.{n} fixes issue #{1000 + n}.\n\n{footer}")
            for n in range(60)]
    docs += [page(f"{SITE}/deploying.html", f"{TEXT}\n\n{footer}"),
             page(f"{SITE}/deploying-print.html", f"Printable version.\n\n{EDITED}\n\n{footer}")]
    assert pairs(extract_edges(docs), EdgeKind.NEAR_DUPLICATE) == {
        (f"{SITE}/deploying-print.html", f"{SITE}/deploying.html")}  # their own text still counts
    monkeypatch.setattr(source_graph, "MAX_POSTING", 1000)  # without the boilerplate cut-off...
    assert len(pairs(extract_edges(docs), EdgeKind.NEAR_DUPLICATE)) > 1000  # ...every release page matches


def test_a_document_listed_twice_counts_once_and_the_first_listing_wins() -> None:
    docs = [page(f"{SITE}/a.html", f"See {SITE}/b.html."), page(f"{SITE}/a.html", f"See {SITE}/c.html."),
            page(f"{SITE}/b.html", ""), page(f"{SITE}/c.html", "")]
    assert pairs(extract_edges(docs), EdgeKind.LINK) == {(f"{SITE}/a.html", f"{SITE}/b.html")}


def test_the_threshold_must_be_a_fraction() -> None:
    with pytest.raises(ValueError, match="near_threshold"):
        extract_edges([], near_threshold=0.0)


def test_self_links_and_repeated_links_give_no_extra_edges() -> None:
    docs = [page(f"{SITE}/a.html", f"[me]({SITE}/a.html) [me again](a.html#top) [b](b.html) [b]({SITE}/b.html)"),
            page(f"{SITE}/b.html", "")]
    assert [(e.key, e.target_key, e.kind) for e in extract_edges(docs)] == [
        (f"{SITE}/a.html", f"{SITE}/b.html", EdgeKind.LINK)]


def test_at_most_200_links_are_examined_per_document_and_text_is_read_up_to_the_cap() -> None:
    targets = [page(f"{SITE}/api/function-{n}.html", f"Function {n}.") for n in range(1000)]
    index = page(f"{SITE}/api/", "\n".join(f"* [function {n}](function-{n}.html)" for n in range(1000)))
    late = page(f"{SITE}/long.html", "x" * MAX_TEXT_CHARS + f" {SITE}/api/function-1.html")
    edges = extract_edges([index, late, *targets])
    assert MAX_LINKS_PER_DOCUMENT == 200
    assert [e.target_key for e in edges] == sorted(f"{SITE}/api/function-{n}.html" for n in range(200))


def test_at_most_200_import_statements_are_read_per_file() -> None:
    modules = [repo(f"plugins/plugin_{n:03}.py", "") for n in range(300)]
    loader = repo("plugins/loader.py", "".join(f"from . import plugin_{n:03}\n" for n in range(300)))
    edges = extract_edges([loader, *modules])
    assert MAX_IMPORTS_PER_FILE == 200
    assert [e.target_key for e in edges] == [f"plugins/plugin_{n:03}.py" for n in range(200)]


def test_edges_are_sorted_and_the_same_whatever_the_input_order() -> None:
    docs = [*SPHINX_DOCS, *WEB_PAGES, *SHOP, page(f"{SITE}/copy.html", TEXT), page(f"{SITE}/edit.html", EDITED)]
    edges = extract_edges(docs)
    assert edges == extract_edges(list(reversed(docs))) == extract_edges(docs)
    assert edges == sorted(edges, key=lambda e: (e.source_id, e.key, e.target_source_id, e.target_key, e.kind.value))
    assert {edge.kind for edge in edges} == set(EdgeKind) - {EdgeKind.DUPLICATE}
    assert all(edge.score == 1.0 for edge in edges if edge.kind != EdgeKind.NEAR_DUPLICATE)
    assert all((edge.source_id, edge.key) != (edge.target_source_id, edge.target_key) for edge in edges)


@pytest.mark.parametrize(("document", "expected"), [
    (repo("docs/patterns/x.rst", ""), ("docs", "patterns")),
    (repo("README.md", ""), ()),
    (page("https://ex.com/guide/install/linux.html", ""), ("guide", "install")),
    (page("https://ex.com/Getting%20Started/first-steps/", ""), ("Getting Started",)),
    (page("https://ex.com/", ""), ()),
    (page("https://wiki.ex.com/spaces/ops/runbook", "", kind="confluence"), ("spaces", "ops")),
    (GraphDocument(5, "page-3", "Manual", "https://ex.com/manual.pdf#page=3", "", "pdf"), ()),
    (GraphDocument(6, "dQw4w9WgXcQ", "Talk", "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "", "youtube"), ()),
])
def test_breadcrumbs_are_the_documents_directories(document: GraphDocument, expected: tuple[str, ...]) -> None:
    assert breadcrumbs(document) == expected


def test_a_toctree_links_a_sphinx_page_to_the_documents_it_lists() -> None:
    index = GraphDocument(source_id=1, key="docs/index.rst", title="index", link="", kind="github_repo",
                          text="Birds\n=====\n\n.. toctree::\n   :maxdepth: 2\n\n   flamingo\n"
                               "   Operations <ops/runbook>\n   self\n   api/*\n\nAfter the tree.\n   not an entry\n")
    pages = [GraphDocument(source_id=1, key=f"docs/{name}.rst", title=name, link="", text="Page.", kind="github_repo")
             for name in ("flamingo", "ops/runbook", "not an entry")]
    assert [(e.key, e.target_key, e.kind) for e in extract_edges([index, *pages])] == [
        ("docs/index.rst", "docs/flamingo.rst", EdgeKind.LINK),
        ("docs/index.rst", "docs/ops/runbook.rst", EdgeKind.LINK)]
