"""Which page of a website source a reference cites, so a sitemap's or crawl's citations count per page."""

from __future__ import annotations

from typing import Any

from backend.pipeline.types import SourceKind
from backend.sources.models import SourcePage

PageKey = tuple[str, str]
"""(page URL, page title); ("", "") for references that are not of a website."""


def _is_website(reference: dict[str, Any]) -> bool:
    return reference.get("kind") == SourceKind.WEBSITE.value


def reference_pages(references: list[dict[str, Any]]) -> list[PageKey]:
    """The page each reference cites: its own link and title; a private source's withheld link is looked up.

    Private sources' references carry no link (answers must not show it), so the page is found by title
    among the source's page rows: one query for the whole answer.
    """
    wanted = {(ref.get("source_id"), str(ref.get("title") or "")) for ref in references
              if _is_website(ref) and not ref.get("link")}
    urls: dict[tuple[Any, str], str] = {}
    if wanted:
        rows = SourcePage.objects.filter(source_id__in={sid for sid, _ in wanted},
                                         title__in={title for _, title in wanted})
        urls = {(sid, title): url for sid, title, url in rows.values_list("source_id", "title", "url")}
    pages: list[PageKey] = []
    for ref in references:
        if not _is_website(ref):
            pages.append(("", ""))
            continue
        title = str(ref.get("title") or "")
        url = str(ref.get("link") or urls.get((ref.get("source_id"), title), "")).split("#", 1)[0]
        pages.append((url[:2000], title[:500]))
    return pages
