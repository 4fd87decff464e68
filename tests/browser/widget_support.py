"""Helpers for the widget's Chromium tests: reading the Shadow DOM, asking, waiting, sampling the stream."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.support.browser import playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page, Request


expect = playwright_sync_api().expect

SAMPLER_JS = """(turns) => {
  window.__samples = [];
  const root = document.getElementById("openguru-widget").shadowRoot;
  const timer = setInterval(() => {
    const answers = root.querySelectorAll(".turn .md");
    if (answers.length < turns) return;
    const answer = answers[turns - 1];
    const busy = answer.getAttribute("aria-busy") === "true";
    window.__samples.push({length: answer.textContent.length, busy: busy});
    if (!busy) clearInterval(timer);
  }, 20);
}"""
ACTIVE_JS = """() => {
  const host = document.getElementById("openguru-widget");
  const active = host && host.shadowRoot.activeElement;
  return document.activeElement === host && active ? (active.id || active.className) : null;
}"""


def shadow_active(page: Page) -> str | None:
    """The id or class of the focused element inside the widget's shadow root (None when focus is elsewhere)."""
    return page.evaluate(ACTIVE_JS)


def ask_in_widget(page: Page, question: str, turns: int) -> None:
    page.evaluate(SAMPLER_JS, turns)
    box = page.get_by_label("Your question")
    box.fill(question)
    box.press("Enter")


def wait_finished(page: Page, turns: int) -> Locator:
    expect(page.locator(".turn")).to_have_count(turns)
    turn = page.locator(".turn").nth(turns - 1)
    expect(turn.locator(".md")).to_have_attribute("aria-busy", "false", timeout=30_000)
    return turn


def growth_steps(page: Page) -> int:
    lengths = [s["length"] for s in page.evaluate("window.__samples") if s["busy"]]
    return sum(1 for before, after in zip(lengths, lengths[1:], strict=False) if after > before)


def stream_bodies(page: Page) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []

    def record(request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/widget/stream/"):
            bodies.append(request.post_data_json)

    page.on("request", record)
    return bodies


def style_of(locator: Locator, prop: str) -> str:
    return locator.evaluate("(node, prop) => getComputedStyle(node).getPropertyValue(prop)", prop)


def stored_conversation(page: Page, key: str) -> dict[str, Any]:
    return json.loads(page.evaluate("(key) => sessionStorage.getItem(key)", f"openguru-widget:{key}") or "null")
