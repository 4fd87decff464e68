"""A small but complete install (every exported model, a file, a secret, vectors) and ways to compare two."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.adapters import registry
from backend.answering.models import Question
from backend.answering.services import AskRequest, answer_stream
from backend.api.services import api_key_create
from backend.core.services import settings_update
from backend.gurus.models import Guru, VectorCollection
from backend.integrations.models import Integration, IntegrationKind, Thread
from backend.portability.catalog import EXPORTED, NATURAL
from backend.sources.models import DataSource, SourceKind, SourceStatus, Summarization
from backend.sources.services import source_create
from backend.widget.services import widget_id_create
from tests.factories import GuruFactory, UserFactory
from tests.fakes.pdfs import pdf_bytes

MANUAL = [["Retrying tasks", "Call self.retry() inside a bound task to retry it.",
           "The countdown argument sets the delay before the retry in seconds."],
          ["Rate limits", "The rate_limit option throttles how often a task may run per minute.",
           "Workers enforce rate limits per worker process, not across the cluster."]]
FIRST, SECOND = "How do I retry a task?", "How do rate limits work?"
ICON = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
TOKEN = "xoxb-a-slack-token"


def build_install(capture: DjangoCaptureOnCommitCallbacks) -> Guru:
    """Two accounts, a guru with an icon, an indexed PDF, a failed site, keys, a widget, a Slack link, answers."""
    settings_update(rerank_threshold=0.05, history_turns=6)
    keeper, asker = UserFactory(username="keeper"), UserFactory(username="asker", is_staff=True)
    with capture(execute=True):
        guru: Guru = GuruFactory(slug="docs", name="Docs Guru", domain_knowledge="the Celery task queue")
    guru.maintainers.add(keeper, asker)
    guru.icon.save("icon.png", ContentFile(ICON))
    upload = SimpleUploadedFile("manual.pdf", pdf_bytes(MANUAL), content_type="application/pdf")
    with capture(execute=True):
        source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Manual")
    DataSource.objects.create(guru=guru, kind=SourceKind.GITHUB_REPO, url="https://github.com/acme/private",
                              status=SourceStatus.FAILED, error_message="bad token", access_token="ghp_secret")
    Summarization.objects.create(guru=guru, text="A guru about Celery.", is_root=True)
    api_key_create(user=keeper, name="ci", guru=guru)
    widget_id_create(guru=guru, name="docs site", allowed_origins=["https://docs.example.com"])
    integration = Integration.objects.create(kind=IntegrationKind.SLACK, guru=guru, external_id="T1",
                                             access_token=TOKEN, signing_secret="signing")
    ask(guru, FIRST, user=asker)
    Thread.objects.create(integration=integration, external_thread_id="1700.1",
                          binge=Question.objects.get().binge)
    return guru


def ask(guru: Guru, question: str, *, user: Any = None) -> list[dict[str, Any]]:
    """The references the answer cites (offline answerer: deterministic for the same chunks)."""
    events = list(answer_stream(AskRequest(guru=guru, question=question, channel="WEB", user=user)))
    kinds = [e.kind.value for e in events]
    assert "error" not in kinds, events
    return [e.data for e in events if e.kind.value == "references"]


def rows() -> dict[str, list[dict[str, Any]]]:
    """Every exported row, secrets decrypted, users without their (install-specific) ids.

    Many-to-many values are sorted: the serializer lists them in whatever order the database returns, which
    PostgreSQL does not promise (the guru row differed once after an import under load, its two maintainers
    being the one part of it that has no order of its own).
    """
    dump = {}
    for label in EXPORTED:
        model = apps.get_model(label)
        many = [field.name for field in model._meta.many_to_many]
        serialized = serializers.serialize("python", model._default_manager.order_by("pk"),
                                           use_natural_foreign_keys=True, use_natural_primary_keys=label in NATURAL)
        for row in serialized:
            row["fields"].update({name: sorted(row["fields"][name]) for name in many if name in row["fields"]})
        dump[label] = serialized
    return dump


def vectors() -> dict[str, list[tuple[Any, ...]]]:
    """Each guru's chunks (by slug), sorted by id, with vectors and fields."""
    store, out = registry.vector_store(), {}
    for record in VectorCollection.objects.all():
        slug = Guru.objects.get(pk=record.guru_id).slug
        chunks = [c for batch in store.scan(record.name) for c in batch]
        out[slug] = sorted((c.id, c.text, c.vector, c.source_id, c.generation, c.kind, repr(c.metadata))
                           for c in chunks)
    return out


def differences(before: tuple[dict[str, Any], ...], after: tuple[dict[str, Any], ...]) -> list[str]:
    """Where two (rows, vectors, media) snapshots differ: the part, the key and the first differing item."""
    found = []
    for part, (old, new) in zip(("rows", "vectors", "media"), zip(before, after, strict=True), strict=True):
        for key in sorted(set(old) | set(new)):
            if old.get(key) == new.get(key):
                continue
            olds, news = old.get(key), new.get(key)
            if isinstance(olds, list) and isinstance(news, list):
                pairs = enumerate(zip(olds, news, strict=False))
                at = next((i for i, (a, b) in pairs if a != b), min(len(olds), len(news)))
                was, now = (olds[at] if at < len(olds) else None), (news[at] if at < len(news) else None)
                found.append(f"{part} {key} [{at}] of {len(olds)}/{len(news)}: {_changed(was, now)}")
            else:
                found.append(f"{part} {key}: {str(olds)[:300]!r} -> {str(news)[:300]!r}")
    return found


def _changed(was: Any, now: Any) -> str:
    """The fields of a serialized row that differ, else the two values."""
    if isinstance(was, dict) and isinstance(now, dict) and isinstance(was.get("fields"), dict) \
            and isinstance(now.get("fields"), dict):
        names = sorted(set(was["fields"]) | set(now["fields"]))
        changed = {n: (was["fields"].get(n), now["fields"].get(n)) for n in names
                   if was["fields"].get(n) != now["fields"].get(n)}
        return f"pk {was.get('pk')!r} -> {now.get('pk')!r}, fields {changed!r}"
    return f"{was!r} -> {now!r}"


def media() -> dict[str, bytes]:
    root = Path(settings.MEDIA_ROOT)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def wipe() -> None:
    """What a new install looks like: no rows, no collections of ours, no files."""
    store = registry.vector_store()
    for record in VectorCollection.objects.all():
        store.drop_collection(record.name)
    for label in [*reversed(EXPORTED), "gurus.vectorcollection"]:
        apps.get_model(label)._default_manager.all().delete()
    get_user_model().objects.all().delete()
    shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)
