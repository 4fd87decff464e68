"""A guru's term document frequencies, counted after each index run from its live chunks on real Milvus."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_django import DjangoAssertNumQueries
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from backend.pipeline.rerank_local import query_terms
from backend.sources.models import DataSource, SourceKind, SourceStatus, SourceTerm, SourceTermStats
from backend.sources.services import source_create, source_delete, source_schedule_index
from backend.sources.term_stats import TermFrequencies, misspelt_terms, term_frequencies, term_stats_recover
from tests.fakes.site_server import Reply, SiteFake
from tests.integration.sources.source_support import index_source
from tests.support.gitrepo import commit_all, git, init_repo, write_files
from tests.support.summaries import page_html

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]
SHARED = "Deployment notes: run it in production behind a reverse proxy."


@pytest.fixture
def site(fake_site: SiteFake, settings: SettingsWrapper) -> SiteFake:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]  # the fake site lives on loopback
    return fake_site


def _serve(site: SiteFake, path: str, title: str, text: str) -> str:
    site.overrides[path] = Reply(200, page_html(title, [text, SHARED]).encode(), {"Content-Type": "text/html"})
    return f"{site.base_url}{path}"


def _page(capture: DjangoCaptureOnCommitCallbacks, guru: Guru, site: SiteFake, path: str, text: str) -> DataSource:
    source = index_source(capture, guru, SourceKind.WEBSITE, _serve(site, path, path.strip("/").title(), text))
    assert source.status == SourceStatus.INDEXED and source.chunk_count == 1  # one chunk: counts are exact
    return source


def _ask(guru: Guru, question: str) -> TermFrequencies:
    return term_frequencies(guru.pk, query_terms(question))


def test_counts_over_two_sources(
    guru: Guru, collection: str, site: SiteFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    _page(django_capture_on_commit_callbacks, guru, site, "/scheduler", "The scheduler runs cron jobs hourly.")
    _page(django_capture_on_commit_callbacks, guru, site, "/webhooks", "Webhooks deliver signed events.")
    found = _ask(guru, "Scheduler deployment in production with graphql?")
    assert found.complete and found.chunks == 2
    assert found.df == {"scheduler": 1, "deployment": 2, "production": 2, "graphql": 0}


def test_a_reindex_with_changed_text_replaces_the_counts(
    guru: Guru, collection: str, site: SiteFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = _page(django_capture_on_commit_callbacks, guru, site, "/guide", "The scheduler runs cron jobs.")
    _serve(site, "/guide", "Guide", "Kubernetes operators reconcile clusters.")
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=source)
    source.refresh_from_db()
    assert SourceTermStats.objects.get(source=source).generation == source.indexed_generation
    found = _ask(guru, "scheduler kubernetes production")
    assert found.complete and found.df == {"scheduler": 0, "kubernet": 1, "production": 1}


def test_deleting_a_source_removes_its_counts(
    guru: Guru, collection: str, site: SiteFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    kept = _page(django_capture_on_commit_callbacks, guru, site, "/scheduler", "The scheduler runs cron jobs.")
    gone = _page(django_capture_on_commit_callbacks, guru, site, "/webhooks", "Webhooks deliver signed events.")
    with django_capture_on_commit_callbacks(execute=True):
        source_delete(source=gone)
    assert not SourceTerm.objects.exclude(source=kept).exists() and SourceTermStats.objects.get().source == kept
    found = _ask(guru, "webhooks production")
    assert found.complete and found.chunks == 1 and found.df == {"webhook": 0, "production": 1}


def test_recovery_counts_sources_without_current_counts(
    guru: Guru, collection: str, site: SiteFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    old = _page(django_capture_on_commit_callbacks, guru, site, "/scheduler", "The scheduler runs cron jobs.")
    stale = _page(django_capture_on_commit_callbacks, guru, site, "/webhooks", "Webhooks deliver signed events.")
    # As if `old` was indexed before counts existed, and `stale`'s recount was lost after a re-index.
    SourceTerm.objects.filter(source=old).delete()
    SourceTermStats.objects.filter(source=old).delete()
    SourceTermStats.objects.filter(source=stale).update(generation=(stale.indexed_generation or 0) + 7)
    found = _ask(guru, "scheduler webhooks")
    assert not found.complete and found.chunks == 1 and found.df == {"scheduler": 0, "webhook": 1}
    with django_capture_on_commit_callbacks(execute=True):
        assert term_stats_recover() == 2
    found = _ask(guru, "scheduler webhooks")
    assert found.complete and found.chunks == 2 and found.df == {"scheduler": 1, "webhook": 1}
    with django_capture_on_commit_callbacks(execute=True):
        assert term_stats_recover() == 0


def test_the_selector_makes_two_queries(
    guru: Guru, collection: str, site: SiteFake, django_assert_max_num_queries: DjangoAssertNumQueries,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    for i in range(3):
        _page(django_capture_on_commit_callbacks, guru, site, f"/page{i}", f"Topic {i} of the scheduler guide.")
    with django_assert_max_num_queries(2):
        found = _ask(guru, "scheduler guide topic graphql subscriptions")
    assert found.chunks == 3 and found.df["scheduler"] == 3 and found.df["graphql"] == 0


def test_a_repository_sync_in_place_is_recounted(
    guru: Guru, collection: str, tmp_path: Path, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.OPENGURU_GIT_ALLOW_FILE_URLS = True
    repo = init_repo(tmp_path / "origin", {"README.md": "# Pipeline\n\nZebras graze here.\n",
                                           "docs/guide.md": "# Guide\n\nThe flamingo setting.\n"}, branch="trunk")
    with django_capture_on_commit_callbacks(execute=True):
        source = source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=repo.as_uri(), allow_local=True)
    assert _ask(guru, "zebra flamingo heron").df == {"zebra": 1, "flamingo": 1, "heron": 0}
    write_files(repo, {"src/birds.md": "Herons wade.\n"})
    git(repo, "rm", "-q", "docs/guide.md")
    commit_all(repo)
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=DataSource.objects.get(pk=source.pk))
    found = _ask(guru, "zebra flamingo heron")
    assert found.complete and found.df == {"zebra": 1, "flamingo": 0, "heron": 1}


def test_a_word_one_typo_from_a_counted_term_is_misspelt_not_absent(
    guru: Guru, collection: str, site: SiteFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    _page(django_capture_on_commit_callbacks, guru, site, "/scheduler", "The scheduler runs crontab entries hourly.")
    # "schedulre" swaps two letters, "crontabb" adds one; "memcach" and "kafka" are nowhere near a counted term.
    assert misspelt_terms(guru.pk, ["schedulre", "crontabb", "memcach", "kafka"]) == {"schedulre", "crontabb"}
    assert misspelt_terms(guru.pk, []) == set()
