"""Test helpers for summary trees: small tree sizes, a page of many distinct paragraphs, summariser calls."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import RecordedRequest

if TYPE_CHECKING:
    from tests.support.product import Product

SUMMARISE_PROMPT = "Summarise the following material"


def small_trees(settings: SettingsWrapper, *, max_length: int = 1000, summary_length: int = 240) -> None:
    """Summaries on, with sizes small enough that a test page makes a tree of several layers."""
    settings.OPENGURU_SUMMARIES = True
    settings.SUMMARIZATION_MAX_LENGTH = max_length
    settings.SUMMARIZATION_OVERLAP_LENGTH = 50
    settings.SUMMARIZATION_MIN_LENGTH = 200
    settings.SUMMARIZATION_SUMMARY_LENGTH = summary_length
    settings.OPENGURU_SUMMARY_CONCURRENCY = 2


def topic_paragraphs(topic: str, count: int, *, edited: int | None = None) -> list[str]:
    """`count` paragraphs of about 300 characters, each about one numbered aspect of `topic`."""
    paragraphs = []
    for i in range(count):
        note = " This paragraph was edited." if i == edited else ""
        paragraphs.append(
            f"Section {i} of the {topic} guide explains aspect number {i} of {topic} in detail. The {topic} "
            f"feature {i} can be configured with the option {topic.lower()}_{i} and it works together with the "
            f"rest of the system. Users of {topic} rely on aspect {i} when they deploy it in production.{note}")
    return paragraphs


def page_html(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<!doctype html><html><head><title>{title}</title></head>"
            f"<body><main><h1>{title}</h1>{body}</main></body></html>")


def summarise_calls(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    """The summariser's calls among everything the fake LLM received."""
    return [r for r in requests if any(SUMMARISE_PROMPT in text for _, text in r.messages)]


def guru_with_two_manuals(product: Product, tmp_path: Path, slug: str) -> None:
    """Through the running product: log in, create the guru "Queue Guru" and add two PDF manuals (Scheduler,
    Workers) of four topic paragraphs each with `manage add_source`."""
    from tests.fakes.pdfs import write_pdf
    from tests.support.product import Browser, collection_ready, eventually, manage

    browser = Browser(product.url)
    browser.submit("/accounts/login/", {"username": product.username, "password": product.password})
    browser.submit("/dashboard/gurus/new/", {
        "slug": slug, "name": "Queue Guru", "domain_knowledge": "a task queue", "base_color": "#1f6feb",
        "language": "en", "active": "on",
    })
    eventually(lambda: collection_ready(product, slug), "the guru's collection")
    for topic in ("Scheduler", "Workers"):
        pdf = write_pdf(tmp_path / f"{topic.lower()}.pdf", [[line] for line in topic_paragraphs(topic, 4)])
        assert "Indexed" in manage(product, "add_source", slug, str(pdf))
