"""System check (tag "vectors", run with --deploy): collections must match the configured embedder."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Warning, register
from django.db import DatabaseError

from backend.pipeline.errors import ServiceError


@register("vectors", deploy=True)
def check_collection_dimensions(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Report gurus whose collection was built for another embedding dimension."""
    from backend.gurus.selectors import guru_collection_reports

    try:
        reports = guru_collection_reports()
    except (DatabaseError, ServiceError) as exc:
        return [Warning(f"Could not inspect vector collections: {exc}", id="openguru.W001")]
    messages: list[CheckMessage] = []
    for report in reports:
        info = report.info
        if info is not None and report.dimension_changed:
            messages.append(
                Error(
                    f"Guru '{report.guru.slug}': collection '{info.name}' holds {info.dimension}-d vectors "
                    f"but the configured embedder produces {report.embedder_dimension}-d vectors.",
                    hint="Re-embed the guru's sources or configure the embedder it was built with.",
                    obj=report.guru,
                    id="openguru.E001",
                )
            )
        elif report.embedder_changed and report.record is not None:
            messages.append(
                Error(
                    f"Guru '{report.guru.slug}': its vectors were written by '{report.record.embedder}' but "
                    f"'{report.embedder_id}' is configured; similarities between the two are meaningless.",
                    hint="Run `manage.py reembed <slug>` or configure the embedder it was built with.",
                    obj=report.guru,
                    id="openguru.E002",
                )
            )
    return messages
