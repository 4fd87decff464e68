"""The public summary page /g/<slug>/summary/: the guru's summary, then each source's, under the page's access rule."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from backend.gurus.models import Guru
from backend.sources.models import DataSource
from backend.sources.summary_selectors import EXTRACT_LABEL
from tests.factories import DataSourceFactory, GuruFactory, UserFactory
from tests.support.summary_rows import MODEL, guru_root, source_root

pytestmark = pytest.mark.django_db


def _guru(**fields: Any) -> Guru:
    guru: Guru = GuruFactory(slug="docs", name="Docs Guru", **fields)
    return guru


def _source(guru: Guru, title: str, **fields: Any) -> DataSource:
    source: DataSource = DataSourceFactory(guru=guru, title=title, url=f"https://docs.example.com/{title.lower()}",
                                           **fields)
    return source


def test_a_public_guru_shows_its_summary_then_each_sources(client: Client) -> None:
    guru = _guru()
    guide, notes = _source(guru, "Guide"), _source(guru, "Notes", private=True)
    roots = [source_root(guide, "The guide explains retries.", extractive=True),
             source_root(notes, "The notes list <b>known</b> bugs.")]
    guru_root(guru, "Docs Guru covers retries\nand known bugs.", roots)

    response = client.get(reverse("answering:guru-summary", args=["docs"]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<p>Docs Guru covers retries<br>and known bugs.</p>" in html  # line breaks kept, text escaped
    assert f"Summary by {MODEL}" in html and EXTRACT_LABEL in html
    assert "The guide explains retries." in html and 'href="https://docs.example.com/guide"' in html
    assert "&lt;\u200bb&gt;known" in html and "<b>known" not in html  # neutralised, then escaped
    assert "https://docs.example.com/notes" not in html  # a private source is shown without its link
    guide_at, notes_at = html.index(f'id="source-{guide.pk}"'), html.index(f'id="source-{notes.pk}"')
    assert html.index("Docs Guru covers") < guide_at < notes_at  # the guru's summary, then its sources by title


def test_no_summary_yet_shows_a_friendly_sentence(client: Client) -> None:
    guru = _guru()
    _source(guru, "Guide")
    html = client.get("/g/docs/summary/").content.decode()
    assert "Docs Guru has no summary yet." in html and "Its sources" not in html


def test_a_private_guru_is_for_its_maintainers_only(client: Client) -> None:
    guru = _guru(private=True)
    source_root(_source(guru, "Guide"), "Secret plans.", is_root=True)
    refused = client.get("/g/docs/summary/")
    assert refused.status_code == 403 and b"Secret plans." not in refused.content
    assert client.get("/g/no-such-guru/summary/").status_code == 404

    keeper = UserFactory(username="keeper")
    guru.maintainers.add(keeper)
    client.force_login(keeper)
    shown = client.get("/g/docs/summary/")
    assert shown.status_code == 200 and b"Secret plans." in shown.content


def test_an_inactive_guru_has_no_summary_page(client: Client) -> None:
    _guru(active=False)
    assert client.get("/g/docs/summary/").status_code == 404
