"""What must be true of the target before an import writes, and clearing it for `import_data --replace`."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.core.management import call_command
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.models.signals import post_delete

from backend.core.locks import cache_lock
from backend.gurus import signals
from backend.gurus.models import Guru, VectorCollection
from backend.gurus.services import collection_lock_name, collection_name_for, guru_collection_drop
from backend.portability.archive import ArchiveError
from backend.portability.catalog import CONTENT

LOCK_WAIT_S = 120


def migrate_new_database() -> bool:
    """Migrate a database no migration has touched yet (a new data dir, an empty PostgreSQL): it holds nothing an
    import could collide with, so restoring into an empty install is one command. True when it migrated."""
    if MigrationExecutor(connection).loader.applied_migrations:
        return False
    call_command("migrate", interactive=False, verbosity=0)
    return True


def check_schema(archived: list[str]) -> bool:
    """Refuse an archive from a newer schema or an unmigrated target; True when the archive's schema is older."""
    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        raise ArchiveError("This install's database is not fully migrated: run the migrations first "
                           "(`./openguru manage migrate` on the embedded default, `manage.py migrate` or compose's "
                           "`migrate` service in production).")
    known = {f"{app}.{name}" for app, name in executor.loader.disk_migrations}
    unknown = sorted(set(archived) - known)
    if unknown:
        raise ArchiveError(
            f"The archive comes from a newer OpenGuru: this install lacks the migrations {', '.join(unknown[:5])}"
            f"{' …' if len(unknown) > 5 else ''}. Upgrade this install and run migrate, then import."
        )
    applied = {f"{app}.{name}" for app, name in executor.loader.applied_migrations}
    return set(archived) != applied


def content_counts() -> dict[str, int]:
    """Rows the target already holds that an import would collide with (accounts and settings do not count)."""
    return {label: apps.get_model(label)._default_manager.count() for label in CONTENT}


def check_no_pending_drops() -> None:
    """A deleted guru's drop task still queued would remove an imported guru reusing its id or slug."""
    pending = list(VectorCollection.objects.exclude(guru_id__in=Guru.objects.values("pk")).values_list("name",
                                                                                                         flat=True))
    if pending:
        raise ArchiveError(
            f"Deleted gurus' collections are still being dropped ({', '.join(pending)}). Start the worker and "
            "wait until `manage.py collections` no longer lists them, then import: a drop still queued would "
            "remove an imported guru's vectors and files."
        )


def refuse_non_empty(counts: dict[str, int]) -> None:
    held = ", ".join(f"{n} {label.split('.')[1]}" for label, n in counts.items() if n)
    raise ArchiveError(
        f"This install is not empty ({held}). import_data restores into an empty install, keeping the archive's "
        "ids. Run it with --replace to delete every guru (with its sources, questions, files and vectors) and "
        "API key here first; accounts are kept."
    )


@contextmanager
def _drop_signal_muted() -> Iterator[None]:
    # The signal queues the drop for later; here it runs now, so nothing queued can touch the import.
    post_delete.disconnect(sender=Guru, dispatch_uid="guru_collection_drop")
    try:
        yield
    finally:
        post_delete.connect(signals._guru_deleted, sender=Guru, dispatch_uid="guru_collection_drop")


def wipe_content() -> dict[str, int]:
    """Delete every guru (cascading to its rows), API key and their vectors, files and clones, now."""
    counts = content_counts()
    gurus = list(Guru.objects.values_list("pk", "slug"))
    sources = list(apps.get_model("sources.datasource")._default_manager.values_list("pk", flat=True))
    with _drop_signal_muted(), transaction.atomic():
        Guru.objects.all().delete()
        apps.get_model("api.apikey")._default_manager.all().delete()
    for pk, slug in gurus:
        with cache_lock(collection_lock_name(pk), wait=LOCK_WAIT_S):
            guru_collection_drop(guru_id=pk, collection_names=[collection_name_for(slug)])
    remove_clones(sources)
    return counts


def remove_clones(source_ids: list[int]) -> None:
    """Repository checkouts are named by source id; one left by another source must not be fetched into."""
    for source_id in source_ids:
        shutil.rmtree(Path(settings.OPENGURU_REPOS_DIR) / str(int(source_id)), ignore_errors=True)
