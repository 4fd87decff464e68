"""Add a data source to a guru from the terminal and watch it index with a progress bar."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import BaseCommand, CommandError, CommandParser

from backend.core.errors import AppError
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.services import source_create
from backend.sources.validation import looks_like_repository

BAR_WIDTH = 30


def _guess_kind(target: str) -> str:
    lowered = target.lower()
    if lowered.endswith(".pdf") and not lowered.startswith(("http://", "https://")):
        return SourceKind.PDF
    if any(host in lowered for host in ("youtube.com/", "youtu.be/")):
        return SourceKind.YOUTUBE
    if looks_like_repository(target):
        return SourceKind.GITHUB_REPO
    return SourceKind.WEBSITE


class Command(BaseCommand):
    help = ("Add a YouTube video/playlist, web page/sitemap/site, PDF file or Git repository (any host, or a local "
            "path) to a guru.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("guru", help="The guru's slug.")
        parser.add_argument("target", help="URL, or the path of a PDF file or a local Git repository.")
        parser.add_argument("--kind", choices=[k.value for k in SourceKind], help="Default: guessed from target.")
        parser.add_argument("--mode", choices=["page", "sitemap", "crawl"], default="page", help="Websites.")
        parser.add_argument("--max-pages", type=int, help="Sitemap/crawl page limit.")
        parser.add_argument("--depth", type=int, help="Crawl depth.")
        parser.add_argument("--branch", default="", help="Repository branch (default: the repository's).")
        parser.add_argument("--include", action="append", default=[], help="Repository glob to include.")
        parser.add_argument("--exclude", action="append", default=[], help="Repository glob to exclude.")
        parser.add_argument("--no-wait", action="store_true", help="Return once queued.")
        parser.add_argument("--timeout", type=float, default=3600, help="Seconds to wait for indexing.")

    def _options(self, kind: str, options: dict[str, Any]) -> dict[str, Any]:
        if kind == SourceKind.WEBSITE:
            extra = {"max_pages": options["max_pages"], "depth": options["depth"]}
            return {"mode": options["mode"], **{k: v for k, v in extra.items() if v is not None}}
        if kind == SourceKind.GITHUB_REPO:
            return {"branch": options["branch"], "include": options["include"], "exclude": options["exclude"]}
        return {}

    def handle(self, *args: Any, **options: Any) -> None:
        guru = Guru.objects.filter(slug=options["guru"]).first()
        if guru is None:
            raise CommandError(f"No guru with slug {options['guru']!r}.")
        target: str = options["target"]
        kind = options["kind"] or _guess_kind(target)
        upload = None
        if kind == SourceKind.GITHUB_REPO and Path(target).is_dir():
            target = str(Path(target).resolve())  # a path relative to where the command runs
        if kind == SourceKind.PDF:
            path = Path(target)
            if not path.is_file():
                raise CommandError(f"No file at {target}.")
            upload = SimpleUploadedFile(path.name, path.read_bytes(), content_type="application/pdf")
        try:
            # The server's own terminal: like staff, it may add a repository on this machine's disk.
            source = source_create(guru=guru, kind=kind, url="" if upload else target, upload=upload,
                                   options=self._options(kind, options), allow_local=True)
        except AppError as exc:
            raise CommandError(exc.detail) from exc
        self.stdout.write(f"Added {source.get_kind_display()} source #{source.pk} to {guru.slug}.")
        if not options["no_wait"]:
            self._watch(source.pk, options["timeout"])

    def _watch(self, source_id: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        # A terminal redraws one bar; a pipe or a log file gets a line per change, not thousands of redraws.
        live, shown = sys.stdout.isatty(), ""
        while time.monotonic() < deadline:
            source = DataSource.objects.get(pk=source_id)
            done, total = source.progress_done, source.progress_total
            filled = BAR_WIDTH * done // total if total else 0
            bar = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total or '?'} {source.status}"
            if live:
                sys.stdout.write(f"\r{bar}  ")
            elif bar != shown:
                sys.stdout.write(f"{bar}\n")
            shown = bar
            sys.stdout.flush()
            if source.status in (SourceStatus.INDEXED, SourceStatus.FAILED):
                self.stdout.write("")
                if source.status == SourceStatus.FAILED:
                    raise CommandError(source.error_message or "Indexing failed.")
                # The note is a sentence of its own ("3 file(s) skipped (size, type or filters).").
                note = f" {source.error_message}" if source.error_message else ""
                self.stdout.write(self.style.SUCCESS(f"Indexed {source.chunk_count} chunks from {source}.{note}"))
                return
            time.sleep(0.5)
        raise CommandError("Still indexing; check `manage.py collections` or the dashboard later.")
