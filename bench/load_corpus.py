"""A generated documentation site for load benches: varied pages, a sitemap, served by a real process."""

from __future__ import annotations

import html
import random
import subprocess
import sys
from pathlib import Path

from backend.core.sidecars import free_port, wait_for_port

COMPONENTS = ("scheduler", "ingest queue", "vector index", "auth gateway", "session store", "rate limiter",
              "webhook relay", "backup agent", "metrics exporter", "config loader", "cache layer", "audit log",
              "search planner", "file uploader", "job runner", "retry policy", "health checker", "token vault",
              "event bus", "report builder")
TOPICS = ("timeouts", "retries", "configuration", "scaling", "failover", "memory limits", "logging", "upgrades",
          "permissions", "encryption", "monitoring", "backups")
_VERBS = ("accepts", "rejects", "buffers", "retries", "records", "compresses", "validates", "schedules")
_UNITS = ("seconds", "requests", "megabytes", "connections", "workers", "entries")


def _paragraph(rng: random.Random, component: str, topic: str) -> str:
    sentences = []
    for _ in range(rng.randint(4, 7)):
        n, unit, verb = rng.randint(2, 500), rng.choice(_UNITS), rng.choice(_VERBS)
        sentences.append(rng.choice((
            f"The {component} {verb} at most {n} {unit} before it applies its {topic} rules.",
            f"When {topic} matter, set `{component.replace(' ', '_')}.{topic.split()[0]}` to {n} {unit}.",
            f"Operators tune {topic} of the {component} per environment; the default is {n} {unit}.",
            f"If the limit of {n} {unit} is reached, the {component} {verb} new work and logs a warning.",
        )))
    return " ".join(sentences)


def page(index: int) -> tuple[str, str]:
    """(title, html) of page `index`; deterministic."""
    rng = random.Random(index)
    component, topic = COMPONENTS[index % len(COMPONENTS)], TOPICS[(index // len(COMPONENTS)) % len(TOPICS)]
    title = f"{component.title()}: {topic} (part {index})"
    body = "".join(f"<h2>{html.escape(topic.title())} {k}</h2><p>{html.escape(_paragraph(rng, component, topic))}</p>"
                   for k in range(3))
    return title, f"<html><head><title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>" \
                  f"{body}</body></html>"


def write_site(root: Path, pages: int, *, prefix: str = "p") -> None:
    """`pages` HTML pages under root/<prefix>/ and root/<prefix>-sitemap.xml listing them (hosted at any port)."""
    (root / prefix).mkdir(parents=True, exist_ok=True)
    for n in range(pages):
        (root / prefix / f"{n}.html").write_text(page(n)[1])


def sitemap(root: Path, base: str, pages: int, *, prefix: str = "p") -> str:
    """Write the sitemap for pages served at `base`; its URL."""
    urls = "".join(f"<url><loc>{base}/{prefix}/{n}.html</loc></url>" for n in range(pages))
    (root / f"{prefix}-sitemap.xml").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}'
        "</urlset>")
    return f"{base}/{prefix}-sitemap.xml"


def serve(root: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A static file server for the site (its own process); its base URL."""
    port = free_port()
    with log.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                    "--directory", str(root)], stdout=sink, stderr=subprocess.STDOUT)
    wait_for_port("127.0.0.1", port, timeout=30)
    return process, f"http://127.0.0.1:{port}"


def questions(count: int) -> list[str]:
    """`count` different questions the site answers (no two alike, so no answer is served from cache)."""
    out = []
    for n in range(count):
        component, topic = COMPONENTS[n % len(COMPONENTS)], TOPICS[(n // len(COMPONENTS)) % len(TOPICS)]
        variant = ("How does the {c} handle {t}?", "What should I know about {t} in the {c}?",
                   "Which limit applies to {t} for the {c}?", "How do I configure {t} of the {c}?")[
            (n // (len(COMPONENTS) * len(TOPICS))) % 4]
        suffix = f" (case {n // (len(COMPONENTS) * len(TOPICS) * 4)})" if n >= len(COMPONENTS) * len(TOPICS) * 4 else ""
        out.append(variant.format(c=component, t=topic) + suffix)
    return out
