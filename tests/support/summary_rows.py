"""Summary trees made as rows directly, for the tests of what reads them (API, MCP, the summary page)."""

from __future__ import annotations

from collections.abc import Sequence

from backend.gurus.models import Guru
from backend.sources.models import DataSource, Summarization

MODEL = "test-model"


def source_root(source: DataSource, text: str, *, extractive: bool = False, is_root: bool = False,
                level: int = 1) -> Summarization:
    """A source's summary (the top of its tree) over one level-0 piece; `is_root` for a one-source guru."""
    model = "" if extractive else MODEL
    root = Summarization.objects.create(guru=source.guru, source=source, level=level, position=0, text=text,
                                        model=model, extractive=extractive, is_source_root=True, is_root=is_root)
    Summarization.objects.create(guru=source.guru, source=source, level=0, position=0, parent=root,
                                 text=f"{text} (piece)", model=model, extractive=extractive)
    return root


def guru_root(guru: Guru, text: str, children: Sequence[Summarization], *, extractive: bool = False) -> Summarization:
    """The guru's summary above its sources' summaries."""
    level = max((c.level for c in children), default=0) + 1
    root = Summarization.objects.create(guru=guru, source=None, level=level, position=0, text=text,
                                        model="" if extractive else MODEL, extractive=extractive, is_root=True)
    Summarization.objects.filter(pk__in=[c.pk for c in children]).update(parent=root)
    return root
